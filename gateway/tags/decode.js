'use strict';

/**
 * Reply of one read → the engineering values of its tags, each with its quality. Pure; runs where
 * the reply arrives (the worker thread that owns the device), so only named values travel on.
 *
 * A register that holds no value (NaN, ±Infinity, the float32 "no value" sentinel, a BCD nibble
 * above 9, a raw value its enum has no label for) gives the tag null and the quality code that says
 * so (values/quality.js). A tag scaled from another register (scaleFrom) is left as its raw value:
 * the reader applies the exponent once the whole poll is in (applyScaleFrom).
 */

const { decodeRaw, decodeRegisters } = require('../values/registers');
const { engineeringValue, timesPowerOfTen } = require('../values/rounding');
const { QUALITY, rawQuality, isScaleExponent, SCALE_EXPONENT_LIMIT } = require('../values/quality');
const { labelOf } = require('./enum');

/**
 * Decodes the tags of one block from its reply into `values` and `codes` (by tag index).
 * @param {import('./plan').Block} block
 * @param {import('./spec').Tag[]} tags
 * @param {object} reply the driver's reply (Modbus: data and buffer; ASCII: outputs/inputs, count, value)
 * @param {Array<unknown>} values receives tag values at the tags' indexes (null where there is none)
 * @param {Array<string|null>} [codes] receives each tag's quality: 'ok' or a code of values/quality.js
 * @returns {void}
 * @throws {import('../base/errors').NinesError} NINES_ERR_BAD_REPLY when the reply lacks what a tag needs
 */
function decodeBlock (block, tags, reply, values, codes = []) {
  if (block.command !== undefined) { decodeAscii(block, tags, reply, values, codes); return; }
  if (block.fc <= 2) {
    const bits = reply.data;
    for (const i of block.tags) { values[i] = bits[tags[i].address - block.address] === true; codes[i] = QUALITY.OK; }
    return;
  }
  const bytes = registerBytes(reply);
  for (const i of block.tags) {
    const t = tags[i];
    const off = 2 * (t.address - block.address);
    let raw;
    if (t.type === 'bit') {
      values[i] = ((((bytes[off] << 8) | bytes[off + 1]) >> t.bit) & 1) === 1;
      codes[i] = QUALITY.OK;
      continue;
    } else if (t.type === 'string') {
      values[i] = decodeRegisters(bytes.subarray(off, off + 2 * t.span), { type: 'string', byteOrder: t.byteOrder });
      codes[i] = QUALITY.OK;
      continue;
    } else if (t.type === 'bits') {
      raw = (((bytes[off] << 8) | bytes[off + 1]) >> t.bit) & ((1 << t.width) - 1);
    } else {
      raw = decodeRaw(bytes, off, t);
    }
    const bad = rawQuality(raw, t.type);
    if (bad !== null) {
      values[i] = null;
      codes[i] = bad;
    } else if (t.enum !== undefined) {
      const label = labelOf(t.enum, raw);
      values[i] = label === undefined ? null : label;
      codes[i] = label === undefined ? QUALITY.UNKNOWN_ENUM : QUALITY.OK;
    } else {
      values[i] = t.scaleFrom !== undefined || t.type === 'bits' ? raw : engineeringValue(raw, t.type, t.scale, t.offset);
      codes[i] = QUALITY.OK;
    }
  }
}

/**
 * Applies the exponents of tags scaled from another register, once every read of a poll is in.
 * A tag whose scale register was not read, or holds no usable exponent (beyond ±10, or SunSpec's
 * -32768 for "not implemented"), gets null and NINES_ERR_SCALE_FACTOR; one that was not read keeps
 * its own code.
 * @param {import('./spec').Tag[]} tags
 * @param {Array<[number, number, number[]]>} pairs [tag index, scale tag index, scale per exponent] per
 *   scaled tag (scaleLinks)
 * @param {Array<unknown>} values raw values of the scaled tags in, engineering values out
 * @param {Array<string|null>} codes
 * @returns {void}
 */
function applyScaleFrom (tags, pairs, values, codes) {
  for (const [i, s, scales] of pairs) {
    if (codes[i] !== QUALITY.OK) continue;
    const exponent = s < 0 ? undefined : values[s];
    if (s < 0 || codes[s] !== QUALITY.OK || !isScaleExponent(exponent)) {
      values[i] = null;
      codes[i] = QUALITY.SCALE_FACTOR;
      continue;
    }
    const t = tags[i];
    values[i] = engineeringValue(values[i], t.type, scales[exponent + SCALE_EXPONENT_LIMIT], t.offset);
  }
}

/**
 * The scaled tags of a list, the index of each one's scale tag (-1: not in the list), and its scale
 * for each exponent a scale register may hold, worked out once here rather than at every poll.
 * @param {import('./spec').Tag[]} tags
 * @returns {Array<[number, number, number[]]>}
 */
function scaleLinks (tags) {
  const at = new Map(tags.map((t, i) => [t.name, i]));
  const out = [];
  tags.forEach((t, i) => {
    if (t.scaleFrom === undefined) return;
    const scales = [];
    for (let e = -SCALE_EXPONENT_LIMIT; e <= SCALE_EXPONENT_LIMIT; e++) scales.push(timesPowerOfTen(t.scale, e));
    out.push([i, at.has(t.scaleFrom) ? at.get(t.scaleFrom) : -1, scales]);
  });
  return out;
}

/** The register bytes of a read reply (a reply that crossed threads holds a Uint8Array, or only data) */
function registerBytes (reply) {
  const b = reply.buffer;
  if (Buffer.isBuffer(b)) return b;
  if (b instanceof Uint8Array) return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  const words = reply.data;
  const out = Buffer.allocUnsafe(words.length * 2);
  for (let i = 0; i < words.length; i++) out.writeUInt16BE(words[i], 2 * i);
  return out;
}

function decodeAscii (block, tags, reply, values, codes) {
  for (const i of block.tags) {
    const t = tags[i];
    codes[i] = QUALITY.OK;
    if (t.table === 'input' || t.table === 'output') {
      const lines = t.table === 'input' ? reply.inputs : reply.outputs;
      values[i] = lines[t.address] === true;
    } else {
      const raw = t.table === 'counter' ? reply.count : reply.value;
      values[i] = engineeringValue(raw, t.type, t.scale, t.offset);
    }
  }
}

module.exports = { decodeBlock, applyScaleFrom, scaleLinks };
