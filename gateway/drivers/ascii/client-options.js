'use strict';

/**
 * Option checking for AsciiClient, at the boundary: each bad value is a NINES_ERR_INVALID_ARG
 * naming the field, the value and the rule.
 */

const { NinesError } = require('../../base/errors');
const C = require('../../base/constants');
const { parseDuration } = require('../../base/units');

/** setTimeout's ceiling: longer delays fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;
const AFTER_TIMEOUT = ['reconnect', 'drain'];

function invalidArg (field, value, rule) {
  return new NinesError('NINES_ERR_INVALID_ARG', `${field} ${rule}; got ${JSON.stringify(value)}`, { field, value });
}

/**
 * A timeout: number of ms or a duration string ("500ms", "1s"), > 0 and within timer range.
 * @param {number|string} v
 * @param {string} field
 * @returns {number} ms
 */
function timeoutArg (v, field) {
  const ms = parseDuration(v, field);
  if (ms <= 0 || ms > MAX_TIMER_MS) throw invalidArg(field, v, `must be more than 0 and at most ${MAX_TIMER_MS} ms`);
  return ms;
}

/**
 * @typedef {object} AsciiClientOptions
 * @property {number} timeoutMs per-request timeout, from request() to the reply's CR
 * @property {number} connectTimeoutMs
 * @property {number} queueMax requests allowed to wait behind the one in flight
 * @property {boolean} reconnect retry in the background with backoff
 * @property {{initialMs: number, maxMs: number}} backoff
 * @property {() => number} random jitter source
 * @property {'reconnect'|'drain'} afterTimeout what makes the line trustworthy again after an
 *   unanswered request (see client.js)
 * @property {number} drainMs how long to wait for a late reply after a timeout
 */

/**
 * Checks and completes client options.
 * @param {object} [opts]
 * @returns {AsciiClientOptions}
 */
function normalizeOptions (opts = {}) {
  if (opts === null || typeof opts !== 'object') throw invalidArg('options', opts, 'must be an object');
  const o = {
    timeoutMs: timeoutArg(opts.timeoutMs ?? C.DEFAULT_TIMEOUT_MS, 'timeoutMs'),
    connectTimeoutMs: timeoutArg(opts.connectTimeoutMs ?? C.DEFAULT_CONNECT_TIMEOUT_MS, 'connectTimeoutMs'),
    queueMax: opts.queueMax ?? C.DEFAULT_QUEUE_MAX,
    reconnect: opts.reconnect ?? true,
    backoff: opts.backoff ?? {},
    random: opts.random ?? Math.random,
    afterTimeout: opts.afterTimeout ?? 'reconnect',
    drainMs: parseDuration(opts.drainMs ?? C.ASCII_DRAIN_MS, 'drainMs')
  };
  if (!Number.isInteger(o.queueMax) || o.queueMax < 0) throw invalidArg('queueMax', o.queueMax, 'must be an integer >= 0');
  if (typeof o.reconnect !== 'boolean') throw invalidArg('reconnect', o.reconnect, 'must be true or false');
  if (typeof o.random !== 'function') throw invalidArg('random', String(o.random), 'must be a function returning a number in [0, 1)');
  if (!AFTER_TIMEOUT.includes(o.afterTimeout)) throw invalidArg('afterTimeout', o.afterTimeout, `must be one of ${AFTER_TIMEOUT.join(', ')}`);
  if (o.drainMs > MAX_TIMER_MS) throw invalidArg('drainMs', opts.drainMs, `must be at most ${MAX_TIMER_MS} ms`);
  if (o.backoff === null || typeof o.backoff !== 'object') throw invalidArg('backoff', o.backoff, 'must be an object {initialMs, maxMs}');
  const initialMs = timeoutArg(o.backoff.initialMs ?? C.BACKOFF_INITIAL_MS, 'backoff.initialMs');
  const maxMs = timeoutArg(o.backoff.maxMs ?? C.BACKOFF_MAX_MS, 'backoff.maxMs');
  if (maxMs < initialMs) throw invalidArg('backoff.maxMs', maxMs, `must be >= backoff.initialMs (${initialMs})`);
  o.backoff = { initialMs, maxMs };
  return o;
}

module.exports = { normalizeOptions, timeoutArg };
