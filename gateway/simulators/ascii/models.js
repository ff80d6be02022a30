'use strict';

/**
 * Model tables and small codecs of the ASCII simulator (ascii-protocol.md; notes §2). Data, not
 * logic: the command handlers live in common.js, digital.js (ED-588) and analog.js (ED-560).
 */

/** Two upper-case hex digits for every byte value, built once (hot path of `@AA`). */
const HEX2 = Array.from({ length: 256 }, (_, i) => i.toString(16).toUpperCase().padStart(2, '0'));

/** @type {Record<string, object>} per-model facts; `type` is the `$AA2` TT byte */
const MODELS = Object.freeze({
  'ED-588': Object.freeze({
    model: 'ED-588',
    kind: 'digital',
    type: '40', // [DOC] digital I/O
    inputs: 8,
    outputs: 8,
    description: '8 digital inputs, 8 digital outputs'
  }),
  'ED-560': Object.freeze({
    model: 'ED-560',
    kind: 'analog-out',
    type: '30', // [LIB only] notes §2.6
    channels: 4,
    description: '4 analog outputs (0-10 V or 0/4-20 mA)'
  })
});

/** Factory `$AA2` baud code CC: 06 = 9600 [DOC]; accepted codes 03 (1200) … 0A (115200). */
const BAUD_DEFAULT = '06';
const BAUD_CODES = new Set(['03', '04', '05', '06', '07', '08', '09', '0A']);
/** `$AA2` FF bits. Digital: 7 counter edge (1 rising, 0 falling), 6 checksum, 5 32-bit counters [LIB]. */
const FF_COUNTER_RISING = 0x80;
const FF_CHECKSUM = 0x40;
const FF_COUNTER_32 = 0x20;
/** Firmware version answered to `$AAF` (format of the datasheet example `!012.54`) [DOC]. */
const FIRMWARE_VERSION = '2.54';
/** Longest name (`~AAO`) and location (`~AAL`) we accept [OURS; location ≤ 10 is DOC]. */
const NAME_MAX_CHARS = 10;
/** Watchdog TT unit: tenths of a second [DCON]. */
const WATCHDOG_TICK_MS = 100;
/** `~AA0` status byte when the host watchdog has tripped [DCON]. */
const WATCHDOG_TRIPPED = '04';
/** Counter digits in 16-bit and 32-bit modes (16-bit: DCON; 32-bit width undocumented [OURS]). */
const COUNTER_DIGITS_16 = 5;
const COUNTER_DIGITS_32 = 10;
/** animate: input i toggles every ANIMATE_STEP_MS × (i + 1) ms [OURS]. */
const ANIMATE_STEP_MS = 1000;

/** ED-560 range codes → limits in the range's unit (V or mA) [DOC: 31, 32; third-party: 30]. */
const ANALOG_RANGES = Object.freeze({
  30: Object.freeze({ min: 0, max: 20, unit: 'mA' }),
  31: Object.freeze({ min: 4, max: 20, unit: 'mA' }),
  32: Object.freeze({ min: 0, max: 10, unit: 'V' })
});
const ANALOG_RANGE_DEFAULT = '32';

/**
 * DCON checksum: sum of the bytes, low 8 bits, two upper-case hex digits [DCON].
 * @param {string} s latin1 text without the CR
 * @returns {string} two hex digits
 */
function checksumOf (s) {
  let sum = 0;
  for (let i = 0; i < s.length; i++) sum += s.charCodeAt(i);
  return HEX2[sum & 0xFF];
}

/**
 * Formats an analog value in engineering format `+DD.DDD` [DOC].
 * @param {number} v volts or mA
 * @returns {string}
 */
function formatAnalog (v) {
  const sign = v < 0 ? '-' : '+';
  const s = Math.abs(v).toFixed(3);
  return sign + (s.length < 6 ? '0'.repeat(6 - s.length) + s : s);
}

module.exports = {
  HEX2,
  MODELS,
  BAUD_DEFAULT,
  BAUD_CODES,
  FF_COUNTER_RISING,
  FF_CHECKSUM,
  FF_COUNTER_32,
  FIRMWARE_VERSION,
  NAME_MAX_CHARS,
  WATCHDOG_TICK_MS,
  WATCHDOG_TRIPPED,
  COUNTER_DIGITS_16,
  COUNTER_DIGITS_32,
  ANIMATE_STEP_MS,
  ANALOG_RANGES,
  ANALOG_RANGE_DEFAULT,
  checksumOf,
  formatAnalog
};
