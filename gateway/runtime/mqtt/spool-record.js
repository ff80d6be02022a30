'use strict';

const zlib = require('node:zlib');

/**
 * One spooled message on disk, framed so that a torn or rotted record is found and never replayed:
 *
 *   0  u32 LE  length of what follows the checksum (L)
 *   4  u32 LE  CRC-32 of those L bytes
 *   8  u8      kind: 1 latency summary, 2 value
 *   9  u8      reserved (0)
 *   10 u16 LE  job name length J
 *   12 f64 LE  seq (latency) or -1
 *   20 f64 LE  time, epoch ms: a summary's `end`, a value's read time `ts`
 *   28 J bytes job name, UTF-8
 *   .. payload, as published (JSON, UTF-8)
 *
 * seq and time sit in the header so that opening a spool learns where each job's stream stands
 * without parsing a single payload.
 */

const HEAD_BYTES = 8;
const META_BYTES = 20;
/** A record longer than this is refused (a summary is a few KiB); it also bounds what a corrupt length can make us read */
const MAX_RECORD_BYTES = 16 * 1024 * 1024;
const KINDS = { latency: 1, value: 2 };
const KIND_NAMES = { 1: 'latency', 2: 'value' };

/** zlib.crc32 came in Node 20.15 / 22.2; the table below serves older 20.x with the same result. */
const crc32 = typeof zlib.crc32 === 'function' ? zlib.crc32 : tableCrc32;

let TABLE = null;
/**
 * CRC-32 (IEEE 802.3, the one zlib and gzip use).
 * @param {Uint8Array} buf
 * @returns {number} unsigned 32-bit
 */
function tableCrc32 (buf) {
  if (TABLE === null) {
    TABLE = new Int32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      TABLE[n] = c;
    }
  }
  let c = -1;
  for (let i = 0; i < buf.length; i++) c = TABLE[(c ^ buf[i]) & 0xff] ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}

/**
 * @typedef {object} SpoolRecord
 * @property {'latency'|'value'} kind
 * @property {string} job
 * @property {number} seq the summary's seq, -1 for a value
 * @property {number} time epoch ms (summary end, value read time)
 * @property {Buffer} payload
 */

/**
 * @param {SpoolRecord} rec
 * @returns {Buffer} the framed record
 */
function encodeRecord ({ kind, job, seq, time, payload }) {
  const jobBytes = Buffer.byteLength(job);
  const body = META_BYTES + jobBytes + payload.length;
  const buf = Buffer.allocUnsafe(HEAD_BYTES + body);
  buf.writeUInt32LE(body, 0);
  buf.writeUInt8(KINDS[kind], 8);
  buf.writeUInt8(0, 9);
  buf.writeUInt16LE(jobBytes, 10);
  buf.writeDoubleLE(typeof seq === 'number' ? seq : -1, 12);
  buf.writeDoubleLE(typeof time === 'number' && Number.isFinite(time) ? time : 0, 20);
  buf.write(job, 28, 'utf8');
  payload.copy(buf, 28 + jobBytes);
  buf.writeUInt32LE(crc32(buf.subarray(HEAD_BYTES)), 4);
  return buf;
}

/**
 * Reads the record at `off`.
 * @param {Buffer} buf
 * @param {number} off
 * @returns {{rec: SpoolRecord, next: number}|{bad: 'short'|'length'|'checksum'|'kind'}} `short`: the
 *   buffer ends inside it (a torn tail, or read more); the others: corrupt
 */
function decodeRecord (buf, off) {
  if (buf.length - off < HEAD_BYTES) return { bad: 'short' };
  const body = buf.readUInt32LE(off);
  if (body < META_BYTES || body > MAX_RECORD_BYTES) return { bad: 'length' };
  if (buf.length - off - HEAD_BYTES < body) return { bad: 'short' };
  const start = off + HEAD_BYTES;
  if (crc32(buf.subarray(start, start + body)) !== buf.readUInt32LE(off + 4)) return { bad: 'checksum' };
  const kind = KIND_NAMES[buf.readUInt8(start)];
  const jobBytes = buf.readUInt16LE(start + 2);
  if (!kind || META_BYTES + jobBytes > body) return { bad: 'kind' };
  const jobEnd = start + META_BYTES + jobBytes;
  return {
    rec: {
      kind,
      job: buf.toString('utf8', start + META_BYTES, jobEnd),
      seq: buf.readDoubleLE(start + 4),
      time: buf.readDoubleLE(start + 12),
      payload: Buffer.from(buf.subarray(jobEnd, start + body))
    },
    next: start + body
  };
}

module.exports = { encodeRecord, decodeRecord, crc32, tableCrc32, HEAD_BYTES, MAX_RECORD_BYTES };
