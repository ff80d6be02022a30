'use strict';

/**
 * IEEE 754 half precision (binary16): 1 sign bit, 5 exponent bits, 10 fraction bits, as some drives
 * and sensors keep a value in one register. Largest finite value 65504, smallest subnormal 2^-24
 * (about 6e-8). Pure; Node 20 has no Math.f16round, so the conversion is written out.
 */

/** Largest finite half */
const FLOAT16_MAX = 65504;
/** Smallest positive (subnormal) half, 2^-24 */
const FLOAT16_MIN = 2 ** -24;

/**
 * The number a half's 16 bits hold.
 * @param {number} h 0-0xFFFF
 * @returns {number} NaN and ±Infinity included
 */
function halfToNumber (h) {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1F;
  const frac = h & 0x3FF;
  if (exp === 0) return sign * frac * FLOAT16_MIN;
  if (exp === 0x1F) return frac === 0 ? sign * Infinity : NaN;
  return sign * (1024 + frac) * 2 ** (exp - 25);
}

/** x rounded to a whole number, a tie to the even one (IEEE's default rounding) */
function roundHalfEven (x) {
  const f = Math.floor(x);
  const d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

/**
 * The 16 bits of the half nearest x (ties to even), straight from the double: going through a
 * float32 first would round twice and could miss the nearest half.
 * @param {number} x any number; beyond the largest half it becomes ±Infinity, NaN stays NaN
 * @returns {number} 0-0xFFFF
 */
function numberToHalf (x) {
  if (Number.isNaN(x)) return 0x7E00;
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a === 0) return sign;
  if (a === Infinity) return sign | 0x7C00;
  let e = Math.floor(Math.log2(a));
  // log2 of a value just below a power of two may come out one too high or low
  if (2 ** e > a) e--;
  else if (2 ** (e + 1) <= a) e++;
  if (e < -14) {
    // subnormal: a whole number of 2^-24 steps; 1024 of them is the smallest normal, 0x0400
    return sign | roundHalfEven(a / FLOAT16_MIN);
  }
  let m = roundHalfEven(a / 2 ** (e - 10)); // 1024-2048
  if (m === 2048) { m = 1024; e++; }
  if (e > 15) return sign | 0x7C00;
  return sign | ((e + 15) << 10) | (m - 1024);
}

/**
 * The half nearest x, as a number (what a half register would hold).
 * @param {number} x
 * @returns {number}
 */
function f16round (x) {
  return halfToNumber(numberToHalf(x));
}

module.exports = { halfToNumber, numberToHalf, f16round, FLOAT16_MAX, FLOAT16_MIN };
