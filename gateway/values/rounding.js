'use strict';

/**
 * Engineering values without float noise (issue 21): a value is given to what its type and its
 * scale can hold, never to the digits binary arithmetic adds (70.10000000000001 for 701 × 0.1,
 * 71.30000305175781 for the float32 nearest 71.3). The rule:
 *
 * - a float32 is the shortest decimal that reads back as the same float32 (`Math.fround`): the
 *   float32 nearest 71.3 is 71.3. At most 9 significant digits, as every float32 needs. A float16
 *   likewise (at most 5 digits), except a whole one, given as it is (65504, not 65500).
 * - raw × scale + offset is the exact decimal result, as a number: the raw value (an integer, or the
 *   float's shortest decimal) carries d₁ decimals, the scale d₂, the offset d₃, and the value is
 *   rounded to max(d₁ + d₂, d₃) decimals, the most the exact product and sum can have. So 701 at
 *   0.1 is 70.1, 1012 at 0.05 is 50.6, 706 at 0.1 with offset -0.5 is 70.1, a float32 71.3 at 0.1
 *   is 7.13. The result is the double nearest the exact decimal: computed as one integer divided
 *   by a power of ten, both exact.
 * - where that integer would pass 2^52 (a float64 with 17 digits, an int64 beyond 2^52 / 10^d, a
 *   scale of 1e-20), the value is raw × scale + offset as binary arithmetic gives it: its error is
 *   then below the last digit the value can hold in any case.
 * - no scale and no offset: integers and float64 values are the raw value, untouched.
 *
 * Deadbands compare such values with a tolerance for the arithmetic's own error (exceedsDeadband),
 * so a step of exactly one deadband is never taken for more than the deadband, whatever the digits.
 */

const { f16round } = require('./float16');

/** Below 2^52 an integer times a power of ten ≤ 10^22 rounds to the right integer */
const EXACT_LIMIT = 2 ** 52;
/** 10^22 is the largest power of ten a double holds exactly */
const MAX_DECIMALS = 22;
/** Memo of decimals() for scales and offsets (a handful per plant); cleared past this size */
const MEMO_LIMIT = 1024;
const memo = new Map();

/**
 * Decimals of a number's shortest decimal form: 0.1 → 1, 0.05 → 2, 1e-7 → 7, 1.5e-7 → 8, 100 → 0.
 * @param {number} x finite
 * @returns {number}
 */
function decimals (x) {
  if (Number.isInteger(x)) return 0;
  const m = /^-?\d+(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(x));
  if (m === null) return MAX_DECIMALS + 1;
  return Math.max(0, (m[1] ? m[1].length : 0) - (m[2] ? Number(m[2]) : 0));
}

/** decimals() of a scale or an offset, remembered */
function decimalsOf (x) {
  let d = memo.get(x);
  if (d === undefined) {
    if (memo.size >= MEMO_LIMIT) memo.clear();
    d = decimals(x);
    memo.set(x, d);
  }
  return d;
}

/**
 * The shortest decimal that reads back as the same float32.
 * @param {number} raw a float32 value (as decoded: a double equal to a float32)
 * @returns {number}
 */
function shortestFloat32 (raw) {
  return shortest(raw, Math.fround, 9);
}

/**
 * The shortest decimal that reads back as the same half (float16): 0x3555 is 0.333251953125,
 * given as 0.3333. At most 5 significant digits, as every half needs. A whole half is given as it
 * is: every half from 1024 up is whole, and 65504 (0x7BFF) given as 65500 would read as a rounded
 * number, not the register's.
 * @param {number} raw a half's value
 * @returns {number}
 */
function shortestFloat16 (raw) {
  return Number.isInteger(raw) ? raw : shortest(raw, f16round, 5);
}

/** The fewest significant digits (up to maxDigits) that `round` takes back to raw */
function shortest (raw, round, maxDigits) {
  if (!Number.isFinite(raw) || raw === 0) return raw;
  const e = Math.floor(Math.log10(Math.abs(raw)));
  for (let p = 1; p <= maxDigits; p++) {
    const c = withDigits(raw, p, p - 1 - e);
    if (round(c) === raw) return c;
  }
  /* c8 ignore next */
  return raw;
}

