'use strict';

/**
 * Modbus framing shared by the client and the simulators: function codes, exception names, the RTU
 * CRC-16, MBAP headers (TCP) and the length rules that let a reader know when an RTU frame is
 * complete without waiting for the 3.5-character silence.
 * References: Modbus Application Protocol v1.1b3; Modbus over Serial Line v1.02.
 */

const { FCS, REPLY, SUPPORTED_FCS } = require('./function-codes');

const FC = Object.freeze({
  READ_COILS: 1,
  READ_DISCRETE_INPUTS: 2,
  READ_HOLDING_REGISTERS: 3,
  READ_INPUT_REGISTERS: 4,
  WRITE_SINGLE_COIL: 5,
  WRITE_SINGLE_REGISTER: 6,
  WRITE_MULTIPLE_COILS: 15,
  WRITE_MULTIPLE_REGISTERS: 16,
  DIAGNOSTICS: 8,
  MASK_WRITE_REGISTER: 22,
  READ_WRITE_MULTIPLE_REGISTERS: 23,
  ENCAPSULATED_INTERFACE: 43
});

/** MEI type of FC43 that reads the device identification (§6.21) */
const MEI_READ_DEVICE_ID = 0x0E;

/** Bytes of an FC43/14 reply before its first object: function code, MEI type, read code, conformity level, more follows, next object id, number of objects */
const FC43_HEADER = 7;

/** Exception code → name, as the spec spells them */
const EXCEPTIONS = Object.freeze({
  1: 'ILLEGAL FUNCTION',
  2: 'ILLEGAL DATA ADDRESS',
  3: 'ILLEGAL DATA VALUE',
  4: 'SERVER DEVICE FAILURE',
  5: 'ACKNOWLEDGE',
  6: 'SERVER DEVICE BUSY',
  8: 'MEMORY PARITY ERROR',
  10: 'GATEWAY PATH UNAVAILABLE',
  11: 'GATEWAY TARGET DEVICE FAILED TO RESPOND'
});

/** MBAP header length in bytes (transaction id, protocol id, length, unit id) */
const MBAP_LENGTH = 7;
/** Largest PDU: 253 bytes (256-byte RTU ADU less address and CRC) */
const MAX_PDU_LENGTH = 253;

const CRC_TABLE = (() => {
  const t = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = (c & 1) ? (c >>> 1) ^ 0xA001 : c >>> 1;
    t[i] = c;
  }
  return t;
})();

/**
 * CRC-16/MODBUS over buf[start, end).
 * @param {Buffer} buf
 * @param {number} [start=0]
 * @param {number} [end=buf.length]
 * @returns {number} 16-bit CRC; on the wire low byte first
 */
function crc16 (buf, start = 0, end = buf.length) {
  let crc = 0xFFFF;
  for (let i = start; i < end; i++) crc = (crc >>> 8) ^ CRC_TABLE[(crc ^ buf[i]) & 0xFF];
  return crc;
}

/**
 * Builds an RTU ADU: unit id, PDU, CRC (low byte first).
 * @param {number} unitId 0-255
 * @param {Buffer} pdu function code and data
 * @returns {Buffer}
 */
function rtuFrame (unitId, pdu) {
  const out = Buffer.allocUnsafe(pdu.length + 3);
  out[0] = unitId;
  pdu.copy(out, 1);
  const crc = crc16(out, 0, pdu.length + 1);
  out[pdu.length + 1] = crc & 0xFF;
  out[pdu.length + 2] = crc >>> 8;
  return out;
}

/**
 * Checks the CRC of a complete RTU ADU.
 * @param {Buffer} adu
 * @returns {boolean}
 */
function rtuCrcOk (adu) {
  if (adu.length < 4) return false;
  const crc = crc16(adu, 0, adu.length - 2);
  return adu[adu.length - 2] === (crc & 0xFF) && adu[adu.length - 1] === (crc >>> 8);
}

/**
 * Builds a TCP ADU: MBAP header then PDU.
 * @param {number} transactionId 0-65535
 * @param {number} unitId 0-255
 * @param {Buffer} pdu
 * @returns {Buffer}
 */
