'use strict';

/**
 * ED-588 commands (ascii-protocol.md "ED-588"; notes §2.3): 8 digital inputs, 8 outputs, input
 * counters and latches, safe / power-on output values. Handlers return the reply without
 * checksum, `null` for silence, or `undefined` when the shape is not an ED-588 command.
 *
 * Output writes answer `>`; a bare `?` when a parameter is invalid; a bare `!` when the host
 * watchdog has tripped (the write is ignored) [DCON]. Validity is checked before the watchdog.
 */

const { HEX2, COUNTER_DIGITS_16, COUNTER_DIGITS_32 } = require('./models');

const HEX_RE = /^[0-9A-F]+$/;
const HEX1_RE = /^[0-9A-F]$/;
const CHANNELS = 8;

/**
 * Applies an output write unless the watchdog has tripped.
 * @param {import('./device').AsciiDevice} dev
 * @param {number} byte new output byte
 * @returns {string} `>` or bare `!`
 */
function write (dev, byte) {
  if (dev._wd.tripped) return '!';
  dev._out = byte & 0xFF;
  return '>';
}

/** `@AA` read and `@AA(data)` write. */
function at (dev, body) {
  if (body === '') return '>' + HEX2[dev._out] + HEX2[dev._in]; // [HW] >OOII, outputs first
  if (!HEX_RE.test(body)) return undefined;
  if (body.length === 2) return write(dev, parseInt(body, 16)); // [HW-indirect] @0103 → outputs 03
  // [OURS] 4 digits: the vendor's @AA(Data) latency test sends 4 digits to 8-output devices and
  // expects an answer, so we answer `>` and drive the outputs with the low byte.
  if (body.length === 4) return write(dev, parseInt(body, 16) & 0xFF);
  return '?';
}

/** `#AAN` counter read and `#AABBDD` writes. */
function hash (dev, body) {
  const aa = dev.address;
  if (body.length === 1 && HEX1_RE.test(body)) {
    const n = parseInt(body, 16);
    // [DCON] channel not present → ?AA; the vendor's #AAN test sends channels 0…E
    if (n >= CHANNELS) return '?' + aa;
    const digits = dev._counterBits() === 32 ? COUNTER_DIGITS_32 : COUNTER_DIGITS_16;
    return '!' + aa + String(dev._counters[n]).padStart(digits, '0');
  }
  if (body.length !== 4 || !HEX_RE.test(body)) return undefined;
  const group = body.charAt(0);
  const c = body.charAt(1);
  const dd = body.slice(2);
  if (group === '0') {
    // [HW] #AA00DD and #AA0ADD set the lower 8 outputs; #AA0BDD (upper 8, ED-527) → ? [DCON]
    if (c === '0' || c === 'A') return write(dev, parseInt(dd, 16));
    return '?';
  }
  if (group === '1' || group === 'A') {
    // [HW] #AA1cDD / #AAAcDD single output; [OURS] c ≥ 8 (#01A801) or DD not 00/01 (#01A002) → ?
    const line = parseInt(c, 16);
    if (line >= CHANNELS || (dd !== '00' && dd !== '01')) return '?';
    const bit = 1 << line;
    return write(dev, dd === '01' ? dev._out | bit : dev._out & ~bit);
  }
  return '?'; // #AABcDD is ED-527 only; other BB groups are invalid [DCON]
}

/** `$AA6`, `$AAC`, `$AACN`, `$AALs`, `$AA4`. */
function dollar (dev, body) {
  const aa = dev.address;
  const c = body.charAt(0);
  if (body === '6') return '!' + HEX2[dev._out] + HEX2[dev._in] + '00'; // [HW] !00FF00, no address
  if (body === 'C') { // [DCON] clear all latches
    dev._latchHigh = 0;
    dev._latchLow = 0;
    return '!' + aa;
  }
  if (c === 'C' && body.length === 2 && HEX1_RE.test(body.charAt(1))) { // [DCON] clear counter N
    const n = parseInt(body.charAt(1), 16);
    if (n >= CHANNELS) return '?' + aa;
    dev._counters[n] = 0;
    return '!' + aa;
  }
  if (c === 'L' && body.length === 2) { // [DCON] latches, laid out like @AA (inputs low byte), no address
    if (body === 'L1') return '!00' + HEX2[dev._latchHigh] + '00';
    if (body === 'L0') return '!00' + HEX2[dev._latchLow] + '00';
    return '?' + aa;
  }
  if (body === '4') { // [DCON] synchronized data; S = 1 on the first read after #**
    if (dev._sync === null) return '?' + aa; // [OURS] nothing sampled yet
    const s = dev._syncFresh ? '1' : '0';
    dev._syncFresh = false;
    return '!' + s + dev._sync;
  }
  return undefined;
}

/** `~AA4P|S` read and `~AA5P|S` store power-on / safe output values [DCON]. */
function tilde (dev, body) {
  const aa = dev.address;
  switch (body) {
    case '4P': return '!' + aa + HEX2[dev._powerOn] + '00';
    case '4S': return '!' + aa + HEX2[dev._safe] + '00';
    case '5P': dev._powerOn = dev._out; return '!' + aa;
    case '5S': dev._safe = dev._out; return '!' + aa;
    default: return undefined;
  }
}

/**
 * Dispatches an ED-588 command.
 * @param {import('./device').AsciiDevice} dev
 * @param {string} prefix
 * @param {string} body the command after the address
 * @returns {string|null|undefined}
 */
function handleDigital (dev, prefix, body) {
  switch (prefix) {
    case '@': return at(dev, body);
    case '#': return hash(dev, body);
    case '$': return dollar(dev, body);
    case '~': return tilde(dev, body);
    default: return undefined;
  }
}

/**
 * Recognises the shape of an ED-588 command sent to another model, so that model answers it as
 * "unsupported here" (`?AA`, bare `?` for writes) rather than staying silent [OURS].
 * @param {string} prefix
 * @param {string} body
 * @returns {'read'|'write'|null}
 */
function recogniseDigital (prefix, body) {
  if (prefix === '@') return body === '' ? 'read' : (HEX_RE.test(body) ? 'write' : null);
  if (prefix === '#') {
    if (body.length === 1 && HEX1_RE.test(body)) return 'read';
    return body.length === 4 && HEX_RE.test(body) ? 'write' : null;
  }
  if (prefix === '$') return /^(6|C[0-9A-F]?|L[01]|4)$/.test(body) ? 'read' : null;
  if (prefix === '~') return /^[45][PS]$/.test(body) ? 'read' : null;
  return null;
}

module.exports = { handleDigital, recogniseDigital };
