'use strict';

/**
 * Reply of one read → the engineering values of its tags. Pure; runs where the reply arrives (the
 * worker thread that owns the device), so only named values travel on.
 */

const { decodeOne, decodeRegisters } = require('../values/registers');
const { engineeringValue } = require('../values/rounding');

/**
 * Decodes the tags of one block from its reply into `values` (by tag index).
 * @param {import('./plan').Block} block
 * @param {import('./spec').Tag[]} tags
 * @param {object} reply the driver's reply (Modbus: data and buffer; ASCII: outputs/inputs, count, value)
 * @param {Array<unknown>} values receives tag values at the tags' indexes
 * @returns {void}
 * @throws {import('../base/errors').NinesError} NINES_ERR_BAD_REPLY when the reply lacks what a tag needs
 */
function decodeBlock (block, tags, reply, values) {
  if (block.command !== undefined) { decodeAscii(block, tags, reply, values); return; }
  if (block.fc <= 2) {
    const bits = reply.data;
    for (const i of block.tags) values[i] = bits[tags[i].address - block.address] === true;
    return;
  }
  const bytes = registerBytes(reply);
  for (const i of block.tags) {
    const t = tags[i];
    const off = 2 * (t.address - block.address);
    if (t.type === 'bit') {
      values[i] = ((((bytes[off] << 8) | bytes[off + 1]) >> t.bit) & 1) === 1;
    } else if (t.type === 'string') {
      values[i] = decodeRegisters(bytes.subarray(off, off + 2 * t.span), { type: 'string', byteOrder: t.byteOrder });
    } else {
      values[i] = decodeOne(bytes, off, t);
    }
  }
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

function decodeAscii (block, tags, reply, values) {
  for (const i of block.tags) {
    const t = tags[i];
    if (t.table === 'input' || t.table === 'output') {
      const lines = t.table === 'input' ? reply.inputs : reply.outputs;
      values[i] = lines[t.address] === true;
    } else {
      const raw = t.table === 'counter' ? reply.count : reply.value;
      values[i] = engineeringValue(raw, t.type, t.scale, t.offset);
    }
  }
}

module.exports = { decodeBlock };
