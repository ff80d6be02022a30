'use strict';

/**
 * Writes by tag: `{ setpoint: 71.5, pump_on: true }` → one request per tag, encoded by the tag's
 * type, scale and order. Every value is checked before anything is sent: one value that its tag
 * cannot hold (out of range, a fraction for an integer register, not a number) refuses the whole
 * write with NINES_ERR_INVALID_VALUE, and nothing reaches the device.
 *
 * Modbus: a coil is FC5; a one-register value FC6; a wider value or a string FC16. A device that
 * lacks one of them (devices/spec.js unsupportedFunctionCodes) gets the one that stands in: FC15 of
 * one coil for FC5, FC16 of one register for FC6, and for FC16 one FC6 per register, in order. That
 * last one is not atomic: between two of its writes the device holds half a new value (docs/lines.md
 * says so; such devices leave no other way). ASCII ED series: an output line is `#AAAcDD`, an analog
 * channel `#AAn+DD.DDD` (volts after scale and offset).
 * A part of a register (bit, bits, int8, uint8) is FC22 mask write: the device changes only that
 * part's bits, in one request, so a write of another part or of the whole register in between is
 * kept, as a read-modify-write could not keep it. A device that lacks FC22 gets no stand-in: the
 * write is refused with NINES_ERR_FC_UNSUPPORTED, never turned into a read and a write.
 * An enum tag takes one of its labels (or a raw value its enum names) and writes that raw value.
 * Read-only tags (inputs, discrete inputs, tags scaled from another register, tags marked readOnly)
 * are refused.
 */

const { NinesError, toNinesError } = require('../base/errors');
const { encodeOne, encodeValues, toBit, show } = require('../values/registers');
const ascii = require('../drivers/ascii/command');
const { notWritten, unknownError } = require('./write-outcome');
const { valueOf } = require('./enum');
const { PART_TYPES } = require('./spec');

const MAX_WRITE_TAGS = 1000;
/** The refusal codes of a tag write, most specific first: the write as a whole takes the first one any tag has */
const REFUSAL_ORDER = Object.freeze(['NINES_ERR_INVALID_VALUE', 'NINES_ERR_FC_UNSUPPORTED', 'NINES_ERR_INVALID_ARG']);

/**
 * @typedef {object} TagWrite
 * @property {string} name
 * @property {Array<object|string>} ops Modbus ops ({fc, address, value|values, unitId?}, or FC22's
 *   {fc: 22, address, andMask, orMask, unitId?}) or an ASCII command: one, or one per register where
 *   FC6 stands in for FC16
 * @property {unknown} value the engineering value asked for
 */

/**
 * Checks and encodes a write of named values.
 * @param {import('./spec').Tag[]} tags the device's tags
 * @param {unknown} input `{ name: value, … }`
 * @param {{protocol: string, address?: string, unitId?: number, unsupportedFunctionCodes?: number[],
 *   rawText?: (name: string) => string|undefined}} ctx the device's protocol; ASCII module address; Modbus
 *   unit (undefined: the target's); the write function codes the device lacks; the raw JSON text a
 *   value was sent as (MQTT), asked only for a refused value, so its message shows what was sent
 *   (JSON.parse turns 1e309 into Infinity and 1.0 into 1)
 * @returns {TagWrite[]} in the order given
 * @throws {NinesError} NINES_ERR_INVALID_ARG (not an object, an unknown or read-only tag),
 *   NINES_ERR_INVALID_VALUE (a value the tag cannot hold), NINES_ERR_FC_UNSUPPORTED (a part of a
 *   register on a device that lacks FC22, details.fc 22); details.problems lists every one
 */