function mbapFrame (transactionId, unitId, pdu) {
  const out = Buffer.allocUnsafe(MBAP_LENGTH + pdu.length);
  out.writeUInt16BE(transactionId & 0xFFFF, 0);
  out.writeUInt16BE(0, 2);
  out.writeUInt16BE(pdu.length + 1, 4);
  out[6] = unitId;
  pdu.copy(out, MBAP_LENGTH);
  return out;
}

/**
 * Reads an MBAP header at `offset`.
 * @param {Buffer} buf
 * @param {number} [offset=0]
 * @returns {{transactionId: number, protocolId: number, length: number, unitId: number, aduLength: number}}
 *   `length` is the MBAP length field (unit id + PDU); `aduLength` the whole frame's byte count
 */
function readMbap (buf, offset = 0) {
  const length = buf.readUInt16BE(offset + 4);
  return {
    transactionId: buf.readUInt16BE(offset),
    protocolId: buf.readUInt16BE(offset + 2),
    length,
    unitId: buf[offset + 6],
    aduLength: 6 + length
  };
}

/**
 * Length of a complete RTU *request* ADU given its first bytes, or 0 when more bytes are needed to know,
 * or -1 for a function code whose length cannot be known (the reader must fall back to inter-frame silence).
 * @param {Buffer} buf bytes received so far, starting at the address byte
 * @returns {number}
 */
function rtuRequestLength (buf) {
  if (buf.length < 2) return 0;
  const t = FCS[buf[1]];
  if (t === null) return -1;
  // address, PDU, CRC; FC8 counts as fixed: one data word is the only form nines sends
  if (t.requestCountAt === 0) return 3 + t.requestPdu;
  // the byte count is ADU byte 1 + countAt (after the address), and that many bytes follow it
  const at = 1 + t.requestCountAt;
  return buf.length <= at ? 0 : at + 3 + buf[at];
}

/**
 * Length of a complete RTU *response* ADU given its first bytes, or 0 when more bytes are needed, or -1 when
 * the function code is not one nines speaks.
 * @param {Buffer} buf bytes received so far, starting at the address byte
 * @param {number} [end=buf.length] bytes received so far in buf
 * @param {DeviceIdWalk|null} [walk] an FC43 reply's walk, to resume from where the last call left it
 *   (the caller starts it per frame: DeviceIdWalk#start); null: walked from the start
 * @returns {number}
 */
function rtuResponseLength (buf, end = buf.length, walk = null) {
  if (end < 2) return 0;
  const fc = buf[1];
  if (fc & 0x80) return 5;
  const t = FCS[fc];
  if (t === null) return -1;
  if (t.replyLength === REPLY.FIXED) return 3 + t.replyPdu;
  if (t.replyLength === REPLY.COUNTED) return end < 3 ? 0 : 5 + buf[2];
  return deviceIdReplyLength(buf, 1, end, walk);
}

/**
 * Walks the objects of an FC43/14 reply, each an id, a length and that many bytes, once each however
 * the bytes come: a walk resumes where the last call left it, so a reply read as it arrives costs
 * time linear in its bytes. The reply's length (frame.js, rtu-transport.js), its check and its parse
 * (pdu.js) are all this walk.
 */
class DeviceIdWalk {
  constructor () {
    this.start(0, MAX_PDU_LENGTH);
  }

  /**
   * Starts over on a reply.
   * @param {number} at offset of the reply's function code in the buffers given to walk()
   * @param {number} limit the longest the PDU may be (MAX_PDU_LENGTH; a check: the PDU's own length)
   * @returns {this}
   */
  start (at, limit) {
    this.at = at;
    this.limit = limit;
    /** offset of the next object's header */
    this.off = at + FC43_HEADER;
    /** objects not walked yet; -1 until the header has been read */
    this.left = -1;
    /** when walk() returns 0: the offset the bytes must reach for it to move on */
    this.need = 0;
    /** the walk's answer once known: the PDU's end, or -1 */
    this.end = 0;
    return this;
  }

