'use strict';

const C = require('../../base/constants');
const { NAME_LEVEL } = require('../../base/names');

/**
 * Defaults and limits of MQTT: the gateway's publisher, its embedded broker and its write commands,
 * each with one home. Units are in the names. The config (runtime/config/) checks its `mqtt`
 * section against these and fills them in; the modules here use them when no config is given.
 */
module.exports = Object.freeze({
  /** The prefix may have several levels (`site-a/nines`), each as a name is (base/names.js), but no wildcards or empty levels */
  PREFIX_PATTERN: `^${NAME_LEVEL}(/${NAME_LEVEL}){0,7}$`,

  MQTT_EMBEDDED_HOST: '127.0.0.1',
  MQTT_EMBEDDED_PORT: C.MQTT_DEFAULT_PORT,
  MQTT_QOS: 1,
  MQTT_PROTOCOL_VERSION: 4,
  /** Latency summaries kept while the broker is away; the oldest are dropped (and counted) past it */
  MQTT_BUFFER_MAX: 1000,
  MQTT_BUFFER_MAX_LIMIT: 1000000,
  /** Bytes those summaries may take in memory; likewise for the values (message-store.js) */
  MQTT_BUFFER_MAX_BYTES: 64 * 1024 * 1024,
  /** The disk spool's cap when mqtt.spool gives none; half for summaries, half for values */
  MQTT_SPOOL_MAX_BYTES: 256 * 1000 * 1000,
  MQTT_SPOOL_MIN_BYTES: 1024 * 1024,
  /** At most one fdatasync round per this: a power loss loses at most this much of what was not yet published */
  MQTT_SPOOL_SYNC_MS: 100,
  MQTT_KEEPALIVE_MS: 30000,
  MQTT_CONNECT_TIMEOUT_MS: 10000,
  /** At most one error message per job per this window; the rest are counted into the next one */
  MQTT_ERRORS_MIN_INTERVAL_MS: 1000,
  MQTT_RECONNECT_INITIAL_MS: 500,
  MQTT_RECONNECT_MAX_MS: 30000,
  /**
   * Reports of one kind outside a job (the embedded broker's refusals, the spool's file errors) go
   * at most once per this window; the rest are counted into the report at its end
   */
  MQTT_REPORT_WINDOW_MS: 10000,
  /** How long the publisher's stop() may take: flush what waits, the retained `offline`, the DISCONNECT */
  MQTT_STOP_TIMEOUT_MS: 2000,
  /** Environment variable that may hold mqtt.password, so it need not sit in the file */
  MQTT_PASSWORD_ENV: 'NINES_MQTT_PASSWORD',
  /** Environment variable that may hold mqtt.embedded.password (the login the embedded broker asks of clients) */
  MQTT_EMBEDDED_PASSWORD_ENV: 'NINES_MQTT_EMBEDDED_PASSWORD',
  /**
   * Largest MQTT packet the embedded broker takes from a client (mqtt.embedded.maxPacketSize); a
   * connection sending a larger one is closed before its body arrives. The largest packet the
   * gateway's own summaries make is about 330 KiB (one encoded histogram of at most 256 KiB plus
   * 64 KiB of JSON, latency/summary.js), so 1 MiB leaves a margin of three; the gateway's own
   * client is not limited (it publishes what the gateway makes). Worst case held per client:
   * MQTT_MAX_INFLIGHT QoS 2 messages of this size awaiting PUBREL, 32 MiB.
   */
  MQTT_EMBEDDED_MAX_PACKET_BYTES: 1024 * 1024,
  /** mqtt.embedded.maxPacketSize at least this: a CONNECT with a long client id, user and password fits */
  MQTT_EMBEDDED_MIN_PACKET_BYTES: 1024,
  /** The MQTT limit itself: a Remaining Length of 268,435,455 plus the 5-byte fixed header */
  MQTT_EMBEDDED_MAX_PACKET_LIMIT: 268435460,
  /**
   * Open client connections of the embedded broker (mqtt.embedded.maxClients); more are closed at
   * accept and counted. A gateway serves a handful (its own publisher and Sparkplug session, a few
   * subscribers); 64 stays well under the process's file limit. The bound on memory clients can
   * make the broker hold is then 64 × 32 MiB (QoS 2 messages withheld from PUBREL, see above).
   */
  MQTT_EMBEDDED_MAX_CLIENTS: 64,
  MQTT_EMBEDDED_MAX_CLIENTS_LIMIT: 10000,
  /**
   * Messages the publisher hands to mqtt.js before their acknowledgement, and QoS 2 messages a
   * client of the embedded broker may have awaiting PUBREL (aedes' maxInflightInbound, 1000 by
   * itself): the same number, so the gateway's own publisher is never cut off by its own broker.
   */
  MQTT_MAX_INFLIGHT: 32,

  /**
   * Writes by tag over MQTT (mqtt.writes): commands that may wait per device, and the most time from
   * a command's arrival to the moment its write starts. Past either it is refused, never written
   * late: a setpoint half a minute old is a hazard. 2 s covers an operator's click and a device's
   * usual queue; at 50 writes/s a device drains 100 waiting commands in those same 2 s, so the
   * queue bound only bites on a flood.
   */
  MQTT_WRITES_QUEUE_MAX: 100,
  MQTT_WRITES_QUEUE_LIMIT: 10000,
  MQTT_WRITES_MAX_AGE_MS: 2000,
  MQTT_WRITES_MIN_AGE_MS: 10,
  MQTT_WRITES_MAX_AGE_LIMIT_MS: 60000,
  /** The write counters in the retained status are republished at most this often while they change */
  MQTT_WRITES_STATUS_MIN_INTERVAL_MS: 1000,

  /** Values are published at most this often per job unless values.maxRate says otherwise */
  VALUES_MAX_RATE_PER_SEC: require('../../jobs/limits').VALUES_MAX_RATE_PER_SEC
});
