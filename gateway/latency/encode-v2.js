'use strict';

/**
 * HdrHistogram V2 compressed encoding of a PagedHistogram, byte for byte what hdr-histogram-js
 * writes (its JsHistogram.encoding.js: the V2 header, the counts as ZigZag LEB128 with runs of
 * zeros as one negative number, zlib's default deflate, the compressed header, base64), but reading
 * the counts page by page instead of calling getCountAtIndex for each of up to 33,792 indexes, into
 * one reused buffer instead of a growing one. A summary encodes once per interval in the thread
 * that polls, where the library's encoder took 0.4-2.4 ms, each a stall of the request in flight
 * (issue 11).
 */

const zlib = require('node:zlib');
const { PAGE_BITS } = require('./paged-histogram');

const PAGE_SIZE = 1 << PAGE_BITS;
/** the library's cookies: V2, and V2 compressed, each with the TLZE bit */
const V2_COOKIE = 0x1c849303 | 0x10;
const V2_COMPRESSED_COOKIE = 0x1c849304 | 0x10;
/** cookie, payload length, normalizing offset, digits (4 bytes each), lowest, highest, ratio (8 each) */
const HEADER_BYTES = 40;
const TWO_POW_32 = 2 ** 32;

/** The uncompressed encoding is built here; it grows to the largest one seen */
let scratch = Buffer.allocUnsafe(4096);

/**
 * @param {import('./paged-histogram').PagedHistogram} h
 * @returns {string} V2 compressed base64, as the library's encodeIntoCompressedBase64(h) returns
 */
function encodePagedV2 (h) {
  const limit = h.countsArrayIndex(h.maxValue) + 1;
  // at most 9 bytes per count, a run of zeros being one number
  if (scratch.length < HEADER_BYTES + 9 * limit) scratch = Buffer.allocUnsafe(HEADER_BYTES + 9 * limit);
  const buf = scratch;
  putInt32(buf, 0, V2_COOKIE);
  putInt32(buf, 8, 1);
  putInt32(buf, 12, h.numberOfSignificantValueDigits);
  putInt64(buf, 16, h.lowestDiscernibleValue);
  putInt64(buf, 24, h.highestTrackableValue);
  putInt64(buf, 32, 1);
  let pos = HEADER_BYTES;
  const slots = h._slots;
  const pool = h._pool;
  let i = 0;
  while (i < limit) {
    const count = countAt(slots, pool, i++);
    if (count !== 0) {
      pos = zigZag(buf, pos, count);
      continue;
    }
    // a zero and the zeros after it: one count of 0 alone, else one negative run length
    let zeros = 1;
    while (i < limit) {
      const slot = slots[i >>> PAGE_BITS];
      if (slot < 0) {
        // an untouched page: all zeros, to its end or the limit
        const step = Math.min(PAGE_SIZE - (i & (PAGE_SIZE - 1)), limit - i);
        zeros += step;
        i += step;
        continue;
      }
      if (pool[(slot << PAGE_BITS) | (i & (PAGE_SIZE - 1))] !== 0) break;
      zeros++;
      i++;
    }
    pos = zigZag(buf, pos, zeros > 1 ? -zeros : 0);
  }
  putInt32(buf, 4, pos - HEADER_BYTES);
  const compressed = zlib.deflateSync(buf.subarray(0, pos));
  const out = Buffer.allocUnsafe(8 + compressed.length);
  putInt32(out, 0, V2_COMPRESSED_COOKIE);
  putInt32(out, 4, compressed.length);
  compressed.copy(out, 8);
  return out.toString('base64');
}

/** @returns {number} the count at index i */
function countAt (slots, pool, i) {
  const slot = slots[i >>> PAGE_BITS];
  return slot < 0 ? 0 : pool[(slot << PAGE_BITS) | (i & (PAGE_SIZE - 1))];
}

/** Big-endian, the value taken modulo 2^32, as the library's ByteBuffer.putInt32 */
function putInt32 (buf, at, value) {
  const v = value >>> 0 === value ? value : ((value % TWO_POW_32) + TWO_POW_32) % TWO_POW_32;
  buf[at] = v >>> 24;
  buf[at + 1] = (v >>> 16) & 0xff;
  buf[at + 2] = (v >>> 8) & 0xff;
  buf[at + 3] = v & 0xff;
}

/** The high 32 bits, then the low 32 bits, as ByteBuffer.putInt64 */
function putInt64 (buf, at, value) {
  putInt32(buf, at, Math.floor(value / TWO_POW_32));
  putInt32(buf, at + 4, value);
}

/**
 * ZigZag LEB128 (up to 9 bytes), as the library's ZigZagEncoding.encode, for |value| < 2^53.
 * @returns {number} the position after it
 */
function zigZag (buf, pos, value) {
  let v = value >= 0 ? value * 2 : -value * 2 - 1;
  for (let n = 0; n < 8; n++) {
    if (v < 128) {
      buf[pos++] = v;
      return pos;
    }
    buf[pos++] = (v % 128) | 0x80;
    v = Math.floor(v / 128);
  }
  // the ninth byte carries the top 8 bits whole
  buf[pos++] = v % 256;
  return pos;
}

module.exports = { encodePagedV2 };
