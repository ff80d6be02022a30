'use strict';

/**
 * Options of an AsciiClient, checked once in the constructor: the shared ones in
 * ../connection-options.js, the ASCII one (how long to wait for the reply to a timed-out command) here. Every bad
 * value is a NINES_ERR_INVALID_ARG naming the field, the value and the rule; unknown options are
 * errors too. Durations are numbers of ms or strings such as "500ms", as for every driver (../connection-options.js).
 */

const C = require('../../base/constants');
const { normalizeConnectionOptions, durationIn, MAX_TIMER_MS } = require('../connection-options');

// No afterTimeout option: after an unanswered command the client always reconnects before the next
// one unless the owed reply has come (client.js rules 2, 3). Keeping the connection instead could hand
// a late reply to the next command (issue 12), so there is nothing to choose.
const ASCII_DEFAULTS = Object.freeze({
  drainMs: C.ASCII_DRAIN_MS
});

/**
 * @typedef {object} AsciiClientOptions
 * @property {number} timeoutMs per-request timeout, from request() to the reply's CR
 * @property {number} connectTimeoutMs
 * @property {number} queueMax requests allowed to wait behind the one in flight
 * @property {boolean} reconnect retry in the background with backoff
 * @property {{initialMs: number, maxMs: number}} backoff
 * @property {() => number} random jitter source
 * @property {number} interFrameDelayMs the line rests this long after each command ends (../connection.js)
 * @property {number} delayAfterConnectMs nothing is written until this long after a connect (../connection.js)
 * @property {number} drainMs how long to wait for the reply to a timed-out command before the
 *   client reconnects (see client.js rules 2 and 3)
 */

/**
 * Checks and completes client options.
 * @param {object} [opts]
 * @returns {AsciiClientOptions}
 * @throws {NinesError} NINES_ERR_INVALID_ARG
 */
function normalizeOptions (opts) {
  const o = normalizeConnectionOptions(opts, 'ASCII client', ASCII_DEFAULTS);
  o.drainMs = durationIn(o.drainMs, 'drainMs', 0, MAX_TIMER_MS);
  return o;
}

module.exports = { normalizeOptions };
