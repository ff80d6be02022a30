'use strict';

/**
 * The DCON checksum [DCON], used on commands and replies when the device's checksum setting is on:
 * the sum of every byte from the prefix (or reply lead) up to but excluding the CR, low 8 bits,
 * written as two upper-case hex digits just before the CR (ascii-protocol.md, "Checksum").
 * `$012` → `$012B7`, `@01` → `@01A1`, `>00FF` → `>00FF2A`, `>` → `>3E`.
 */

const { NinesError } = require('../../base/errors');

const HEX_DIGITS = '0123456789ABCDEF';
/** Length of the checksum suffix in characters */
const CHECKSUM_CHARS = 2;
/** HEX2[n] = n (0-255) as two upper-case hex digits */
const HEX2 = Object.freeze(Array.from({ length: 256 }, (_, n) => HEX_DIGITS[n >> 4] + HEX_DIGITS[n & 0x0F]));

/**
 * @param {string|Buffer} text the line without CR (latin1 text, one char per byte, or bytes)
 * @returns {string} two upper-case hex digits
 */
function checksum (text) {
  let sum = 0;
  if (typeof text === 'string') {
    for (let i = 0; i < text.length; i++) sum += text.charCodeAt(i);
  } else if (Buffer.isBuffer(text)) {
    for (let i = 0; i < text.length; i++) sum += text[i];
  } else {
    throw new NinesError('NINES_ERR_INVALID_ARG', `checksum input must be a string or a Buffer; got ${typeof text}`, { field: 'text' });
  }
  return HEX2[sum & 0xFF];
}

/**
 * @param {string} text a command or reply without CR
 * @returns {string} text followed by its two checksum digits
 */
function appendChecksum (text) {
  return text + checksum(text);
}

/**
 * Splits a received line (CR already removed) into body and checksum and checks the sum.
 * Hex digits are compared case-insensitively: the device writes upper case, and accepting lower
 * case costs no safety (the sum still has to match) [OURS].
 * @param {string} line latin1 text without CR
 * @returns {{body: string, ok: boolean, expected: string, got: string}}
 *   `got` is '' when the line is too short to carry a lead and a checksum (under 3 chars);
 *   `expected` is the checksum the body needs
 */
function verifyAndStrip (line) {
  if (typeof line !== 'string') {
    throw new NinesError('NINES_ERR_INVALID_ARG', `line must be a string; got ${typeof line}`, { field: 'line' });
  }
  if (line.length < CHECKSUM_CHARS + 1) return { body: line, ok: false, expected: checksum(line), got: '' };
  const body = line.slice(0, -CHECKSUM_CHARS);
  const got = line.slice(-CHECKSUM_CHARS);
  const expected = checksum(body);
  return { body, ok: got === expected || got.toUpperCase() === expected, expected, got };
}

module.exports = { checksum, appendChecksum, verifyAndStrip, CHECKSUM_CHARS, HEX2 };
