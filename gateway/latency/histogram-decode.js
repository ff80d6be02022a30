'use strict';

/**
 * Checked decoding of HdrHistogram V2 compressed base64 ("HISTF…") from untrusted sources (MQTT
 * payloads, worker messages, .hlog files).
 *
 * The library's decodeFromCompressedBase64 trusts the header: it inflates without a cap and
 * allocates the counts array the header asks for (a 60-character payload declaring 5 digits and
 * HTV 2^53 made it allocate 38.8 MB, latency-notes §1.8 #12). Here everything is checked first —
 * size, alphabet, both cookies, lengths, digits, lowest value, range, conversion ratio — then the
 * counts are read by our own varint loop straight into a PagedHistogram of nines' fixed layout. A
 * histogram is never allocated from a header value, and no zero run or index can leave the range.
 */

const zlib = require('node:zlib');
const C = require('../base/constants');
const { NinesError } = require('../base/errors');
const { PagedHistogram } = require('./paged-histogram');
const { show, invalid } = require('./validate');

const OUTER_COOKIE = 0x1c849314;
const INNER_COOKIE = 0x1c849313;
const INNER_HEADER_BYTES = 40;
/** int64 1: hdr-histogram-js writes the integer-to-double ratio as a long (latency-notes §1.8 #10) */
const RATIO_JS = 1n;
/** IEEE 754 double 1.0: Java, C, Rust, Go */
const RATIO_DOUBLE = 0x3ff0000000000000n;
const TWO_POW_53 = 2 ** 53;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

// Layout facts are read from a reference histogram rather than restated.
const REFERENCE = new PagedHistogram();
/** 33,792 counts cover 1 ns … 1 h at 3 digits */
const MAX_COUNTS = REFERENCE.countsArrayLength;
/**
 * 2^42 - 1 ns: the top of the bucket that holds 1 h. An autoResize library histogram that grew to
 * hold 1 h writes this as its highestTrackableValue, so it is accepted too.
 */
const MAX_HIGHEST_TRACKABLE_NS = REFERENCE.highestEquivalentValue(REFERENCE.valueFromIndex(MAX_COUNTS - 1));
/** Largest inner (inflated) form a 1 h histogram can need: header + 9 bytes per count */
const MAX_INFLATED_BYTES = INNER_HEADER_BYTES + 9 * MAX_COUNTS;

/**
 * @param {string} what what is wrong, completing "encoded histogram rejected: …"
 * @param {object} [details]
 * @returns {NinesError}
 */
function bad (what, details) {
  return new NinesError('NINES_ERR_BAD_HISTOGRAM', `encoded histogram rejected: ${what}`, details);
}

/** @param {number} n @returns {string} */
const hex = (n) => `0x${n.toString(16).padStart(8, '0')}`;

/**
 * Decodes a V2 compressed base64 histogram after checking it.
 * Accepts hdr-histogram-js encodings (normalizingIndexOffset 1, ratio written as int64 1) and Java,
 * C, Rust and Go ones (offset 0, ratio as double 1.0) with nines' configuration: 3 significant
 * digits, lowestDiscernibleValue 1, highestTrackableValue in [2, 2^42 - 1] ns.
 *
 * @param {string} b64 HdrHistogram V2 compressed base64 ("HISTF…"), values in ns
 * @param {{maxChars?: number}} [options] maxChars: size cap in characters
 *   (default constants.HIST_MAX_ENCODED_CHARS, 262,144)
 * @returns {PagedHistogram} a histogram with nines' fixed layout (1 ns … 1 h); its maxValue is the
 *   highest equivalent value of its top bucket, as the library's decoder and Java report it
 * @throws {NinesError} NINES_ERR_BAD_HISTOGRAM naming what is wrong; NINES_ERR_INVALID_ARG for a bad option
 */
function decodeHistogram (b64, options = {}) {
  const maxChars = options.maxChars === undefined ? C.HIST_MAX_ENCODED_CHARS : options.maxChars;
  if (!Number.isSafeInteger(maxChars) || maxChars < 1) throw invalid('options.maxChars', maxChars, 'an integer >= 1');

  if (typeof b64 !== 'string') throw bad(`it must be a base64 string; got ${show(b64)}`);
  if (b64.length === 0 || b64.length > maxChars) {
    throw bad(`its length ${b64.length} chars is outside [1, ${maxChars}]`, { length: b64.length, maxChars });
  }
  if (b64.length % 4 !== 0 || !BASE64.test(b64)) {
    throw bad('it is not base64 (only A-Z a-z 0-9 + /, "=" padding at the end, length a multiple of 4)');
  }

  const outer = Buffer.from(b64, 'base64');
  if (outer.length < 8) throw bad(`it decodes to ${outer.length} bytes, less than the 8-byte compressed header`);
  const cookie = outer.readUInt32BE(0);
  if (cookie !== OUTER_COOKIE) {
    throw bad(`outer cookie is ${hex(cookie)}, expected ${hex(OUTER_COOKIE)} (V2 compressed, text starting "HISTF")`, { cookie });
  }
  const compressedLength = outer.readUInt32BE(4);
  if (compressedLength !== outer.length - 8) {
    throw bad(`compressed length field says ${compressedLength} bytes but ${outer.length - 8} follow`);
  }

  let inner;
  try {
    // The library's own inflateSync has no cap (latency-notes §5.5).
    inner = zlib.inflateSync(outer.subarray(8), { maxOutputLength: MAX_INFLATED_BYTES });
  } catch (err) {
    if (err && err.code === 'ERR_BUFFER_TOO_LARGE') {
      throw bad(`it inflates to more than ${MAX_INFLATED_BYTES} bytes, the most a 1 h histogram needs (zlib bomb?)`);
    }
    throw bad(`its compressed body is not valid zlib data (${err && err.message})`);
  }
  return decodeInner(inner);
}

