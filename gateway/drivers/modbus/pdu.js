'use strict';

/**
 * Modbus PDUs (function code + data), independent of TCP or RTU framing: encode a normalized op into a
 * request PDU, and check and decode a response PDU against the request it answers.
 * Reference: Modbus Application Protocol v1.1b3, §6.1-6.12.
 */

const { NinesError } = require('../../base/errors');
const { exceptionName, hex4, DeviceIdWalk, MEI_READ_DEVICE_ID, FC43_HEADER } = require('./frame');
const { FCS, LIST, echoesData, responsePduLength } = require('./function-codes');
const { validateOp, describeOp, kPdu } = require('./op');

/** The walk of FC43 replies checked and parsed here (synchronous: one reply at a time) */
const WALK = new DeviceIdWalk();

/**
 * Encodes the request PDU of an op. Cached on normalized ops: encoding runs once per op, not per request.
 * @param {object} op an op (validated here when it is not normalized yet)
 * @returns {Buffer} function code and data; do not modify it (it is shared)
 * @throws {NinesError} NINES_ERR_INVALID_OP
 */
function encodeRequestPdu (op) {
  const o = validateOp(op);
  const cache = o[kPdu];
  if (cache.pdu !== null) return cache.pdu;
  let pdu;
  switch (FCS[o.fc].kind) {
    case 'diagnostics':
      pdu = Buffer.allocUnsafe(5);
      pdu[0] = 8;
      pdu.writeUInt16BE(o.subFunction, 1);
      pdu.writeUInt16BE(o.data, 3);
      cache.pdu = pdu;
      return pdu;
    case 'deviceId':
      pdu = Buffer.from([43, MEI_READ_DEVICE_ID, o.readCode, o.objectId]);
      cache.pdu = pdu;
      return pdu;
    case 'maskWrite':
      pdu = Buffer.allocUnsafe(7);
      pdu.writeUInt16BE(o.andMask, 3);
      pdu.writeUInt16BE(o.orMask, 5);
      break;
    case 'readWrite': {
      const n = o.values.length;
      pdu = Buffer.allocUnsafe(10 + 2 * n);
      pdu.writeUInt16BE(o.quantity, 3);
      pdu.writeUInt16BE(o.writeAddress, 5);
      pdu.writeUInt16BE(n, 7);
      pdu[9] = 2 * n;
      for (let i = 0; i < n; i++) pdu.writeUInt16BE(o.values[i], 10 + 2 * i);
      break;
    }
    case 'readBits':
    case 'readRegs':
      pdu = Buffer.allocUnsafe(5);
      pdu.writeUInt16BE(o.quantity, 3);
      break;
    case 'writeBit':
      pdu = Buffer.allocUnsafe(5);
      pdu.writeUInt16BE(o.value ? 0xFF00 : 0x0000, 3);
      break;
    case 'writeReg':
      pdu = Buffer.allocUnsafe(5);
      pdu.writeUInt16BE(o.value, 3);
      break;
    case 'writeBits': {
      const bytes = (o.quantity + 7) >> 3;
      pdu = Buffer.alloc(6 + bytes);
      pdu.writeUInt16BE(o.quantity, 3);
      pdu[5] = bytes;
      // Coil n is bit (n % 8) of byte n / 8, least significant bit first
      for (let i = 0; i < o.quantity; i++) if (o.values[i]) pdu[6 + (i >> 3)] |= 1 << (i & 7);
      break;
    }
    case 'writeRegs': {
      pdu = Buffer.allocUnsafe(6 + 2 * o.quantity);
      pdu.writeUInt16BE(o.quantity, 3);
      pdu[5] = 2 * o.quantity;
      for (let i = 0; i < o.quantity; i++) pdu.writeUInt16BE(o.values[i], 6 + 2 * i);
      break;
    }
  }
  pdu[0] = o.fc;
  pdu.writeUInt16BE(o.address, 1);
  cache.pdu = pdu;
  return pdu;
}

