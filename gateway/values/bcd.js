'use strict';

/**
 * Binary-coded decimal: one decimal digit per 4 bits, most significant digit first, as panel meters,
 * counters and older PLCs (Siemens S5 timers, many energy meters) keep numbers. `bcd` is one
 * register, 4 digits (0x1234 is 1234); `lbcd` two registers, 8 digits, the first register (after the
 * word order is applied) holding the high digits. Pure.
 *
 * A nibble above 9 is no digit: the register holds something other than a BCD number (a device
 * still starting, a wrong type in the map). It decodes to NaN, which the tag layer publishes as the
 * quality NINES_ERR_BAD_BCD (values/quality.js), never as a value.
 */

/**
 * Reads `digits` BCD digits from big-endian bytes.
 * @param {Buffer} b bytes in big-endian order (orders already applied)
 * @param {number} digits 4 or 8
 * @returns {number} the number, or NaN when a nibble is above 9
 */
function readBcd (b, digits) {
  let n = 0;
  for (let i = 0; i < digits / 2; i++) {
    const hi = b[i] >> 4;
    const lo = b[i] & 0x0F;
    if (hi > 9 || lo > 9) return NaN;
    n = n * 100 + hi * 10 + lo;
  }
  return n;
}

/**
 * Writes a whole number from 0 to 10^digits - 1 as BCD digits into big-endian bytes. The caller
 * has checked the range (registers.js toRaw).
 * @param {Buffer} b receives digits / 2 bytes from offset 0
 * @param {number} n
 * @param {number} digits 4 or 8
 * @returns {void}
 */
function writeBcd (b, n, digits) {
  let rest = n;
  for (let i = digits / 2 - 1; i >= 0; i--) {
    const two = rest % 100;
    rest = (rest - two) / 100;
    b[i] = ((two / 10) | 0) << 4 | two % 10;
  }
}

module.exports = { readBcd, writeBcd };