/**
 * @param {Buffer} inner the inflated V2 form
 * @returns {PagedHistogram}
 */
function decodeInner (inner) {
  if (inner.length < INNER_HEADER_BYTES) {
    throw bad(`it inflates to ${inner.length} bytes, less than the ${INNER_HEADER_BYTES}-byte V2 header`);
  }
  const cookie = inner.readUInt32BE(0);
  if (cookie !== INNER_COOKIE) {
    throw bad(`inner cookie is ${hex(cookie)}, expected ${hex(INNER_COOKIE)} (only V2 integer histograms are read)`, { cookie });
  }
  const payloadLength = inner.readUInt32BE(4);
  if (payloadLength !== inner.length - INNER_HEADER_BYTES) {
    throw bad(`payload length field says ${payloadLength} bytes but ${inner.length - INNER_HEADER_BYTES} follow the header`);
  }
  const normalizingIndexOffset = inner.readInt32BE(8);
  if (normalizingIndexOffset !== 0 && normalizingIndexOffset !== 1) {
    throw bad(`normalizingIndexOffset is ${normalizingIndexOffset}; only 0 (Java, C, Rust, Go) or 1 (hdr-histogram-js) are read`);
  }
  const digits = inner.readInt32BE(12);
  if (digits !== C.HIST_DIGITS) {
    throw bad(`it has ${digits} significant digits; nines histograms have ${C.HIST_DIGITS}`, { digits });
  }
  const lowest = inner.readBigInt64BE(16);
  if (lowest !== BigInt(C.HIST_LOWEST_NS)) {
    throw bad(`its lowestDiscernibleValue is ${lowest}; nines histograms have ${C.HIST_LOWEST_NS} (ns)`, { lowest: String(lowest) });
  }
  const highest = inner.readBigInt64BE(24);
  if (highest < 2n || highest > BigInt(MAX_HIGHEST_TRACKABLE_NS)) {
    throw bad(`its highestTrackableValue ${highest} is outside [2, ${MAX_HIGHEST_TRACKABLE_NS}] ns (1 h and the rest of its bucket)`,
      { highest: String(highest) });
  }
  const ratio = inner.readBigUInt64BE(32);
  if (ratio !== RATIO_JS && ratio !== RATIO_DOUBLE) {
    throw bad(`its integerToDoubleValueConversionRatio bits are 0x${ratio.toString(16)}; expected 1 as int64 or as double`);
  }
  return readCounts(inner, REFERENCE.getLengthForNumberOfBuckets(REFERENCE.getBucketsNeededToCoverValue(Number(highest))));
}

/**
 * Reads the ZigZag LEB128-64b9B counts (a negative value -n means n zero counts).
 * @param {Buffer} inner
 * @param {number} length number of counts the header's range allows
 * @returns {PagedHistogram}
 */
function readCounts (inner, length) {
  const h = new PagedHistogram();
  const end = inner.length;
  let pos = INNER_HEADER_BYTES;
  let index = 0;
  let total = 0;
  let minNonZeroIndex = -1;
  let maxIndex = -1;
  while (pos < end) {
    let raw = 0;
    let scale = 1;
    for (let n = 0; ; n++) {
      if (pos >= end) throw bad(`its payload ends inside a varint at byte ${pos}`);
      const byte = inner[pos++];
      // LEB128-64b9B: the 9th byte carries 8 bits (the library's decoder masks it to 7).
      if (n === 8) {
        raw += byte * scale;
        break;
      }
      raw += (byte & 0x7f) * scale;
      scale *= 128;
      if ((byte & 0x80) === 0) break;
    }
    if (raw >= TWO_POW_53) throw bad(`a count or zero run at index ${index} is too large (zigzag value >= 2^53)`);
    if (raw % 2 === 1) {
      index += (raw + 1) / 2;
      if (index > length) throw bad(`a zero run goes past the ${length} counts its range allows`);
      continue;
    }
    const count = raw / 2;
    if (index >= length) throw bad(`its counts go past the ${length} its range allows`);
    if (count > 0) {
      total += count;
      if (total >= TWO_POW_53) throw bad('its total count exceeds 2^53 - 1');
      h.setCountAtIndex(index, count);
      if (index !== 0 && minNonZeroIndex < 0) minNonZeroIndex = index;
      maxIndex = index;
    }
    index++;
  }
  if (total > 0) {
    // As the library's establishInternalTackingValues does after decoding: max is the highest
    // equivalent value of the top bucket, min the lowest of the first non-zero bucket above 0.
    h.setTotalCount(total);
    h.maxValue = h.highestEquivalentValue(h.valueFromIndex(maxIndex));
    if (minNonZeroIndex >= 0) h.minNonZeroValue = h.valueFromIndex(minNonZeroIndex);
  }
  return h;
}

module.exports = { decodeHistogram, MAX_HIGHEST_TRACKABLE_NS, MAX_INFLATED_BYTES, MAX_COUNTS };