/** Function codes whose exception 1 says the device lacks the function (see checkResponse) */
const LACKABLE_FCS = Object.freeze(LIST.filter((t) => t.lackable).map((t) => t.fc));

/**
 * Checks and decodes the response PDU at buf[start, end) into `out.data` (and `out.buffer` for reads).
 * Returns an error instead of throwing: it runs on every reply.
 *   FC1/2 → data: boolean[quantity], buffer: the packed bit bytes
 *   FC3/4 → data: number[quantity] (uint16), buffer: the raw register bytes (big-endian, for typed decoding)
 *   FC5   → data: the echoed coil value (boolean); FC6 → the echoed register value (uint16)
 *   FC15/16 → data: the echoed quantity
 *   FC8   → data: the reply's data word (sub-functions 0, 1, 10: the echo; 11-18: the counter)
 *   FC22  → data: {andMask, orMask} as echoed; FC23 → as FC3 (the registers read)
 *   FC43  → data: {readCode, conformityLevel, moreFollows, nextObjectId, objects: [[id, text], …]}
 * @param {{data?: unknown, buffer?: Buffer}} out receives data and buffer
 * @param {Buffer} buf
 * @param {number} start offset of the function code byte
 * @param {number} end offset after the last PDU byte
 * @param {object} op the normalized request op
 * @param {number} [unitId] the unit asked (for messages)
 * @returns {NinesError|null} NINES_ERR_MODBUS_EXCEPTION or NINES_ERR_BAD_REPLY, or null when decoded
 */
function decodeInto (out, buf, start, end, op, unitId) {
  const err = checkResponse(buf, start, end, op, unitId);
  if (err !== null) return err;
  out.data = decodeData(buf, start, op);
  if (FCS[op.fc].reads !== null) out.buffer = buf.subarray(start + 2, end);
  return null;
}

/**
 * Checks the response PDU at buf[start, end) against the request it answers, allocating nothing
 * when it fits (the client's hot path, issue 11): function code or exception, byte count and
 * length of a read, the echo of a write.
 * @param {Buffer} buf
 * @param {number} start offset of the function code byte
 * @param {number} end offset after the last PDU byte
 * @param {object} op the normalized request op
 * @param {number} [unitId] the unit asked (for messages)
 * @returns {NinesError|null} NINES_ERR_MODBUS_EXCEPTION or NINES_ERR_BAD_REPLY, or null when it fits
 */
