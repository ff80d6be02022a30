'use strict';

/**
 * Options every driver connection shares (timeoutMs, connectTimeoutMs, queueMax, reconnect, backoff,
 * random, and the line quirks interFrameDelayMs and delayAfterConnectMs), checked once in the client's constructor. Each protocol adds its own options and checks
 * them itself (ascii/client-options.js, modbus/client-options.js). Every bad value is a
 * NINES_ERR_INVALID_ARG naming the option, the value and the rule; unknown options are errors too,
 * so a typo such as `timeout: 500` never runs silently with the default.
 *
 * Every duration option, shared or a protocol's, takes a number of ms or a string such as "500ms" or
 * "1s", read by the one duration reader (base/duration-field.js) as a device's are: clients are
 * configured by hand from flows and YAML. Durations must come to whole milliseconds (microseconds for
 * the options counted in µs); the checked options hold numbers.
 */

const { NinesError } = require('../base/errors');
const C = require('../base/constants');
const { readDuration } = require('../base/duration-field');
const { intIn: checkInt } = require('../base/arg-checks');

/** Longest delay setTimeout honours (2^31-1 ms); longer ones fire at once */
const MAX_TIMER_MS = 2147483647;

/** The shared options and their defaults (backoff: filled in by normalizeConnectionOptions) */
const COMMON_DEFAULTS = Object.freeze({
  timeoutMs: C.DEFAULT_TIMEOUT_MS,
  connectTimeoutMs: C.DEFAULT_CONNECT_TIMEOUT_MS,
  queueMax: C.DEFAULT_QUEUE_MAX,
  reconnect: true,
  backoff: undefined,
  random: Math.random,
  // Line quirks (connection.js): a pause after each request before the next write, and one after
  // a connect before the first; 0: none
  interFrameDelayMs: 0,
  delayAfterConnectMs: 0
});

/** Longest line quirk delay, ms: beyond a minute a device is not one that needs a pause, it is down (as devices/spec.js) */
const MAX_QUIRK_DELAY_MS = 60000;

/** Upper bound of queueMax: a bigger queue is a leak, not a buffer */
const QUEUE_MAX_LIMIT = 1e6;

/**
 * The validation error for one option.
 * @param {string} field the option, e.g. "backoff.maxMs"
 * @param {unknown} value
 * @param {string} rule what a valid value looks like
 * @returns {NinesError} NINES_ERR_INVALID_ARG
 */
function invalidOption (field, value, rule) {
  return new NinesError('NINES_ERR_INVALID_ARG', `${field} ${rule}; got ${typeof value === 'string' ? JSON.stringify(value) : String(value)}`,
    { field, value: typeof value === 'function' ? 'function' : value, rule });
}

/**
 * Throws the validation error for one option.
 * @param {string} field @param {unknown} value @param {string} rule
 * @returns {never}
 */
function fail (field, value, rule) {
  throw invalidOption(field, value, rule);
}

/**
 * An integer in [lo, hi].
 * @param {unknown} v
 * @param {string} field
 * @param {number} lo
 * @param {number} hi
 * @returns {number}
 */
function intIn (v, field, lo, hi) {
  return checkInt(v, field, lo, hi, invalidOption);
}

/**
 * A duration option: an integer in [lo, hi] of its unit, given as that number or as a duration string
 * (base/duration-field.js readDuration, whose rule the refusal states).
 * @param {unknown} v a number (in the option's unit) or a string such as "500ms", "1.5s"
 * @param {string} field
 * @param {number} lo
 * @param {number} hi
 * @param {number} [perMs=1] units per millisecond: 1 for an option in ms, 1000 for one in µs
 * @returns {number} the duration in the option's unit
 * @throws {NinesError} NINES_ERR_INVALID_ARG naming the field
 */
function durationIn (v, field, lo, hi, perMs = 1) {
  return readDuration(v, field, { lo, hi, perMs }, invalidOption);
}

/**
 * A timeout, as an option or per request: a duration (ms or a string such as "500ms") of whole ms
 * from 1 to MAX_TIMER_MS. A per-request timeout given as a whole number in range is taken without parsing.
 * @param {unknown} v
 * @param {string} [field]
 * @returns {number} ms
 */
function timeoutArg (v, field = 'timeoutMs') {
  return durationIn(v, field, 1, MAX_TIMER_MS);
}

