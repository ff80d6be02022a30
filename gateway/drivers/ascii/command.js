'use strict';

/**
 * ASCII commands: validation, encoding, which commands the device answers, the kind of reply to
 * expect, and builders for the common commands (ascii-protocol.md, notes §2).
 *
 * A command is `<prefix><AA><body>`, prefix one of `# $ % @ ~`, AA two upper-case hex digits (or
 * `**` for the `#**` / `~**` broadcasts), body upper case; the encoder adds the checksum (when on)
 * and the CR [DOC]. Callers pass commands WITHOUT checksum and WITHOUT CR.
 */

const { NinesError } = require('../../base/errors');
const C = require('../../base/constants');
const { appendChecksum, CHECKSUM_CHARS } = require('./checksum');

/** @param {string} text latin1 @returns {string} text with bytes outside 0x20-0x7E escaped */
function printable (text) {
  return text.replace(/[^\x20-\x7E]/g, (c) => '\\x' + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0'));
}

/** @param {string} text @returns {string} printable text cut to 40 characters for a one-line message */
function clip (text) {
  const p = printable(text);
  return p.length > 40 ? p.slice(0, 40) + '…' : p;
}

/** Kinds of reply a command expects; reply.js has one parser per kind */
const KINDS = Object.freeze([
  'read-digital', 'write-digital', 'read-counter', 'digital-status', 'latch', 'name', 'info', 'config',
  'firmware', 'analog-write', 'analog-read', 'analog-input', 'range', 'ack', 'watchdog', 'broadcast', 'reboot', 'other'
]);

const H = '[0-9A-F]';
/**
 * Command shape → kind, first match wins. Order matters where shapes overlap: `#AA1N…` before
 * `#AAn+…`, writes before the 1-digit counter read. ED-588 `$AA6` (digital status, 4 chars) and
 * ED-560 `$AA6n` (analog read-back, 5 chars) differ only by length, so both rules are anchored.
 */
const KIND_RULES = [
  [/^[#~]\*\*/, 'broadcast'], // synchronized sampling, host OK: never answered [HW]
  [new RegExp(`^\\$${H}{2}RS$`), 'reboot'], // no reply; the device drops the connection [DOC]
  [new RegExp(`^#${H}{2}$`), 'analog-input'], // ED-549 #AA → >(values) [DOC]
  [new RegExp(`^@${H}{2}$`), 'read-digital'], // @AA → >OOII [HW]
  [new RegExp(`^@${H}{2}${H}+$`), 'write-digital'], // @AA(DD) [HW-indirect]
  [new RegExp(`^#${H}{2}(?:0[0AB]|[1AB]${H})${H}{2}$`), 'write-digital'], // #AA00DD #AA0ADD #AA0BDD #AA1cDD #AAAcDD #AABcDD [HW]
  [new RegExp(`^#${H}{2}1N`), 'analog-write'], // ED-560 multi-channel set, reply undocumented [OURS: ">"]
  [new RegExp(`^#${H}{2}${H}[+-]`), 'analog-write'], // ED-560 #AAn(+DD.DDD) [DOC]
  [new RegExp(`^#${H}{2}${H}$`), 'read-counter'], // #AAN → !AA(count) [DCON]
  [new RegExp(`^\\$${H}{2}6$`), 'digital-status'], // $AA6 → !DDDD00 [HW]
  [new RegExp(`^\\$${H}{2}[67]${H}$`), 'analog-read'], // ED-560 $AA6n read-back, $AA7n power-on value
  [new RegExp(`^~${H}{2}4${H}$`), 'analog-read'], // ED-560 ~AA4n safe value [DOC]
  [new RegExp(`^\\$${H}{2}L[01]$`), 'latch'], // $AAL1 / $AAL0 → !DDDD00 [DCON]
  [new RegExp(`^\\$${H}{2}M$`), 'name'], // $AAM → !AA(name) [HW]
  [new RegExp(`^\\$${H}{2}M[01]$`), 'info'], // $AAM0 model, $AAM1 location → !AA(text) [BB-DOC, LIB]
  [new RegExp(`^\\$${H}{2}2$`), 'config'], // $AA2 → !AATTCCFF
  [new RegExp(`^\\$${H}{2}F$`), 'firmware'], // $AAF → !AA(version)
  [new RegExp(`^\\$${H}{2}9${H}$`), 'range'], // ED-560 $AA9n → !AAttss [DOC]
  [new RegExp(`^~${H}{2}0$`), 'watchdog'], // ~AA0 → !AASS [DCON]
  [new RegExp(`^\\$${H}{2}C${H}?$`), 'ack'], // clear latches, clear counter N
  [new RegExp(`^\\$${H}{2}9${H}(?:${H}{2}){1,2}$`), 'ack'], // set range (short and long form)
  [new RegExp(`^\\$${H}{2}4${H}$`), 'ack'], // ED-560 store power-on value
  [new RegExp(`^\\$${H}{2}5${H}{2}$`), 'ack'], // ED-549 channel enable mask
  [new RegExp(`^\\$${H}{2}S1$`), 'ack'], // factory reset / default calibration
  [new RegExp(`^~${H}{2}[OL]`), 'ack'], // set name / location
  [new RegExp(`^~${H}{2}5[0-9A-FPS]$`), 'ack'], // store safe / power-on value
  [new RegExp(`^~${H}{2}1$`), 'ack'], // clear watchdog status
  [new RegExp(`^~${H}{2}3${H}{3}$`), 'ack'], // set watchdog
  [new RegExp(`^%${H}{2}`), 'ack'] // %AANNTTCCFF; DCON answers with the new address
];

/** Commands whose free text after `~AAO` / `~AAL` may use any printable case [HW, weak: `bob`] */
const FREE_TEXT = new RegExp(`^~${H}{2}[OL]`);
const ADDRESS = new RegExp(`^${H}{2}$`);
const NON_PRINTABLE = /[^\x20-\x7E]/;
const CR_OR_LF = /[\r\n]/;
const LOWER = /[a-z]/;
const NO_REPLY = new RegExp(`^(?:[#~]\\*\\*|\\$${H}{2}RS$)`);

function invalid (message, cmd) {
  return new NinesError('NINES_ERR_INVALID_COMMAND', message, { command: typeof cmd === 'string' ? printable(cmd) : cmd });
}

/**
 * Checks a command before it is sent. With `unchecked`, only the rules that keep the framing intact
 * are applied (string, not empty, no CR/LF, printable, length), so tools can send a command the
 * device is expected to ignore (notes §3.2 E1 `INVALIDCOMMAND`, lower-case hold-overs).
 * @param {unknown} cmd command text without checksum and CR, e.g. "@01"
 * @param {{checksum?: boolean, unchecked?: boolean, framingOnly?: boolean}} [opts] checksum: two checksum
 *   chars will be appended; unchecked (alias framingOnly): framing rules only
 * @returns {string} the command, unchanged
 * @throws {NinesError} NINES_ERR_INVALID_COMMAND naming the rule broken
 */
function validateCommand (cmd, { checksum = false, unchecked = false, framingOnly = false } = {}) {
  if (typeof cmd !== 'string') {
    throw invalid(`command must be a string such as "@01"; got ${cmd === null ? 'null' : typeof cmd}`, String(cmd));
  }
  if (cmd.length === 0) throw invalid('command is empty; it must start with one of # $ % @ ~ and an address, e.g. "@01"', cmd);
  const crlf = cmd.search(CR_OR_LF);
  if (crlf !== -1) {
    throw invalid(`command "${clip(cmd)}" contains ${cmd[crlf] === '\r' ? 'CR' : 'LF'} at index ${crlf}; ` +
      'pass the command without terminator (the encoder adds the CR)', cmd);
  }
  const bad = cmd.search(NON_PRINTABLE);
  if (bad !== -1) {
    throw invalid(`command "${clip(cmd)}" contains non-printable byte 0x${cmd.charCodeAt(bad).toString(16).toUpperCase().padStart(2, '0')} ` +
      `at index ${bad}; commands are printable 7-bit ASCII (0x20-0x7E)`, cmd);
  }
  const max = C.ASCII_MAX_LINE_BYTES - (checksum ? CHECKSUM_CHARS : 0);
  if (cmd.length > max) {
    throw invalid(`command "${clip(cmd)}" is ${cmd.length} bytes${checksum ? ' plus 2 checksum characters' : ''}; ` +
      `a line may hold at most ${C.ASCII_MAX_LINE_BYTES} bytes before the CR`, cmd);
  }
  if (unchecked || framingOnly) return cmd;
  if (!C.ASCII_PREFIXES.includes(cmd[0])) {
    throw invalid(`command "${clip(cmd)}" starts with "${printable(cmd[0])}"; it must start with one of # $ % @ ~`, cmd);
  }
  const address = cmd.slice(1, 3);
  if (address === '**') {
    if (cmd[0] !== '#' && cmd[0] !== '~') {
      throw invalid(`command "${clip(cmd)}" uses the broadcast address ** with "${cmd[0]}"; only #** and ~** are broadcasts`, cmd);
    }
  } else if (!ADDRESS.test(address)) {
    throw invalid(`command "${clip(cmd)}" has address "${address}"; the address must be two upper-case hex digits 00-FF ` +
      '(or ** for the #** and ~** broadcasts)', cmd);
  }
  const upperPart = FREE_TEXT.test(cmd) ? cmd.slice(0, 4) : cmd;
  if (LOWER.test(upperPart)) {
    throw invalid(`command "${clip(cmd)}" has lower-case letters; commands must be upper case ` +
      '(only the free text after ~AAO and ~AAL may use any case)', cmd);
  }
  return cmd;
}

/**
 * Validates and encodes a command for the wire: the command, its checksum when on, then CR.
 * @param {string} cmd command without checksum and CR
 * @param {{checksum?: boolean, unchecked?: boolean, framingOnly?: boolean}} [opts]
 * @returns {Buffer} latin1 bytes ending in CR (0x0D)
 * @throws {NinesError} NINES_ERR_INVALID_COMMAND
 */
function encodeCommand (cmd, opts = {}) {
  validateCommand(cmd, opts);
  return Buffer.from((opts.checksum ? appendChecksum(cmd) : cmd) + '\r', 'latin1');
}

/**
 * False for the commands the device never answers: the `#**` and `~**` broadcasts and the `$AARS`
 * reboot [HW `CommandsWithoutResponseTest`, DOC].
 * @param {string} cmd command without checksum
 * @returns {boolean}
 */
function expectsReply (cmd) {
  if (typeof cmd !== 'string') throw invalid(`command must be a string; got ${typeof cmd}`, String(cmd));
  return !NO_REPLY.test(cmd);
}

/**
 * True for `$AARS`: no reply, and the device drops the connection to reboot [DOC].
 * @param {string} cmd
 * @returns {boolean}
 */
function isReboot (cmd) {
  return typeof cmd === 'string' && cmd.length === 5 && cmd[0] === '$' && cmd.endsWith('RS') && ADDRESS.test(cmd.slice(1, 3));
}

/**
 * The kind of reply a command expects (one of KINDS); 'other' for commands nines does not type.
 * @param {string} cmd command without checksum
 * @returns {string}
 */
function classifyCommand (cmd) {
  if (typeof cmd !== 'string') throw invalid(`command must be a string; got ${typeof cmd}`, String(cmd));
  for (let i = 0; i < KIND_RULES.length; i++) {
    if (KIND_RULES[i][0].test(cmd)) return KIND_RULES[i][1];
  }
  return 'other';
}

// ---- builders for the common commands (Node-RED editor, CLI) ----

function invalidArg (field, value, rule) {
  return new NinesError('NINES_ERR_INVALID_ARG', `${field} ${rule}; got ${JSON.stringify(value)}`, { field, value });
}

/**
 * @param {string|number} value "0A", "0a" or 10
 * @returns {string} the address as two upper-case hex digits
 * @throws {NinesError} NINES_ERR_INVALID_ARG
 */
function addr (value) {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 0xFF) {
    return value.toString(16).toUpperCase().padStart(2, '0');
  }
  if (typeof value === 'string' && /^[0-9A-Fa-f]{2}$/.test(value)) return value.toUpperCase();
  throw invalidArg('address', value, 'must be two hex digits "00"-"FF" or an integer 0-255');
}

function intIn (field, value, lo, hi) {
  if (!Number.isInteger(value) || value < lo || value > hi) throw invalidArg(field, value, `must be an integer from ${lo} to ${hi}`);
  return value;
}

function hexDigit (n) {
  return n.toString(16).toUpperCase();
}

/**
 * Volts in the engineering format `+DD.DDD` [DOC], e.g. 5.13 → "+05.130", -2 → "-02.000".
 * @param {number} volts finite, |volts| ≤ 99.999 after rounding to 3 decimals
 * @returns {string}
 */
function formatVolts (volts) {
  if (typeof volts !== 'number' || !Number.isFinite(volts)) throw invalidArg('volts', volts, 'must be a finite number');
  const text = Math.abs(volts).toFixed(3);
  if (Number(text) > 99.999) throw invalidArg('volts', volts, 'must fit the format +DD.DDD (-99.999 to +99.999)');
  return (volts < 0 && Number(text) !== 0 ? '-' : '+') + text.padStart(6, '0');
}

/**
 * @param {string|number} address "01" or 1
 * @returns {string} `@AA`, read all digital lines (ED-588 reply `>OOII`)
 */
function readAll (address) {
  return `@${addr(address)}`;
}

/**
 * @param {string|number} address
 * @param {number} byte outputs 0-7 as bits, 0-255 (bit 0 = output 0)
 * @returns {string} `@AADD`, set all 8 outputs [HW-indirect]
 */
function setAllOutputs (address, byte) {
  const a = addr(address);
  return `@${a}${intIn('byte', byte, 0, 0xFF).toString(16).toUpperCase().padStart(2, '0')}`;
}

/**
 * Single output write in the A/B form the vendor library uses (`#01A001` is [HW] on ED-588):
 * lines 0-7 → `#AAAcDD`, lines 8-15 → `#AABcDD` (16-output models).
 * @param {string|number} address
 * @param {number} line output line 0-15
 * @param {boolean} on
 * @returns {string}
 */
function setOutput (address, line, on) {
  const a = addr(address);
  intIn('line', line, 0, 15);
  if (typeof on !== 'boolean') throw invalidArg('on', on, 'must be true or false');
  return `#${a}${line < 8 ? 'A' : 'B'}${line % 8}${on ? '01' : '00'}`;
}

/**
 * @param {string|number} address
 * @param {number} channel counter channel 0-15 (ED-588 has 0-7; others get `?AA`)
 * @returns {string} `#AAN`, read a counter (decimal reply) [DCON]
 */
function readCounter (address, channel) {
  const a = addr(address);
  return `#${a}${hexDigit(intIn('channel', channel, 0, 15))}`;
}

/**
 * @param {string|number} address
 * @param {number} channel 0-15
 * @returns {string} `$AACN`, clear a counter
 */
function clearCounter (address, channel) {
  const a = addr(address);
  return `$${a}C${hexDigit(intIn('channel', channel, 0, 15))}`;
}

/**
 * @param {string|number} address
 * @param {number} channel analog output 0-15 (ED-560 has 0-3)
 * @param {number} volts -99.999 to +99.999, sent as `+DD.DDD`
 * @returns {string} `#AAn+DD.DDD` [DOC]
 */
function setAnalog (address, channel, volts) {
  const a = addr(address);
  return `#${a}${hexDigit(intIn('channel', channel, 0, 15))}${formatVolts(volts)}`;
}

/**
 * @param {string|number} address
 * @param {number} channel 0-15
 * @returns {string} `$AA6n`, read an analog output back (ED-560)
 */
function readAnalog (address, channel) {
  const a = addr(address);
  return `$${a}6${hexDigit(intIn('channel', channel, 0, 15))}`;
}

/**
 * @param {string|number} address
 * @returns {string} `$AAM`, read the device name
 */
function readName (address) {
  return `$${addr(address)}M`;
}

module.exports = {
  KINDS,
  validateCommand,
  encodeCommand,
  expectsReply,
  isReboot,
  classifyCommand,
  formatVolts,
  normalizeAddress: addr,
  readAll,
  setAllOutputs,
  setOutput,
  readCounter,
  clearCounter,
  setAnalog,
  readAnalog,
  readName
};