function checkResponse (buf, start, end, op, unitId) {
  const fc = op.fc;
  const t = FCS[fc];
  const len = end - start;
  if (len < 1) return badReply(`empty reply PDU to ${describeOp(op, unitId)}`, buf, start, end, op, unitId);
  const rfc = buf[start];
  if (rfc === (fc | 0x80)) {
    if (len !== 2) return badReply(`exception reply to ${describeOp(op, unitId)} has ${len} PDU bytes, expected 2`, buf, start, end, op, unitId);
    const code = buf[start + 1];
    const name = exceptionName(code);
    if (code === 1 && t.lackable) {
      // FC1-6, 15 and 16 are everywhere, and some devices answer exception 1 for an address they
      // lack: theirs stays an exception. The optional ones are lacked when exception 1 says so
      return new NinesError('NINES_ERR_FC_UNSUPPORTED', `${describeOp(op, unitId)}: the device does not support FC${fc} (exception 1 ${name})`,
        { exceptionCode: code, exceptionName: name, fc, op, unitId, pdu: buf.toString('hex', start, end) });
    }
    return new NinesError('NINES_ERR_MODBUS_EXCEPTION', `${describeOp(op, unitId)}: exception ${code} ${name}`,
      { exceptionCode: code, exceptionName: name, fc, op, unitId, pdu: buf.toString('hex', start, end) });
  }
  if (rfc !== fc) return badReply(`reply to ${describeOp(op, unitId)} has function code ${rfc}, expected ${fc}`, buf, start, end, op, unitId);
  if (t.reads !== null) {
    // reads and FC23: a byte count of what was asked, and that many bytes
    const expected = responsePduLength(op) - 2;
    const count = len >= 2 ? buf[start + 1] : -1;
    if (count !== expected || len !== 2 + count) {
      return badReply(`reply to ${describeOp(op, unitId)} has byte count ${count} and ${len} PDU bytes, expected ${expected} and ${expected + 2}`, buf, start, end, op, unitId);
    }
    return null;
  }
  switch (t.kind) {
    case 'deviceId': return checkDeviceId(buf, start, end, op, unitId);
    case 'diagnostics': return checkDiagnostics(buf, start, end, op, unitId);
    case 'maskWrite': {
      // the reply echoes the request: address, AND mask, OR mask
      const pdu = op[kPdu].pdu || encodeRequestPdu(op);
      if (len !== t.replyPdu || buf.compare(pdu, 0, t.echo, start, end) !== 0) return badReply(`reply to ${describeOp(op, unitId)} does not echo it (${len} PDU bytes)`, buf, start, end, op, unitId);
      return null;
    }
  }
  if (len !== t.replyPdu) return badReply(`reply to ${describeOp(op, unitId)} has ${len} PDU bytes, expected ${t.replyPdu}`, buf, start, end, op, unitId);
  const address = (buf[start + 1] << 8) | buf[start + 2];
  const word = (buf[start + 3] << 8) | buf[start + 4];
  if (address !== op.address) return badReply(`reply to ${describeOp(op, unitId)} echoes address ${address}`, buf, start, end, op, unitId);
  if (t.kind === 'writeBit') {
    const want = op.value ? 0xFF00 : 0x0000;
    if (word !== want) return badReply(`reply to ${describeOp(op, unitId)} echoes coil value 0x${hex4(word)}, expected 0x${hex4(want)}`, buf, start, end, op, unitId);
  } else if (t.kind === 'writeReg') {
    if (word !== op.value) return badReply(`reply to ${describeOp(op, unitId)} echoes value ${word}`, buf, start, end, op, unitId);
  } else if (word !== op.quantity) {
    return badReply(`reply to ${describeOp(op, unitId)} echoes quantity ${word}`, buf, start, end, op, unitId);
  }
  return null;
}

/**
 * checkResponse for FC8: the sub-function, and the data word of those that echo it.
 * @returns {NinesError|null}
 */
function checkDiagnostics (buf, start, end, op, unitId) {
  const len = end - start;
  if (len !== 5) return badReply(`reply to ${describeOp(op, unitId)} has ${len} PDU bytes, expected 5`, buf, start, end, op, unitId);
  const sub = (buf[start + 1] << 8) | buf[start + 2];
  if (sub !== op.subFunction) return badReply(`reply to ${describeOp(op, unitId)} echoes sub-function ${sub}`, buf, start, end, op, unitId);
  const data = (buf[start + 3] << 8) | buf[start + 4];
  if (echoesData(op.subFunction) && data !== op.data) return badReply(`reply to ${describeOp(op, unitId)} echoes data 0x${hex4(data)}, expected 0x${hex4(op.data)}`, buf, start, end, op, unitId);
  return null;
}

/**
 * checkResponse for FC43/14: header, then objects each an id, a length and that many bytes, filling the PDU exactly.
 * @returns {NinesError|null}
 */
function checkDeviceId (buf, start, end, op, unitId) {
  const len = end - start;
  if (len < FC43_HEADER || buf[start + 1] !== MEI_READ_DEVICE_ID || buf[start + 2] !== op.readCode) {
    return badReply(`reply to ${describeOp(op, unitId)} is not a device identification for read code ${op.readCode}`, buf, start, end, op, unitId);
  }
  const more = buf[start + 4];
  if (more !== 0 && more !== 0xFF) return badReply(`reply to ${describeOp(op, unitId)} has "more follows" 0x${more.toString(16)}, expected 00 or FF`, buf, start, end, op, unitId);
  // limited to the PDU given: an object that runs past it ends the walk (-1), as one whose header is cut (0)
  const pduEnd = WALK.start(start, len).walk(buf, end);
  if (pduEnd <= 0) return badReply(`reply to ${describeOp(op, unitId)} has an object that runs past its end`, buf, start, end, op, unitId);
  if (pduEnd !== end) return badReply(`reply to ${describeOp(op, unitId)} has ${end - pduEnd} bytes after its last object`, buf, start, end, op, unitId);
  return null;
}

