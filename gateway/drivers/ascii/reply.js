'use strict';

/**
 * ASCII reply → typed object. Pure: parseReply(line, {command, kind, checksum}) either returns a
 * Reply or throws a NinesError whose details carry the raw bytes (hex and printable text) and the
 * command. Reply shapes per kind follow reference/ascii-protocol-notes.md §1.2 and §2.
 *
 * Leads [DCON]: `>` data reads and output writes; `!` the $ % ~ families and the counter read;
 * `?` / `?AA` invalid parameter (NINES_ERR_DEVICE_INVALID); a bare `!` to an output write means the
 * host watchdog tripped and the write was ignored (NINES_ERR_DEVICE_IGNORED). A lead or shape that
 * does not fit the command is NINES_ERR_BAD_REPLY: checking it also catches a stray reply that
 * would otherwise pass for the answer to another command.
 */

const { NinesError } = require('../../base/errors');
const { verifyAndStrip } = require('./checksum');
const { classifyCommand } = require('./command');

const HEX_RE = /^[0-9A-Fa-f]+$/;
const NUMBER_RE = /^[+-]\d+(?:\.\d+)?$/;
const NUMBERS_RE = /[+-]\d+(?:\.\d+)?/g;
const NUMBERS_ONLY_RE = /^(?:[+-]\d+(?:\.\d+)?)*$/;

/**
 * @typedef {object} Reply
 * @property {true} ok
 * @property {string} command the command sent (without checksum)
 * @property {string} kind classifyCommand(command)
 * @property {string} lead first character of the reply: '>' or '!'
 * @property {string} raw reply text without checksum and CR
 * @property {boolean} [ack] writes and `!AA` acknowledgements
 * @property {number} [value] 16-bit digital value, analog reading (volts/mA)
 * @property {boolean[]} [bits] bit n of value, n = 0… (4 bits per hex digit)
 * @property {boolean[]} [outputs] 4-hex-digit digital replies: bits 8–15 (ED-588 `>OOII`) [HW]
 * @property {boolean[]} [inputs] 4-hex-digit digital replies: bits 0–7
 * @property {number} [count] counter value
 * @property {number[]} [values] ED-549 `#AA` readings
 * @property {string} [name] `$AAM`
 * @property {string} [firmware] `$AAF`
 * @property {string} [type] `$AA2` type code, e.g. '40'
 * @property {string} [baudCode] `$AA2` baud code, e.g. '06'
 * @property {number} [flags] `$AA2` FF byte
 * @property {boolean} [checksum] `$AA2` checksum bit (0x40 of FF)
 * @property {string} [range] `$AA9n` type code, e.g. '32' (0–10 V)
 * @property {string} [slew] `$AA9n` slew code
 * @property {number} [watchdog] `~AA0` status byte
 * @property {boolean} [tripped] `~AA0` status bit 0x04
 * @property {string} [address] `%…` acknowledgement: the new address
 * @property {string} [text] everything after the lead (and the echoed address) when no typed field fits
 * @property {bigint} [sentNs] set by the client
 * @property {bigint} [doneNs] set by the client
 */

/**
 * Describes received text for error details: hex of the bytes and a printable form.
 * @param {string} text latin1
 * @returns {{hex: string, text: string}}
 */
function describeBytes (text) {
  return {
    hex: Buffer.from(text, 'latin1').toString('hex'),
    // eslint-disable-next-line no-control-regex
    text: text.replace(/[\x00-\x1f\x7f-\xff]/g, (c) => '\\x' + c.charCodeAt(0).toString(16).padStart(2, '0'))
  };
}

function replyError (code, message, command, line, extra) {
  const b = describeBytes(line);
  return new NinesError(code, message, Object.assign({ command, raw: b.text, hex: b.hex }, extra));
}

function bad (ctx, why) {
  return replyError('NINES_ERR_BAD_REPLY', `reply to ${ctx.command} ${JSON.stringify(describeBytes(ctx.text).text)} ${why}`, ctx.command, ctx.line, { kind: ctx.kind });
}

function bitsOf (value, n) {
  const out = new Array(n);
  for (let i = 0; i < n; i++) out[i] = ((value >>> i) & 1) === 1;
  return out;
}

/** Fills value/bits (and outputs/inputs for 4 digits) from a hex string. */
function digital (reply, hex) {
  const value = parseInt(hex, 16);
  reply.value = value;
  reply.bits = bitsOf(value, hex.length * 4);
  if (hex.length === 4) {
    reply.outputs = reply.bits.slice(8, 16);
    reply.inputs = reply.bits.slice(0, 8);
  }
}

function needLead (ctx, lead) {
  if (ctx.text[0] !== lead) throw bad(ctx, `starts with ${JSON.stringify(ctx.text[0])}, expected ${JSON.stringify(lead)}`);
}

/** `!AA…`: checks lead and echoed address, returns the rest. */
function afterAddress (ctx) {
  needLead(ctx, '!');
  const addr = ctx.text.slice(1, 3);
  if (addr !== ctx.address) throw bad(ctx, `echoes address ${JSON.stringify(addr)}, expected ${ctx.address}`);
  return ctx.text.slice(3);
}

function hexDigits (ctx, s, lo, hi) {
  if (s.length < lo || s.length > hi || !HEX_RE.test(s)) throw bad(ctx, `has data ${JSON.stringify(s)}, expected ${lo === hi ? lo : lo + '-' + hi} hex digits`);
  return s;
}

/** Output writes: `>` done, bare `!` ignored (watchdog) [DCON]. */
function parseWrite (ctx, reply) {
  if (ctx.text === '>') { reply.ack = true; return; }
  if (ctx.text === '!') {
    throw replyError('NINES_ERR_DEVICE_IGNORED', `${ctx.command} was ignored: the device answered "!" (host watchdog tripped, outputs held at their safe value)`, ctx.command, ctx.line);
  }
  throw bad(ctx, 'is not ">" (write acknowledged) or "!" (ignored)');
}

