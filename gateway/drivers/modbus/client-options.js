'use strict';

/**
 * Options of a ModbusClient, checked once in the constructor: every error names the option, the value
 * and the rule (NINES_ERR_INVALID_ARG). Unknown options are errors too: a typo such as `timeout: 500`
 * must not silently run with the default.
 */

const { NinesError } = require('../../base/errors');
const C = require('../../base/constants');

/** Longest delay setTimeout honours (2^31-1 ms); longer ones fire at once */
const MAX_TIMER_MS = 2147483647;

/** After a timeout on RTU, the line must stay quiet this long before the next request (a late reply may still come) */
const RTU_DRAIN_MS = 50;
/** RTU broadcast (unit 0) writes get no reply; the bus is left quiet this long after one (Modbus over Serial Line §2.4.1 "turnaround delay") */
const RTU_TURNAROUND_MS = 100;
/** TCP keep-alive probe delay */
const TCP_KEEPALIVE_MS = 10000;

/**
 * @typedef {object} ClientOptions
 * @property {number} [timeoutMs=1000] per-request timeout, from the request() call to the complete reply
 * @property {number} [connectTimeoutMs=5000] per connection attempt
 * @property {number} [queueMax=64] requests that may wait behind the one in flight; more are rejected (NINES_ERR_QUEUE_FULL)
 * @property {boolean} [reconnect=true] reconnect in the background after a failed connect or a drop
 * @property {{initialMs?: number, maxMs?: number}} [backoff] reconnect delays (capped exponential with jitter)
 * @property {() => number} [random=Math.random] jitter source, injectable for tests
 * @property {number} [keepAliveMs=10000] TCP keep-alive initial delay
 * @property {number} [silenceUs] RTU inter-frame gap (t3.5) enforced between frames; default from the baud rate
 * @property {number} [drainMs=50] RTU: quiet time required after a timeout before the next request
 * @property {number} [turnaroundMs=100] RTU: quiet time after a broadcast (unit 0) write
 * @property {() => Function} [loadSerialPort] RTU seam: returns the SerialPort class (default: require('serialport').SerialPort, loaded lazily)
 */

const DEFAULTS = Object.freeze({
  timeoutMs: C.DEFAULT_TIMEOUT_MS,
  connectTimeoutMs: C.DEFAULT_CONNECT_TIMEOUT_MS,
  queueMax: C.DEFAULT_QUEUE_MAX,
  reconnect: true,
  backoff: undefined,
  random: Math.random,
  keepAliveMs: TCP_KEEPALIVE_MS,
  silenceUs: undefined,
  drainMs: RTU_DRAIN_MS,
  turnaroundMs: RTU_TURNAROUND_MS,
  loadSerialPort: undefined
});

/** @returns {never} */
function fail (field, value, rule) {
  throw new NinesError('NINES_ERR_INVALID_ARG', `${field} ${rule}; got ${typeof value === 'string' ? JSON.stringify(value) : String(value)}`,
    { field, value: typeof value === 'function' ? 'function' : value, rule });
}

/** @returns {number} */
function intIn (v, field, lo, hi) {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi) fail(field, v, `must be an integer from ${lo} to ${hi}`);
  return v;
}

/**
 * Checks a per-request timeout.
 * @param {unknown} v
 * @param {string} [field]
 * @returns {number} ms
 */
function checkTimeoutMs (v, field = 'timeoutMs') {
  return intIn(v, field, 1, MAX_TIMER_MS);
}

/**
 * Validates client options and fills in defaults.
 * @param {ClientOptions} [opts]
 * @returns {Required<Omit<ClientOptions, 'backoff'|'silenceUs'|'loadSerialPort'>> &
 *   {backoff: {initialMs: number, maxMs: number}, silenceUs?: number, loadSerialPort?: () => Function}}
 * @throws {NinesError} NINES_ERR_INVALID_ARG
 */
function normalizeOptions (opts) {
  if (opts === undefined || opts === null) opts = {};
  if (typeof opts !== 'object' || Array.isArray(opts)) fail('options', opts, 'must be an object');
  for (const key of Object.keys(opts)) {
    if (!(key in DEFAULTS) && opts[key] !== undefined) fail(key, opts[key], `is not a Modbus client option (known: ${Object.keys(DEFAULTS).join(', ')})`);
  }
  const o = { ...DEFAULTS };
  for (const key of Object.keys(DEFAULTS)) if (opts[key] !== undefined) o[key] = opts[key];

  checkTimeoutMs(o.timeoutMs);
  intIn(o.connectTimeoutMs, 'connectTimeoutMs', 1, MAX_TIMER_MS);
  intIn(o.queueMax, 'queueMax', 0, 1e6);
  if (typeof o.reconnect !== 'boolean') fail('reconnect', o.reconnect, 'must be true or false');
  if (typeof o.random !== 'function') fail('random', o.random, 'must be a function returning a number in [0, 1)');
  intIn(o.keepAliveMs, 'keepAliveMs', 0, MAX_TIMER_MS);
  intIn(o.drainMs, 'drainMs', 0, 60000);
  intIn(o.turnaroundMs, 'turnaroundMs', 0, 60000);
  if (o.silenceUs !== undefined) intIn(o.silenceUs, 'silenceUs', 0, 1e6);
  if (o.loadSerialPort !== undefined && typeof o.loadSerialPort !== 'function') fail('loadSerialPort', o.loadSerialPort, 'must be a function returning the SerialPort class');

  const b = o.backoff === undefined ? {} : o.backoff;
  if (b === null || typeof b !== 'object' || Array.isArray(b)) fail('backoff', b, 'must be an object {initialMs, maxMs}');
  for (const key of Object.keys(b)) {
    if (key !== 'initialMs' && key !== 'maxMs' && b[key] !== undefined) fail(`backoff.${key}`, b[key], 'is not a backoff option (known: initialMs, maxMs)');
  }
  const initialMs = b.initialMs === undefined ? C.BACKOFF_INITIAL_MS : intIn(b.initialMs, 'backoff.initialMs', 1, MAX_TIMER_MS);
  const maxMs = b.maxMs === undefined ? Math.max(initialMs, C.BACKOFF_MAX_MS) : intIn(b.maxMs, 'backoff.maxMs', 1, MAX_TIMER_MS);
  if (maxMs < initialMs) fail('backoff.maxMs', maxMs, `must be at least backoff.initialMs (${initialMs})`);
  o.backoff = { initialMs, maxMs };
  return o;
}

module.exports = { normalizeOptions, checkTimeoutMs, MAX_TIMER_MS, RTU_DRAIN_MS, RTU_TURNAROUND_MS, TCP_KEEPALIVE_MS };