/**
 * The values of a response PDU that checkResponse found fitting (see decodeInto for the shapes): a
 * fresh array for reads, the echoed scalar for writes.
 * @param {Buffer} buf
 * @param {number} start offset of the function code byte
 * @param {object} op the normalized request op
 * @returns {boolean[]|number[]|boolean|number}
 */
function decodeData (buf, start, op) {
  const t = FCS[op.fc];
  // FC23's reply is an FC3 reply: registers read, of the read quantity
  if (t.reads !== null) {
    const d = start + 2;
    const q = op.quantity;
    const data = new Array(q);
    if (t.reads === 'bits') {
      for (let i = 0; i < q; i++) data[i] = (buf[d + (i >> 3)] & (1 << (i & 7))) !== 0;
    } else {
      for (let i = 0; i < q; i++) data[i] = (buf[d + 2 * i] << 8) | buf[d + 2 * i + 1];
    }
    return data;
  }
  switch (t.kind) {
    case 'maskWrite': return { andMask: op.andMask, orMask: op.orMask };
    case 'deviceId': return decodeDeviceId(buf, start);
    case 'writeBit': return op.value;
  }
  return (buf[start + 3] << 8) | buf[start + 4];
}

/**
 * An FC43/14 reply that checkResponse found fitting.
 * @param {Buffer} buf @param {number} start offset of the function code
 * @returns {{readCode: number, conformityLevel: number, moreFollows: boolean, nextObjectId: number, objects: Array<[number, string]>}}
 *   object values as latin1 text (the spec's ASCII, byte for byte)
 */
function decodeDeviceId (buf, start) {
  /** @type {Array<[number, string]>} */
  const objects = [];
  WALK.start(start, Infinity).walk(buf, buf.length, objects);
  return { readCode: buf[start + 2], conformityLevel: buf[start + 3], moreFollows: buf[start + 4] === 0xFF, nextObjectId: buf[start + 5], objects };
}

/** @returns {NinesError} */
function badReply (message, buf, start, end, op, unitId) {
  return new NinesError('NINES_ERR_BAD_REPLY', message, { pdu: buf.toString('hex', start, Math.max(start, end)), op, unitId });
}

/**
 * Checks and decodes a response PDU.
 * @param {Buffer} pdu function code and data
 * @param {object} op the request op (validated here when it is not normalized yet)
 * @param {number} [unitId] for messages
 * @returns {{data: boolean[]|number[]|boolean|number, buffer?: Buffer}} see decodeInto for the shapes
 * @throws {NinesError} NINES_ERR_MODBUS_EXCEPTION, NINES_ERR_BAD_REPLY, NINES_ERR_INVALID_OP
 */
function decodeResponsePdu (pdu, op, unitId) {
  const o = validateOp(op);
  if (!Buffer.isBuffer(pdu)) throw new NinesError('NINES_ERR_INVALID_ARG', `pdu must be a Buffer; got ${typeof pdu}`, { field: 'pdu' });
  /** @type {{data?: any, buffer?: Buffer}} */
  const out = {};
  const err = decodeInto(out, pdu, 0, pdu.length, o, unitId === undefined ? o.unitId : unitId);
  if (err) throw err;
  return out.buffer === undefined ? { data: out.data } : { data: out.data, buffer: out.buffer };
}

module.exports = { encodeRequestPdu, decodeResponsePdu, decodeInto, checkResponse, decodeData, responsePduLength, LACKABLE_FCS };