function encodeTagWrites (tags, input, ctx) {
  if (input === null || typeof input !== 'object' || Array.isArray(input) || Buffer.isBuffer(input)) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `a tag write must be an object of tag names and values such as { "setpoint": 71.5 }; got ${describe(input)}`, { field: 'values' });
  }
  const entries = Object.entries(input);
  if (entries.length === 0) throw new NinesError('NINES_ERR_INVALID_ARG', 'a tag write names no tag', { field: 'values' });
  if (entries.length > MAX_WRITE_TAGS) throw new NinesError('NINES_ERR_INVALID_ARG', `a tag write names ${entries.length} tags; at most ${MAX_WRITE_TAGS}`, { field: 'values' });
  const byName = new Map(tags.map((t) => [t.name, t]));
  const problems = [];
  const out = [];
  for (const [name, value] of entries) {
    const tag = byName.get(name);
    if (tag === undefined) {
      problems.push({ code: 'NINES_ERR_INVALID_ARG', tag: name, message: `tag ${JSON.stringify(name)} is not a tag of this device${suggest(name, byName)}` });
      continue;
    }
    if (tag.readOnly) {
      problems.push({ code: 'NINES_ERR_INVALID_ARG', tag: name, message: `tag ${JSON.stringify(name)} is read-only (${readOnlyWhy(tag)})` });
      continue;
    }
    const rawText = ctx.rawText ? ctx.rawText(name) : undefined;
    const shown = () => (rawText !== undefined ? rawText : describe(value));
    try {
      out.push({ name, ops: encodeOps(tag, value, ctx, shown), value });
    } catch (err) {
      const e = toNinesError(err, 'NINES_ERR_INVALID_VALUE');
      problems.push({ code: e.code === 'NINES_ERR_INVALID_ARG' ? 'NINES_ERR_INVALID_VALUE' : e.code, tag: name, message: `tag ${JSON.stringify(name)} (${tag.type}): ${e.message}` });
    }
  }
  if (problems.length !== 0) {
    // a value problem is the more specific refusal; an unknown name is a bad argument
    const code = REFUSAL_ORDER.find((c) => problems.some((p) => p.code === c)) || 'NINES_ERR_INVALID_ARG';
    const text = problems.length === 1 ? problems[0].message : `${problems.length} values refused, nothing written: ${problems.map((p) => p.message).join('; ')}`;
    throw new NinesError(code, text, { field: problems[0].tag, tag: problems[0].tag, problems });
  }
  return out;
}

/**
 * @param {() => string} shown how the value was sent, for a refusal's message
 * @returns {Array<object|string>} the requests that write `value` to `tag`, in order
 */
function encodeOps (tag, value, ctx, shown) {
  if (ctx.protocol === 'ascii') {
    if (tag.table === 'output') return [ascii.setOutput(ctx.address, tag.address, toBit(value, 'the value', shown))];
    return [ascii.setAnalog(ctx.address, tag.address, toVolts(value, tag, shown))];
  }
  const lacks = ctx.unsupportedFunctionCodes || [];
  const unit = ctx.unitId === undefined ? {} : { unitId: ctx.unitId };
  if (tag.table === 'coil') {
    const on = toBit(value, 'the value', shown);
    return [lacks.includes(5) ? { fc: 15, address: tag.address, values: [on], ...unit } : { fc: 5, address: tag.address, value: on, ...unit }];
  }
  if (PART_TYPES.includes(tag.type)) {
    if (lacks.includes(22)) {
      throw new NinesError('NINES_ERR_FC_UNSUPPORTED', `${partName(tag)}: written only with FC22 mask write, which the device lacks (its unsupportedFunctionCodes lists 22); a read and a write of the whole register instead would undo a change another writer made between the two`, { fc: 22 });
    }
    const { mask, bits } = partBits(tag, value, shown);
    return [{ fc: 22, address: tag.address, andMask: ~mask & 0xFFFF, orMask: bits, ...unit }];
  }
  let words;
  if (tag.type === 'string') {
    if (typeof value !== 'string') throw new NinesError('NINES_ERR_INVALID_VALUE', `needs a string of at most ${tag.span * 2} characters; got ${shown()}`, { type: 'string' });
    words = encodeValues(value, { type: 'string', byteOrder: tag.byteOrder, count: tag.span * 2 });
  } else if (tag.enum !== undefined) {
    words = encodeOne(enumRaw(tag, value, shown), { ...tag, shown });
  } else {
    words = encodeOne(value, { ...tag, shown });
  }
  if (words.length === 1 && !lacks.includes(6)) return [{ fc: 6, address: tag.address, value: words[0], ...unit }];
  if (!lacks.includes(16)) return [{ fc: 16, address: tag.address, values: words, ...unit }];
  return words.map((w, i) => ({ fc: 6, address: tag.address + i, value: w, ...unit }));
}

/**
 * The bits a part of a register owns (`mask`) and its new value placed in them (`bits`): FC22 sets
 * the register to (current AND NOT mask) OR bits.
 * @param {import('./spec').Tag} tag a bit, bits, int8 or uint8 tag
 * @param {unknown} value
 * @param {() => string} shown
 * @returns {{mask: number, bits: number}}
 * @throws {NinesError} NINES_ERR_INVALID_VALUE
 */
function partBits (tag, value, shown) {
  if (tag.type === 'bit') {
    const mask = 1 << tag.bit;
    return { mask, bits: toBit(value, 'the value', shown) ? mask : 0 };
  }
  if (tag.type === 'bits') {
    const raw = tag.enum !== undefined ? enumRaw(tag, value, shown) : value;
    const max = 2 ** tag.width - 1;
    if (!Number.isInteger(raw) || raw < 0 || raw > max) {
      throw new NinesError('NINES_ERR_INVALID_VALUE', `needs an integer from 0 to ${max} (${tag.width} bits); got ${shown()}`, { type: 'bits' });
    }
    const mask = (max << tag.bit) & 0xFFFF;
    return { mask, bits: (raw << tag.bit) & mask };
  }
  // int8 and uint8: encodeOne checks the value (scale and offset too) and places it in its byte
  const mask = tag.byte === 'high' ? 0xFF00 : 0x00FF;
  const [word] = encodeOne(tag.enum !== undefined ? enumRaw(tag, value, shown) : value, { ...tag, shown });
  return { mask, bits: word & mask };
}

