'use strict';

/**
 * Commands common to every ED model (notes §2.2): name, model, location, firmware, configuration,
 * reset status, reboot, factory reset, host watchdog. Each handler gets the device and the command
 * split as prefix + body (the part after `AA`, checksum already removed) and returns the reply
 * without checksum, `null` for silence, or `undefined` when the shape is not one of its commands.
 */

const {
  HEX2, BAUD_CODES, FF_CHECKSUM, FF_COUNTER_RISING, FF_COUNTER_32, FIRMWARE_VERSION, NAME_MAX_CHARS,
  WATCHDOG_TRIPPED
} = require('./models');

const HEX8_RE = /^[0-9A-F]{8}$/;
const HEX2_RE = /^[0-9A-F]{2}$/;

/**
 * A name or location is printable ASCII, 1…NAME_MAX_CHARS long; lower case is allowed in free
 * text (the vendor's FactoryResetTest renames a device to `bob`) [HW, weak].
 * @param {string} s
 * @param {boolean} allowEmpty
 * @returns {boolean}
 */
function isFreeText (s, allowEmpty) {
  if (s.length > NAME_MAX_CHARS || (!allowEmpty && s.length === 0)) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7E) return false;
  }
  return true;
}

/**
 * `$AA…` common commands.
 * @param {import('./device').AsciiDevice} dev
 * @param {string} body
 * @returns {string|null|undefined}
 */
function dollar (dev, body) {
  const aa = dev.address;
  switch (body) {
    case 'M': return '!' + aa + dev.name; // [HW] $01M → !01ED-588
    case 'M0': return '!' + aa + dev.model; // [LIB] the library maps "ED-588" to a class
    case 'M1': return '!' + aa + dev.location; // [DOC]
    case 'F': return '!' + aa + FIRMWARE_VERSION; // [DOC] $01F → !012.54
    case '2': return '!' + aa + dev._spec.type + dev._baud + HEX2[dev._configFF()]; // [DOC] !01400600
    case '5': { // [DCON] S = 1 once after each (re)boot
      const s = dev._resetFlag ? '1' : '0';
      dev._resetFlag = false;
      return '!' + aa + s;
    }
    case 'RS': // [DOC] reboot: no reply, the device drops its connections
      dev.reboot();
      dev._closeAfter = true;
      return null;
    case 'S1': // [LIB] factory reset answers !AA, then the device reboots [OURS: connections drop]
      dev.reset();
      dev._closeAfter = true;
      return '!' + aa;
    default: return undefined;
  }
}

/**
 * `~AA…` common commands: name, location, watchdog [DOC, DCON].
 * @param {import('./device').AsciiDevice} dev
 * @param {string} body
 * @returns {string|null|undefined}
 */
function tilde (dev, body) {
  const aa = dev.address;
  const c = body.charAt(0);
  if (c === 'O' || c === 'L') {
    const text = body.slice(1);
    // [OURS] an empty name is refused; an empty location clears it
    if (!isFreeText(text, c === 'L')) return '?' + aa;
    if (c === 'O') dev._name = text;
    else dev._location = text;
    return '!' + aa;
  }
  switch (body) {
    case '0': return '!' + aa + (dev._wd.tripped ? WATCHDOG_TRIPPED : '00');
    case '1': // [DCON] clears the tripped status; the outputs stay at their safe value until written
      dev._wd.tripped = false;
      dev._wd.lastOkMs = dev._now();
      return '!' + aa;
    case '2': return '!' + aa + (dev._wd.enabled ? '1' : '0') + HEX2[dev._wd.ticks];
  }
  if (c === '3') {
    const e = body.charAt(1);
    const tt = body.slice(2);
    if (body.length !== 4 || (e !== '0' && e !== '1') || !HEX2_RE.test(tt)) return '?' + aa;
    const ticks = parseInt(tt, 16);
    if (e === '1' && ticks === 0) return '?' + aa; // [OURS] an enabled watchdog needs a time
    dev._wd.enabled = e === '1';
    dev._wd.ticks = ticks;
    dev._wd.lastOkMs = dev._now();
    return '!' + aa;
  }
  return undefined;
}

/**
 * `%AANNTTCCFF`: new address, type (must be the model's), baud code, flags. The checksum bit must
 * stay as it is (ED sets it on the web page; DCON needs the INIT jumper) [OURS]. The reply carries
 * the new address [DCON].
 * @param {import('./device').AsciiDevice} dev
 * @param {string} body
 * @returns {string|null|undefined}
 */
function percent (dev, body) {
  if (!HEX8_RE.test(body)) return undefined;
  const aa = dev.address;
  const nn = body.slice(0, 2);
  const tt = body.slice(2, 4);
  const cc = body.slice(4, 6);
  const ff = parseInt(body.slice(6, 8), 16);
  if (tt !== dev._spec.type || !BAUD_CODES.has(cc)) return '?' + aa;
  if (((ff & FF_CHECKSUM) !== 0) !== dev.checksum) return '?' + aa;
  // Digital: counter edge and 32-bit mode are settable; analog: engineering format only [OURS].
  const settable = dev._spec.kind === 'digital' ? (FF_COUNTER_RISING | FF_COUNTER_32) : 0;
  if ((ff & ~(settable | FF_CHECKSUM)) !== 0) return '?' + aa;
  dev._address = nn;
  dev._baud = cc;
  dev._ff = ff & settable;
  return '!' + nn;
}

/**
 * Dispatches a common command.
 * @param {import('./device').AsciiDevice} dev
 * @param {string} prefix one of # $ % @ ~
 * @param {string} body the command after the address
 * @returns {string|null|undefined} reply, silence, or undefined when not a common command
 */
function handleCommon (dev, prefix, body) {
  if (prefix === '$') return dollar(dev, body);
  if (prefix === '~') return tilde(dev, body);
  if (prefix === '%') return percent(dev, body);
  return undefined;
}

module.exports = { handleCommon, isFreeText };
