'use strict';

/**
 * Defaults and limits of the Sparkplug B edge node, each with one home. The config
 * (runtime/config/check-sparkplug.js) checks `mqtt.sparkplug` against these and fills them in.
 */
module.exports = Object.freeze({
  /**
   * DATA messages held while the primary host is offline (mqtt.sparkplug.hold.maxMessages), in
   * memory when the gateway has no disk spool: at 100 messages/s, about 16 minutes. Past it the
   * oldest go, counted.
   */
  HOLD_MAX_MESSAGES: 100000,
  HOLD_MAX_MESSAGES_LIMIT: 10000000,
  /**
   * Bytes they may take (mqtt.sparkplug.hold.maxBytes): in memory, or on disk in the `sparkplug`
   * folder of mqtt.spool.dir, on top of mqtt.spool.maxBytes
   */
  HOLD_MAX_BYTES: 64 * 1024 * 1024,
  HOLD_MIN_BYTES: 1024 * 1024,
  /** The folder of mqtt.spool.dir that holds Sparkplug DATA and the alias map */
  HOLD_DIR: 'sparkplug',
  /**
   * A replay waits at most this long for a device of a held message to be born (a gateway that
   * restarts with held DATA on disk births before its first reads); live DATA waits meanwhile.
   * Past it, or once the device is down, its held messages are dropped, counted.
   */
  HOLD_REPLAY_WAIT_MS: 10000
});