/** The raw value an enum tag's label (or a raw value the enum names) stands for */
function enumRaw (tag, value, shown) {
  const raw = valueOf(tag.enum, value);
  if (raw !== undefined) return raw;
  const labels = Object.values(tag.enum);
  const some = labels.slice(0, 10).map((l) => JSON.stringify(l)).join(', ') + (labels.length > 10 ? ', …' : '');
  throw new NinesError('NINES_ERR_INVALID_VALUE', `${shown()} is not a label of its enum (${some})`, { type: tag.type });
}

/** What part of its register a part tag is, for messages */
function partName (tag) {
  if (tag.type === 'bit') return `bit ${tag.bit} of holding ${tag.address}`;
  if (tag.type === 'bits') return `bits ${tag.bit}-${tag.bit + tag.width - 1} of holding ${tag.address}`;
  return `the ${tag.byte} byte of holding ${tag.address}`;
}

/** Volts for an analog channel: (value - offset) / scale, within the module's ±99.999 V format; a number only, never text */
function toVolts (v, tag, shown) {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new NinesError('NINES_ERR_INVALID_VALUE', `needs a finite number; got ${shown()}`, { type: tag.type });
  const volts = (v - tag.offset) / tag.scale;
  if (Math.abs(Number(volts.toFixed(3))) > 99.999) throw new NinesError('NINES_ERR_INVALID_VALUE', `${shown()} is ${volts} V, outside the module's -99.999 to +99.999 V`, { type: tag.type });
  return volts;
}

function readOnlyWhy (tag) {
  if (tag.scaleFrom !== undefined) return `its scale comes from tag ${JSON.stringify(tag.scaleFrom)}, read in a poll: a write would have to read it first`;
  if (tag.table === 'discrete' || tag.table === 'input' || tag.table === 'counter') return `${tag.table} is a read-only table`;
  return 'marked readOnly';
}

function suggest (name, byName) {
  const lower = name.toLowerCase();
  for (const known of byName.keys()) if (known.toLowerCase() === lower) return ` (did you mean "${known}"?)`;
  return '';
}

function describe (v) {
  if (Array.isArray(v)) return 'an array';
  return show(v);
}

/**
 * Sends encoded writes one after another, in the order asked, and stops at the first that fails:
 * the writes after it are not sent. Order carries meaning in a write such as `{ setpoint: 50,
 * enable: true }`, and enabling a drive whose new setpoint did not arrive would run it on the old one.
 * A failed tag says what the device holds (write-outcome.js): `written: false` when the write
 * provably never reached it (or it answered that it did not take it); `written: "unknown"`, code
 * NINES_ERR_WRITE_UNKNOWN and the cause, when it went out and its outcome is unknown (a timeout,
 * a dropped connection, a device removed meanwhile); a write of several requests that failed part
 * way, how many went through (`written: "1 of 2"`) or that the one after them is unknown.
 * @param {TagWrite[]} writes
 * @param {(op: any) => Promise<object>} request a device user's request
 * @returns {Promise<{ok: boolean, results: Record<string, {ok: true}|{ok: false, code: string, message: string, written: false|string, cause?: object}|{ok: false, skipped: true, message: string}>}>}
 *   never rejects: each tag says whether it was written, failed or not sent (skipped)
 */
async function runTagWrites (writes, request) {
  const results = {};
  let failed = null;
  for (const w of writes) {
    if (failed !== null) {
      results[w.name] = { ok: false, skipped: true, message: `not sent: the write of tag ${JSON.stringify(failed)} before it failed` };
      continue;
    }
    let done = 0;
    try {
      for (const op of w.ops) { await request(op); done++; }
      results[w.name] = { ok: true };
    } catch (err) {
      failed = w.name;
      results[w.name] = failure(toNinesError(err), done, w.ops.length);
    }
  }
  return { ok: failed === null, results };
}

/** A tag's failed write: what the device holds now, as far as anyone can tell */
function failure (e, done, total) {
  const several = total > 1;
  if (notWritten(e)) return { ok: false, code: e.code, message: e.message, written: several && done > 0 ? `${done} of ${total}` : false };
  const u = unknownError(e);
  const out = { ok: false, code: u.code, message: u.message, written: 'unknown', cause: u.details.cause };
  // the requests before the one in doubt went through
  if (several) out.message = `${done} of ${total} requests went through, the next one ${u.message}`;
  return out;
}

module.exports = { encodeTagWrites, runTagWrites };
