'use strict';

/**
 * Register contents that are no value. A tag's quality is 'ok' or a NINES_ERR_* code, and a value
 * that is not right is published as null with that code (design: "nothing false"). Besides a read
 * that failed, the bytes of a read that worked may hold no value:
 *
 * - NINES_ERR_NO_VALUE: a float that is NaN or ±Infinity, or a float32 at or beyond ±3.4e38, the
 *   "no value" sentinel many meters and PLCs write for a measurement they do not have (FLT_MAX
 *   rounded; as a float32, 3.4e38 is 3.3999999521443642e38, so that is the bound);
 * - NINES_ERR_BAD_BCD: a BCD register with a nibble above 9 (values/bcd.js);
 * - NINES_ERR_UNKNOWN_ENUM: an enum tag's raw value that its map has no label for (tags/enum.js);
 * - NINES_ERR_SCALE_FACTOR: a tag scaled from another register (scaleFrom) whose scale register
 *   could not be read or holds an exponent outside ±SCALE_EXPONENT_LIMIT (SunSpec writes -32768,
 *   0x8000, for "not implemented").
 */

const QUALITY = Object.freeze({
  OK: 'ok',
  NO_VALUE: 'NINES_ERR_NO_VALUE',
  BAD_BCD: 'NINES_ERR_BAD_BCD',
  UNKNOWN_ENUM: 'NINES_ERR_UNKNOWN_ENUM',
  SCALE_FACTOR: 'NINES_ERR_SCALE_FACTOR'
});

/** |x| at or beyond this, as a float32, is the "no value" sentinel */
const FLOAT32_NO_VALUE = Math.fround(3.4e38);
/** A scale register's power-of-ten exponent, at most this far from 0 (SunSpec's range) */
const SCALE_EXPONENT_LIMIT = 10;

/**
 * Why a decoded raw value is no value, or null when it is one.
 * @param {number|bigint} raw as registers.js decodeRaw gives it
 * @param {string} type the tag's type
 * @returns {string|null} a QUALITY code, or null
 */
function rawQuality (raw, type) {
  if (typeof raw !== 'number') return null;
  if (type === 'bcd' || type === 'lbcd') return Number.isNaN(raw) ? QUALITY.BAD_BCD : null;
  if (!Number.isFinite(raw)) return QUALITY.NO_VALUE;
  if (type === 'float32' && Math.abs(raw) >= FLOAT32_NO_VALUE) return QUALITY.NO_VALUE;
  return null;
}

/**
 * Whether a scale register's value is a usable power-of-ten exponent.
 * @param {unknown} v
 * @returns {boolean}
 */
function isScaleExponent (v) {
  return Number.isInteger(v) && Math.abs(v) <= SCALE_EXPONENT_LIMIT;
}

module.exports = { QUALITY, FLOAT32_NO_VALUE, SCALE_EXPONENT_LIMIT, rawQuality, isScaleExponent };
