'use strict';

const zlib = require('node:zlib');

/**
 * One spooled message on disk, framed so that a torn or rotted record is found and never replayed:
 *
 *   0  u32 LE  length of what follows the checksum (L)
 *   4  u32 LE  CRC-32 of those L bytes
 *   8  u8      kind: 1 latency summary, 2 value
 *   9  u8      flags: bit 0 FLAG_BREAK (see below); 0 in spools written before it
 *   10 u16 LE  job name length J
 *   12 f64 LE  seq: a summary's seq; a value's number in its job's spooled values (1, 2, …), or -1
 *   20 f64 LE  time, epoch ms: a summary's `end`, a value's read time `ts`
 *   28 J bytes job name, UTF-8
 *   .. payload, as published (JSON, UTF-8)
 *
 * seq and time sit in the header so that opening a spool learns where each job's stream stands
 * without parsing a single payload. Within a job, numbers go up by one from record to record, so a
 * damaged record (skipped by walkRecords) shows as a gap, counted for its job; FLAG_BREAK marks the
 * first summary after numbers may have gone elsewhere (a refused write sent them to memory, or a
 * restart), where a gap is no loss of the spool's.
 */

const HEAD_BYTES = 8;
const META_BYTES = 20;
/** A record longer than this is refused (a summary is a few KiB); it also bounds what a corrupt length can make us read */
const MAX_RECORD_BYTES = 16 * 1024 * 1024;
const KINDS = { latency: 1, value: 2 };
const KIND_NAMES = { 1: 'latency', 2: 'value' };
const FLAG_BREAK = 1;

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
 * @property {number} [flags] FLAG_BREAK or 0
 */

/**
 * @param {SpoolRecord} rec
 * @returns {Buffer} the framed record
 */
function encodeRecord ({ kind, job, seq, time, payload, flags = 0 }) {
  const jobBytes = Buffer.byteLength(job);
  const body = META_BYTES + jobBytes + payload.length;
  const buf = Buffer.allocUnsafe(HEAD_BYTES + body);
  buf.writeUInt32LE(body, 0);
  buf.writeUInt8(KINDS[kind], 8);
  buf.writeUInt8(flags, 9);
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
      payload: Buffer.from(buf.subarray(jobEnd, start + body)),
      flags: buf.readUInt8(off + 9)
    },
    next: start + body
  };
}

/**
 * Whether a whole, good record starts at `off` (decodeRecord's checks, allocating nothing): what
 * the resynchronising scan asks at every byte of a damaged stretch.
 * @param {Buffer} buf
 * @param {number} off
 * @returns {boolean}
 */
function recordAt (buf, off) {
  if (buf.length - off < HEAD_BYTES) return false;
  const body = buf.readUInt32LE(off);
  if (body < META_BYTES || body > MAX_RECORD_BYTES || buf.length - off - HEAD_BYTES < body) return false;
  const start = off + HEAD_BYTES;
  if (!KIND_NAMES[buf[start]] || META_BYTES + buf.readUInt16LE(start + 2) > body) return false;
  return crc32(buf.subarray(start, start + body)) === buf.readUInt32LE(off + 4);
}

/**
 * Where the next good record starts: scans forward, byte by byte, for an offset where a whole
 * record's length, kind and CRC-32 check out. A JSON payload holds no NUL bytes, so no record can
 * hide a record-like header inside it; a false match elsewhere needs a CRC-32 collision (one in
 * 2^32 candidates).
 * @param {Buffer} buf
 * @param {number} from
 * @returns {number} the offset, or buf.length when no good record follows
 */
function nextRecordAt (buf, from) {
  let off = from;
  while (off < buf.length && !recordAt(buf, off)) off++;
  return Math.min(off, buf.length);
}

/**
 * Walks the records of a segment's bytes from `from`. At a record that does not check out (rot, a
 * torn write) it resynchronises at the next good record (nextRecordAt), so only the damaged
 * records are lost.
 * @param {Buffer} buf
 * @param {number} from
 * @param {(rec: SpoolRecord, off: number, next: number) => void} onRecord each good record, in order
 * @param {(start: number, end: number) => void} [onHole] each damaged stretch, in order with the
 *   records; one that ends at buf.length is the segment's tail (a torn write, or rot to the end)
 */
function walkRecords (buf, from, onRecord, onHole = () => {}) {
  let off = from;
  while (off < buf.length) {
    const d = decodeRecord(buf, off);
    if (!d.bad) {
      onRecord(d.rec, off, d.next);
      off = d.next;
      continue;
    }
    const end = nextRecordAt(buf, off + 1);
    onHole(off, end);
    off = end;
  }
}

module.exports = { encodeRecord, decodeRecord, walkRecords, nextRecordAt, crc32, tableCrc32, HEAD_BYTES, MAX_RECORD_BYTES, FLAG_BREAK };