/**
 * x to p significant digits, k of them after the point: numbers only where the power of ten is
 * exact (one rounding, one exact division or product: the double nearest the decimal), else text.
 * A value within a hair of a half digit may go to the other neighbour: the caller checks what it gets.
 */
function withDigits (x, p, k) {
  if (k >= 0 && k <= MAX_DECIMALS) return Math.round(x * 10 ** k) / 10 ** k;
  if (k < 0 && -k <= MAX_DECIMALS) return Math.round(x / 10 ** -k) * 10 ** -k;
  return Number(x.toPrecision(p));
}

/** x × 10^d as an integer, or NaN when it is not exactly one below EXACT_LIMIT */
function scaledInteger (x, d) {
  const n = x * 10 ** d;
  return Math.abs(n) < EXACT_LIMIT ? Math.round(n) : NaN;
}

/**
 * raw × scale + offset, to the decimals the raw value, the scale and the offset carry.
 * @param {number} raw an integer or a decimal (a float32 given by shortestFloat32 first)
 * @param {number} scale finite, not 0
 * @param {number} offset finite
 * @returns {number}
 */
function scaleExact (raw, scale, offset) {
  const plain = raw * scale + offset;
  if (!Number.isFinite(raw)) return plain;
  const dr = Number.isInteger(raw) ? 0 : decimals(raw);
  const ds = decimalsOf(scale);
  const dof = decimalsOf(offset);
  const d = Math.max(dr + ds, dof);
  if (d > MAX_DECIMALS) return plain;
  const r = scaledInteger(raw, dr);
  const m = scaledInteger(scale, ds);
  const o = scaledInteger(offset, dof);
  const product = r * m * 10 ** (d - dr - ds);
  const sum = product + o * 10 ** (d - dof);
  // NaN (a part not exact) fails these too
  if (!(Math.abs(product) < EXACT_LIMIT && Math.abs(sum) < EXACT_LIMIT)) return plain;
  return sum / 10 ** d;
}

/**
 * A decoded raw value as the engineering value published, by the rule above.
 * @param {number|bigint} raw as the register bytes give it
 * @param {string} type int16|uint16|int32|uint32|float32|int64|uint64|float64, or float16, bcd, lbcd, int8, uint8
 * @param {number} scale
 * @param {number} offset
 * @returns {number|bigint} a bigint only for a 64-bit integer beyond ±2^53 with no scale or offset
 */
function engineeringValue (raw, type, scale, offset) {
  const plain = scale === 1 && offset === 0;
  if (typeof raw === 'bigint') {
    if (plain) {
      // keep every digit: a number when it is exact, a BigInt beyond 2^53
      const n = Number(raw);
      return Number.isSafeInteger(n) ? n : raw;
    }
    return scaleExact(Number(raw), scale, offset);
  }
  const v = type === 'float32' ? shortestFloat32(raw) : type === 'float16' ? shortestFloat16(raw) : raw;
  return plain ? v : scaleExact(v, scale, offset);
}

/**
 * x × 10^exponent as the decimal it is: 0.1 at -2 is 0.001, not 0.0010000000000000002. For a
 * scale taken from a scale-factor register (SunSpec), so the value is rounded as a written scale is.
 * @param {number} x finite, not 0
 * @param {number} exponent an integer
 * @returns {number}
 */
function timesPowerOfTen (x, exponent) {
  if (exponent === 0) return x;
  const [mantissa, e] = x.toExponential().split('e');
  return Number(`${mantissa}e${Number(e) + exponent}`);
}

/**
 * Whether two values moved apart by more than a deadband. With a deadband, by more than the
 * arithmetic's own error too: 70.2 - 70.1 is 0.10000000000000853 in binary, a step of exactly 0.1.
 * @param {number} a
 * @param {number} b
 * @param {number} deadband ≥ 0; 0: any change
 * @returns {boolean}
 */
function exceedsDeadband (a, b, deadband) {
  const d = Math.abs(a - b);
  if (deadband === 0) return d > 0;
  return d - deadband > 2 * Number.EPSILON * (Math.abs(a) + Math.abs(b) + deadband);
}

module.exports = { engineeringValue, timesPowerOfTen, scaleExact, shortestFloat32, shortestFloat16, decimals, exceedsDeadband };
