'use strict';

/**
 * Histograms for the benches, with nines' one configuration (integer ns, 1 ns … 1 h, 3 significant
 * digits; latency-method.md rule 2), built on hdr-histogram-js directly so every row — nines, the
 * Node peers and the C clients' raw samples — lands in the same kind of histogram.
 */

const hdr = require('hdr-histogram-js');

const HIGHEST_NS = 3600e9;

/** @returns {import('hdr-histogram-js').Histogram} an empty histogram (plain JS, 64-bit counts) */
function createHist () {
  return hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: HIGHEST_NS,
    numberOfSignificantValueDigits: 3,
    bitBucketSize: 64,
    useWebAssembly: false
  });
}

/**
 * Records one latency; values outside 1 ns … 1 h are clamped (a 0 ns sample cannot happen on a socket).
 * @param {object} h histogram
 * @param {number|bigint} ns
 */
function record (h, ns) {
  const v = Math.round(Number(ns));
  h.recordValue(v < 1 ? 1 : v > HIGHEST_NS ? HIGHEST_NS : v);
}

/**
 * The figures every latency row reports, in ns (integers), plus the count.
 * @param {object} h
 * @returns {{count: number, mean: number, p50: number, p90: number, p99: number, p999: number, p9999: number, max: number}}
 */
function stats (h) {
  const at = (p) => (h.totalCount ? h.getValueAtPercentile(p) : 0);
  return {
    count: h.totalCount,
    mean: Math.round(h.totalCount ? h.mean : 0),
    p50: at(50),
    p90: at(90),
    p99: at(99),
    p999: at(99.9),
    p9999: at(99.99),
    max: h.totalCount ? h.maxValue : 0
  };
}

/** @param {object} h @returns {string} HdrHistogram V2 compressed base64 */
function encode (h) {
  return hdr.encodeIntoCompressedBase64(h);
}

/** @param {string} b64 @returns {object} a histogram */
function decode (b64) {
  return hdr.decodeFromCompressedBase64(b64, 64, false);
}

/**
 * Reads a file of little-endian uint64 ns samples (what the C clients write) into a histogram.
 * @param {Buffer} buf
 * @returns {object}
 */
function fromRawNs (buf) {
  const h = createHist();
  for (let o = 0; o + 8 <= buf.length; o += 8) record(h, Number(buf.readBigUInt64LE(o)));
  return h;
}

module.exports = { createHist, record, stats, encode, decode, fromRawNs, HIGHEST_NS };
