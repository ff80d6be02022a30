'use strict';

/**
 * Modbus framing shared by the client and the simulators: function codes, exception names, the RTU
 * CRC-16, MBAP headers (TCP) and the length rules that let a reader know when an RTU frame is
 * complete without waiting for the 3.5-character silence.
 * References: Modbus Application Protocol v1.1b3; Modbus over Serial Line v1.02.
 */

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

/** Function codes nines speaks (FC43 with MEI type 14, read device identification, only) */
const SUPPORTED_FCS = Object.freeze([1, 2, 3, 4, 5, 6, 8, 15, 16, 22, 23, 43]);

/** MEI type of FC43 that reads the device identification (§6.21) */
const MEI_READ_DEVICE_ID = 0x0E;

/** Bytes of an FC23 request before its values: function code, read address, read quantity, write address, write quantity, byte count */
const FC23_HEADER = 10;
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
  const fc = buf[1];
  if ((fc >= 1 && fc <= 6) || fc === 8) return 8; // FC8: sub-function and one data word (the only form nines sends)
  if (fc === 15 || fc === 16) return buf.length < 7 ? 0 : 9 + buf[6];
  if (fc === 22) return 10;
  // the byte count is the PDU's 10th byte, after the address: ADU byte 10
  if (fc === 23) return buf.length < 1 + FC23_HEADER ? 0 : 3 + FC23_HEADER + buf[FC23_HEADER];
  if (fc === 43) return 7; // MEI type, read code, object id
  return -1;
}

/**
 * Length of a complete RTU *response* ADU given its first bytes, or 0 when more bytes are needed, or -1 when
 * the function code is not one nines speaks.
 * @param {Buffer} buf bytes received so far, starting at the address byte
 * @returns {number}
 */
function rtuResponseLength (buf) {
  if (buf.length < 2) return 0;
  const fc = buf[1];
  if (fc & 0x80) return 5;
  if ((fc >= 1 && fc <= 4) || fc === 23) return buf.length < 3 ? 0 : 5 + buf[2];
  if (fc === 5 || fc === 6 || fc === 8 || fc === 15 || fc === 16) return 8;
  if (fc === 22) return 10;
  if (fc === 43) return deviceIdReplyLength(buf, 1);
  return -1;
}

/**
 * Length of an RTU FC43/14 reply, which varies: its objects (each an id, a length and that many bytes)
 * are walked from their headers as the bytes come.
 * @param {Buffer} buf bytes received so far
 * @param {number} at offset of the function code in buf (1: after the RTU address)
 * @returns {number} at + the PDU's length + 2 (the CRC), 0 when more bytes are needed to know it, -1
 *   when it cannot be such a reply (a MEI type other than 14, or longer than a PDU may be)
 */
function deviceIdReplyLength (buf, at) {
  if (buf.length < at + FC43_HEADER) return 0;
  if (buf[at + 1] !== MEI_READ_DEVICE_ID) return -1;
  let off = at + FC43_HEADER;
  for (let i = buf[at + 6]; i > 0; i--) {
    if (buf.length < off + 2) return 0;
    off += 2 + buf[off + 1];
    if (off - at > MAX_PDU_LENGTH) return -1;
  }
  return off + 2;
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

module.exports = {
  FC,
  SUPPORTED_FCS,
  EXCEPTIONS,
  MBAP_LENGTH,
  MAX_PDU_LENGTH,
  MEI_READ_DEVICE_ID,
  FC23_HEADER,
  FC43_HEADER,
  deviceIdReplyLength,
  crc16,
  rtuFrame,
  rtuCrcOk,
  mbapFrame,
  readMbap,
  rtuRequestLength,
  rtuResponseLength,
  rtuSilenceUs,
  exceptionName
};
