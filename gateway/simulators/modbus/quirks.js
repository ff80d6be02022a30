'use strict';

/**
 * Quirk modes of the Modbus simulators: a device that is deaf for a while after a connection opens, or
 * after its own reply. Real ones do this (serial servers that start their serial side after the TCP
 * accept, PLCs whose Modbus task starts a cycle later, RS-485 slaves still turning their transceiver
 * around), and a master that does not wait gets a timeout for every first request after a connect, or
 * for every second request on a busy line. A request that comes too soon is dropped unanswered and not
 * executed, and counted: stats.tooSoonAfterConnect, stats.tooSoonAfterReply. The client settings that
 * fix the symptom are delayAfterConnectMs and interFrameDelayMs (drivers/connection.js).
 *
 * Options (ms, or durations such as "200ms"):
 *   needsDelayAfterConnectMs  requests within this long after their connection opened are dropped
 *   needsInterFrameDelayMs    requests within this long after the previous reply on the same
 *                             connection (or serial line) are dropped
 */

const { parseDuration } = require('../../base/quantities');
const { invalid } = require('./validate');
// The simulated need never exceeds the pause a client can be told to keep, so every quirk has its fix
const { MAX_QUIRK_DELAY_MS: MAX_QUIRK_MS } = require('../../drivers/connection-options');

/**
 * @typedef {object} Quirks
 * @property {number} afterConnectMs a request sooner than this after the connection opened is dropped
 * @property {number} interFrameMs a request sooner than this after the previous reply is dropped
 */

/**
 * Checks the quirk options of a simulator.
 * @param {Record<string, any>} opts the simulator's options
 * @param {{connections: boolean}} where whether the simulator has connections (a serial line has none to open)
 * @returns {Quirks|null} null when neither is set: the simulator's hot path then checks nothing
 * @throws {import('../../base/errors').NinesError} NINES_ERR_INVALID_ARG naming the option
 */
function parseQuirks (opts, { connections }) {
  const afterConnectMs = quirkMs(opts.needsDelayAfterConnectMs, 'needsDelayAfterConnectMs');
  const interFrameMs = quirkMs(opts.needsInterFrameDelayMs, 'needsInterFrameDelayMs');
  if (afterConnectMs !== 0 && !connections) {
    invalid('needsDelayAfterConnectMs', opts.needsDelayAfterConnectMs, '0 on a serial line, which has no connection to open (use it with the TCP or RTU-over-TCP simulator)');
  }
  return afterConnectMs === 0 && interFrameMs === 0 ? null : { afterConnectMs, interFrameMs };
}

/** @param {unknown} v @param {string} field @returns {number} ms */
function quirkMs (v, field) {
  if (v === undefined) return 0;
  let n = v;
  if (typeof v === 'string') {
    try { n = parseDuration(v, field); } catch { invalid(field, v, `a whole number of ms from 0 to ${MAX_QUIRK_MS} or a duration such as "20ms"`); }
  }
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > MAX_QUIRK_MS) invalid(field, v, `a whole number of ms from 0 to ${MAX_QUIRK_MS} or a duration such as "20ms"`);
  return /** @type {number} */ (n);
}

/**
 * Whether a request must be dropped for coming too soon; counts it when so.
 * @param {Quirks} q
 * @param {number} now performance.now() ms when the request arrived
 * @param {number} openedAt when its connection opened (ms); -Infinity on a serial line
 * @param {number} lastReplyAt when the previous reply on its connection or line went out (ms); -Infinity before the first
 * @param {{tooSoonAfterConnect: number, tooSoonAfterReply: number}} stats
 * @returns {boolean}
 */
function tooSoon (q, now, openedAt, lastReplyAt, stats) {
  if (now - openedAt < q.afterConnectMs) {
    stats.tooSoonAfterConnect++;
    return true;
  }
  if (now - lastReplyAt < q.interFrameMs) {
    stats.tooSoonAfterReply++;
    return true;
  }
  return false;
}

module.exports = { parseQuirks, tooSoon, MAX_QUIRK_MS, QUIRK_OPTIONS: Object.freeze(['needsDelayAfterConnectMs', 'needsInterFrameDelayMs']) };