/**
 * Checks a timeout in ms: an integer from 1 to MAX_TIMER_MS.
 * @param {unknown} v
 * @param {string} [field]
 * @returns {number} ms
 */
function checkTimeoutMs (v, field = 'timeoutMs') {
  return intIn(v, field, 1, MAX_TIMER_MS);
}

/**
 * Checks the shared options, fills in defaults, and hands the protocol's own options back with their
 * defaults filled in but unchecked (the protocol checks them).
 * @param {object|undefined|null} opts what the caller passed
 * @param {string} kind names the client in the unknown-option message, e.g. "Modbus client"
 * @param {Record<string, unknown>} protocolDefaults the protocol's own options and their defaults
 * @returns {{timeoutMs: number, connectTimeoutMs: number, queueMax: number, reconnect: boolean,
 *   backoff: {initialMs: number, maxMs: number}, random: () => number} & Record<string, any>}
 * @throws {NinesError} NINES_ERR_INVALID_ARG
 */
function normalizeConnectionOptions (opts, kind, protocolDefaults) {
  if (opts === undefined || opts === null) opts = {};
  if (typeof opts !== 'object' || Array.isArray(opts)) fail('options', opts, 'must be an object');
  const defaults = { ...COMMON_DEFAULTS, ...protocolDefaults };
  for (const key of Object.keys(opts)) {
    if (!(key in defaults) && opts[key] !== undefined) fail(key, opts[key], `is not ${article(kind)} ${kind} option (known: ${Object.keys(defaults).join(', ')})`);
  }
  const o = { ...defaults };
  for (const key of Object.keys(defaults)) if (opts[key] !== undefined) o[key] = opts[key];

  o.timeoutMs = timeoutArg(o.timeoutMs);
  o.connectTimeoutMs = timeoutArg(o.connectTimeoutMs, 'connectTimeoutMs');
  intIn(o.queueMax, 'queueMax', 0, QUEUE_MAX_LIMIT);
  if (typeof o.reconnect !== 'boolean') fail('reconnect', o.reconnect, 'must be true or false');
  if (typeof o.random !== 'function') fail('random', o.random, 'must be a function returning a number in [0, 1)');
  o.backoff = checkBackoff(o.backoff);
  o.interFrameDelayMs = durationIn(o.interFrameDelayMs, 'interFrameDelayMs', 0, MAX_QUIRK_DELAY_MS);
  o.delayAfterConnectMs = durationIn(o.delayAfterConnectMs, 'delayAfterConnectMs', 0, MAX_QUIRK_DELAY_MS);
  // A request waits the pause out inside its own timeout: as long a pause would time every one out
  if (o.interFrameDelayMs >= o.timeoutMs) fail('interFrameDelayMs', o.interFrameDelayMs, `must be shorter than timeoutMs (${o.timeoutMs}): a request waits the pause out inside its own timeout`);
  return o;
}

/**
 * @param {unknown} b the backoff option
 * @returns {{initialMs: number, maxMs: number}}
 */
function checkBackoff (b) {
  if (b === undefined) b = {};
  if (b === null || typeof b !== 'object' || Array.isArray(b)) fail('backoff', b, 'must be an object {initialMs, maxMs}');
  for (const key of Object.keys(b)) {
    if (key !== 'initialMs' && key !== 'maxMs' && b[key] !== undefined) fail(`backoff.${key}`, b[key], 'is not a backoff option (known: initialMs, maxMs)');
  }
  const initialMs = b.initialMs === undefined ? C.BACKOFF_INITIAL_MS : timeoutArg(b.initialMs, 'backoff.initialMs');
  // Without maxMs, a large initialMs raises the cap instead of failing: the caller asked for slow retries
  const maxMs = b.maxMs === undefined ? Math.max(initialMs, C.BACKOFF_MAX_MS) : timeoutArg(b.maxMs, 'backoff.maxMs');
  if (maxMs < initialMs) fail('backoff.maxMs', maxMs, `must be at least backoff.initialMs (${initialMs})`);
  return { initialMs, maxMs };
}

/** @param {string} word @returns {'a'|'an'} */
function article (word) {
  return /^[AEIOU]/i.test(word) ? 'an' : 'a';
}

module.exports = { normalizeConnectionOptions, checkTimeoutMs, timeoutArg, durationIn, intIn, fail, MAX_TIMER_MS, MAX_QUIRK_DELAY_MS, COMMON_DEFAULTS };