/** `!DDDD00` of $AA6 and $AAL0/1 (no address echoed) [HW]; other hex widths (ED-549 `$AA6` mask) as text. */
function parseStatus (ctx, reply) {
  needLead(ctx, '!');
  const data = hexDigits(ctx, ctx.text.slice(1), 2, 6);
  if (data.length === 6) digital(reply, data.slice(0, 4));
  else reply.text = data;
}

const PARSERS = {
  'read-digital' (ctx, reply) {
    needLead(ctx, '>');
    digital(reply, hexDigits(ctx, ctx.text.slice(1), 1, 8));
  },
  'write-digital': parseWrite,
  'analog-write': parseWrite,
  'digital-status': parseStatus,
  latch: parseStatus,
  'read-counter' (ctx, reply) {
    if (ctx.text[0] === '>') { // ED-549: #AAn reads an analog input [DOC]
      const s = ctx.text.slice(1);
      if (NUMBER_RE.test(s)) reply.value = Number(s);
      else reply.text = hexDigits(ctx, s, 4, 4);
      return;
    }
    const digits = afterAddress(ctx);
    if (!/^\d+$/.test(digits)) throw bad(ctx, `has count ${JSON.stringify(digits)}, expected decimal digits`);
    reply.count = Number(digits);
  },
  'analog-input' (ctx, reply) {
    needLead(ctx, '>');
    const s = ctx.text.slice(1);
    if (NUMBERS_ONLY_RE.test(s)) reply.values = (s.match(NUMBERS_RE) || []).map(Number);
    else reply.text = hexDigits(ctx, s, 1, 64);
  },
  'analog-read' (ctx, reply) {
    const s = afterAddress(ctx);
    if (NUMBER_RE.test(s)) reply.value = Number(s);
    else reply.text = hexDigits(ctx, s, 4, 4); // hex data format [DOC]
  },
  name (ctx, reply) { reply.name = afterAddress(ctx); },
  info (ctx, reply) { reply.text = afterAddress(ctx); },
  firmware (ctx, reply) { reply.firmware = afterAddress(ctx); },
  config (ctx, reply) {
    const s = hexDigits(ctx, afterAddress(ctx), 6, 6);
    reply.type = s.slice(0, 2);
    reply.baudCode = s.slice(2, 4);
    reply.flags = parseInt(s.slice(4, 6), 16);
    reply.checksum = (reply.flags & 0x40) !== 0; // FF bit 6 [DCON, LIB]
  },
  range (ctx, reply) {
    const s = hexDigits(ctx, afterAddress(ctx), 2, 4);
    reply.range = s.slice(0, 2);
    if (s.length > 2) reply.slew = s.slice(2);
  },
  watchdog (ctx, reply) {
    reply.watchdog = parseInt(hexDigits(ctx, afterAddress(ctx), 2, 2), 16);
    reply.tripped = (reply.watchdog & 0x04) !== 0; // 04 = tripped [DCON]
  },
  ack (ctx, reply) {
    if (ctx.command[0] === '%') { // %AANNTTCCFF answers with the new address [DCON]
      needLead(ctx, '!');
      reply.address = hexDigits(ctx, ctx.text.slice(1), 2, 2);
    } else {
      const rest = afterAddress(ctx);
      if (rest !== '') throw bad(ctx, `has extra data ${JSON.stringify(rest)} after the address`);
    }
    reply.ack = true;
  },
  other (ctx, reply) {
    if (ctx.text[0] !== '>' && ctx.text[0] !== '!') throw bad(ctx, 'does not start with ">", "!" or "?"');
    reply.text = ctx.text.slice(1);
  }
};

/**
 * Parses one reply line (CR already removed) for the command it answers.
 * @param {string} line received text, with checksum when checksum mode is on
 * @param {object} req
 * @param {string} req.command the command sent, without checksum
 * @param {string} [req.kind] classifyCommand(command), computed when absent
 * @param {boolean} [req.checksum=false] verify and strip a checksum
 * @returns {Reply}
 * @throws {NinesError} NINES_ERR_BAD_CHECKSUM, NINES_ERR_DEVICE_INVALID, NINES_ERR_DEVICE_IGNORED,
 *   NINES_ERR_BAD_REPLY
 */
function parseReply (line, { command, kind, checksum = false }) {
  const k = kind || classifyCommand(command);
  let text = line;
  if (checksum) {
    const v = verifyAndStrip(line);
    if (!v.ok) {
      const what = v.got === '' ? 'no checksum' : `checksum ${describeBytes(v.got).text}`;
      throw replyError('NINES_ERR_BAD_CHECKSUM', `reply to ${command} has ${what}, expected ${v.expected}`, command, line, { expected: v.expected, got: v.got });
    }
    text = v.body;
  }
  const ctx = { command, kind: k, line, text, address: command.slice(1, 3) };
  if (text.length === 0) throw bad(ctx, 'is empty');
  if (text[0] === '?') {
    const addr = text.slice(1);
    // `?AA` from another address is not an answer to this command (an expansion module, a stray line)
    if (addr !== '' && addr !== ctx.address) throw bad(ctx, `is "?" from address ${JSON.stringify(addr)}, expected ${ctx.address}`);
    throw replyError('NINES_ERR_DEVICE_INVALID', `${command} was refused by the device: "${text}" (invalid parameter, absent channel or unsupported command)`, command, line);
  }
  const reply = { ok: true, command, kind: k, lead: text[0], raw: text };
  (PARSERS[k] || PARSERS.other)(ctx, reply);
  return reply;
}

module.exports = { parseReply, describeBytes };
