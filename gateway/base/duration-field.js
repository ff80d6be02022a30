'use strict';

/**
 * The one reader of a bounded duration, wherever one enters: a driver's options, a device spec (and
 * a request's own timeout), the gateway config. Each edge words the refusal's message its own way
 * (it passes `invalid`), but the rule in it, and the hint on how to write a duration, are these.
 */

const { parseDuration, formatMs } = require('./quantities');
const { invalidArg } = require('./arg-checks');

/** How to write a duration, in every refusal of one that is not a duration at all */
const DURATION_HINT = 'use e.g. "500ms", "10s", "2m" or a number of milliseconds';
/** The rule of a value that is no duration */
const NOT_A_DURATION = `is not a duration; ${DURATION_HINT}`;

/**
 * @typedef {object} DurationBounds
 * @property {number} lo smallest value, in the field's unit
 * @property {number} [hi=Infinity] largest value, in the field's unit
 * @property {number} [perMs=1] units per millisecond: 1 for a field in ms, 1000 for one in µs
 * @property {boolean} [whole=true] whether it must come to a whole number of its unit (timers take whole ms)
 * @property {boolean} [zeroOk=false] whether 0 (off) is taken even below lo
 */

/**
 * Reads a duration: a number in the field's unit, or a string such as "500ms", "1.5s", "10us"
 * (base/quantities.js parseDuration), within its bounds.
 * @param {unknown} value as given
 * @param {string} field names it in the refusal
 * @param {DurationBounds} bounds
 * @param {(field: string, value: unknown, rule: string) => Error} [invalid] builds the refusal (default:
 *   base/arg-checks.js invalidArg); details.rule holds the rule
 * @returns {number} in the field's unit
 * @throws {Error} from invalid: NOT_A_DURATION, or the range rule ("must be a whole number of ms from 1ms to 1h")
 */
function readDuration (value, field, { lo, hi = Infinity, perMs = 1, whole = true, zeroOk = false }, invalid = invalidArg) {
  // the common case, a whole number in range, costs no parsing (per-request timeouts come this way)
  if (Number.isInteger(value) && /** @type {number} */ (value) >= lo && /** @type {number} */ (value) <= hi) return /** @type {number} */ (value);
  let n;
  // a number is in the field's own unit; parseDuration only checks it is finite and not negative
  try { n = parseDuration(/** @type {any} */ (value), field); } catch { throw invalid(field, value, NOT_A_DURATION); }
  // "1.1ms" in µs is 1100.0000000000002 in floating point: whole units stay whole
  if (typeof value === 'string' && perMs !== 1) n = Math.round(n * perMs * 1e6) / 1e6;
  if (zeroOk && n === 0) return 0;
  if ((whole && !Number.isInteger(n)) || n < lo || n > hi) throw invalid(field, value, rangeRule({ lo, hi, perMs, whole, zeroOk }));
  return n;
}

/**
 * The rule of a duration's bounds, as every edge states it.
 * @param {Required<DurationBounds>} b
 * @returns {string} e.g. "must be a whole number of ms from 1ms to 1h", "must be at least 100ms (or 0 to turn it off)"
 */
function rangeRule ({ lo, hi, perMs, whole, zeroOk }) {
  const unit = perMs === 1 ? 'ms' : 'µs';
  const show = perMs === 1 ? formatMs : (/** @type {number} */ x) => `${x}${unit}`;
  const range = hi === Infinity ? `at least ${show(lo)}` : `from ${show(lo)} to ${show(hi)}`;
  return `must be ${whole ? `a whole number of ${unit} ` : ''}${range}${zeroOk ? ' (or 0 to turn it off)' : ''}`;
}

module.exports = { readDuration, DURATION_HINT, NOT_A_DURATION };