  /**
   * Walks on over what has come of the reply, buf up to `end`.
   * @param {Buffer} buf
   * @param {number} end offset after the bytes there are so far
   * @param {Array<[number, string]>|null} [objects] receives each object walked as [id, text] (latin1:
   *   the spec's ASCII, byte for byte); only for a reply already checked whole
   * @returns {number} the offset after the last object (the PDU's end, which lies past `end` while the
   *   last object's bytes are still coming); 0 when more bytes are needed to know it (`need` says up to
   *   where); -1 when it cannot be such a reply: a MEI type other than 14, or longer than `limit`
   */
  walk (buf, end, objects = null) {
    if (this.end !== 0) return this.end;
    const at = this.at;
    if (this.left < 0) {
      if (end < at + FC43_HEADER) { this.need = at + FC43_HEADER; return 0; }
      if (buf[at + 1] !== MEI_READ_DEVICE_ID) return (this.end = -1);
      this.left = buf[at + 6];
    }
    let off = this.off;
    for (; this.left > 0; this.left--) {
      if (end < off + 2) {
        this.off = off;
        this.need = off + 2;
        return 0;
      }
      const n = buf[off + 1];
      if (objects !== null) objects.push([buf[off], buf.toString('latin1', off + 2, off + 2 + n)]);
      off += 2 + n;
      if (off - at > this.limit) return (this.end = -1);
    }
    this.off = off;
    return (this.end = off);
  }
}

/** The walk of calls that do not resume one (single-threaded, and each call starts it afresh) */
const SCRATCH_WALK = new DeviceIdWalk();

/**
 * Length of an RTU FC43/14 reply, which varies: its objects are walked from their headers as the bytes come.
 * @param {Buffer} buf bytes received so far
 * @param {number} at offset of the function code in buf (1: after the RTU address)
 * @param {number} [end=buf.length] bytes received so far in buf
 * @param {DeviceIdWalk|null} [walk] to resume (see rtuResponseLength); null: walked from the start
 * @returns {number} at + the PDU's length + 2 (the CRC), 0 when more bytes are needed to know it, -1
 *   when it cannot be such a reply (a MEI type other than 14, or longer than a PDU may be)
 */
function deviceIdReplyLength (buf, at, end = buf.length, walk = null) {
  const w = walk === null ? SCRATCH_WALK.start(at, MAX_PDU_LENGTH) : walk;
  const pduEnd = w.walk(buf, end);
  return pduEnd > 0 ? pduEnd + 2 : pduEnd;
}

/**
 * The 3.5-character silent interval that ends an RTU frame, in microseconds. Above 19200 baud the spec fixes it
 * at 1750 µs.
 * @param {number} baudRate
 * @param {number} [bitsPerChar=11] start + 8 data + parity/stop bits
 * @returns {number}
 */
function rtuSilenceUs (baudRate, bitsPerChar = 11) {
  if (baudRate > 19200) return 1750;
  return Math.ceil(3.5 * bitsPerChar * 1e6 / baudRate);
}

/** @param {number} code @returns {string} */
function exceptionName (code) {
  return EXCEPTIONS[code] || `UNKNOWN EXCEPTION ${code}`;
}

/**
 * A 16-bit word as messages show it (CRCs, data words, coil values).
 * @param {number} n 0-65535
 * @returns {string} four upper-case hex digits: 00FF
 */
function hex4 (n) {
  return n.toString(16).toUpperCase().padStart(4, '0');
}

module.exports = {
  FC,
  SUPPORTED_FCS,
  EXCEPTIONS,
  MBAP_LENGTH,
  MAX_PDU_LENGTH,
  MEI_READ_DEVICE_ID,
  FC43_HEADER,
  DeviceIdWalk,
  deviceIdReplyLength,
  crc16,
  rtuFrame,
  rtuCrcOk,
  mbapFrame,
  readMbap,
  rtuRequestLength,
  rtuResponseLength,
  rtuSilenceUs,
  exceptionName,
  hex4
};
