'use strict';

/**
 * Histograms with nines' one configuration (integer ns, 1 ns … 1 h, 3 significant digits, see
 * latency-method.md rule 2): creation, guarded recording, exact merging, V2 encoding and checked
 * decoding. Storage and the memory figures behind it: paged-histogram.js.
 */

const { JsHistogram, encodeIntoCompressedBase64 } = require('hdr-histogram-js');
const C = require('../base/constants');
const { NinesError } = require('../base/errors');
const { PagedHistogram } = require('./paged-histogram');
const { decodeHistogram } = require('./histogram-decode');
const { encodePagedV2 } = require('./encode-v2');
const { invalid } = require('./validate');

/** recordNs results */
const RECORD_OK = 0;
const RECORD_CLAMPED = 1;
const RECORD_INVALID = 2;

const HIGHEST = C.HIST_HIGHEST_NS;
const HIGHEST_BIG = BigInt(C.HIST_HIGHEST_NS);

/**
 * An interval histogram: counts start 16-bit and widen on overflow, fixed range 1 ns … 1 h.
 * Memory grows with the buckets touched (about 1–20 KB for device latencies), not with the range.
 * @returns {PagedHistogram}
 */
function createHistogram () {
  return new PagedHistogram();
}

/**
 * A merge target: float64 counts (exact to 2^53, the library's bitBucketSize 64) over the full
 * 1 ns … 1 h range, so any nines histogram fits without resizing.
 * @returns {PagedHistogram}
 */
function createAccumulator () {
  return new PagedHistogram({ wide: true });
}

/**
 * Records one value, checked (hot path: no allocation, a few comparisons).
 * The library takes NaN (counted in totalCount, in no bucket) and fractions (raw in maxValue)
 * silently, latency-notes §1.8 #2 and #3; here they are refused.
 *
 * @param {import('hdr-histogram-js').Histogram} h a histogram from createHistogram or
 *   createAccumulator (not checked here: this is the hot path)
 * @param {number|bigint} value nanoseconds: an integer >= 0
 * @returns {0|1|2} 0 recorded; 1 above 1 h, recorded as 1 h (count it); 2 invalid (NaN, ±Infinity,
 *   a fraction, negative, not a number or bigint), not recorded (count it)
 */
function recordNs (h, value) {
  let v = value;
  if (typeof v !== 'number') {
    if (typeof v !== 'bigint' || v < 0n) return RECORD_INVALID;
    if (v > HIGHEST_BIG) {
      h.recordValue(HIGHEST);
      return RECORD_CLAMPED;
    }
    v = Number(v);
  }
  // Number.isInteger is false for NaN and ±Infinity.
  if (!Number.isInteger(v) || v < 0) return RECORD_INVALID;
  if (v > HIGHEST) {
    h.recordValue(HIGHEST);
    return RECORD_CLAMPED;
  }
  h.recordValue(v);
  return RECORD_OK;
}

/**
 * Checks that h is a JS HdrHistogram with nines' configuration.
 * @param {unknown} h
 * @param {string} field
 * @returns {JsHistogram}
 */
function checkHistogram (h, field) {
  if (!(h instanceof JsHistogram)) {
    throw invalid(field, h, 'an HdrHistogram from hdr-histogram-js (JS, not WASM; e.g. from createHistogram)');
  }
  if (h.numberOfSignificantValueDigits !== C.HIST_DIGITS || h.lowestDiscernibleValue !== C.HIST_LOWEST_NS) {
    throw new NinesError('NINES_ERR_INVALID_ARG',
      `${field} must have ${C.HIST_DIGITS} significant digits and lowestDiscernibleValue ${C.HIST_LOWEST_NS} ` +
      `(nines' configuration, so that merges are exact); got ${h.numberOfSignificantValueDigits} digits, ` +
      `lowest ${h.lowestDiscernibleValue}`, { field });
  }
  return h;
}

/**
 * Visits the non-zero counts of any JS histogram in index order.
 * @param {JsHistogram} h
 * @param {(index: number, count: number) => void} fn
 */
function forEachNonZero (h, fn) {
  if (h instanceof PagedHistogram) {
    h.forEachNonZero(fn);
    return;
  }
  for (let i = 0; i < h.countsArrayLength; i++) {
    const count = h.getCountAtIndex(i);
    if (count !== 0) fn(i, count);
  }
}

/**
 * Adds h into acc exactly, bucket by bucket, and never averages anything.
 *
 * With equal digits and lowest value, a count's index does not depend on the range, so counts are
 * added index by index. The library's add() instead re-records each bucket at its lowest value
 * whenever bucketCounts differ, which leaves the accumulator's max at the bottom of its bucket
 * (latency-notes §1.5), and it cannot grow a decoded histogram. h is checked completely before
 * acc changes, so a rejected merge leaves acc as it was.
 *
 * @param {PagedHistogram} acc from createAccumulator (float64 counts, full range)
 * @param {JsHistogram} h any JS histogram with nines' configuration (interval, decoded, library-built)
 * @returns {PagedHistogram} acc
 * @throws {NinesError} NINES_ERR_INVALID_ARG for a wrong target or configuration;
 *   NINES_ERR_BAD_HISTOGRAM when h's counts are corrupt (total disagrees, beyond 1 h, negative)
 */
function mergeInto (acc, h) {
  if (!(acc instanceof PagedHistogram) || !acc.wide) {
    throw invalid('acc', acc, 'an accumulator from createAccumulator() (64-bit counts over 1 ns … 1 h); ' +
      'interval and decoded histograms have narrower counts and must not be merge targets');
  }
  checkHistogram(h, 'h');
  if (h === acc) throw invalid('h', h, 'a histogram other than acc');

  let sum = 0;
  let minNonZeroIndex = -1;
  let maxIndex = -1;
  forEachNonZero(h, (index, count) => {
    if (!Number.isSafeInteger(count) || count < 0) {
      throw new NinesError('NINES_ERR_BAD_HISTOGRAM', `h has count ${count} at index ${index}; counts are integers >= 0`);
    }
    sum += count;
    if (index !== 0 && minNonZeroIndex < 0) minNonZeroIndex = index;
    maxIndex = index;
  });
  if (sum !== h.totalCount) {
    // latency-notes §1.8 #2: a NaN recorded into a library histogram counts in totalCount only.
    throw new NinesError('NINES_ERR_BAD_HISTOGRAM',
      `h.totalCount ${h.totalCount} disagrees with the sum of its buckets ${sum} (NaN recorded without recordNs?)`);
  }
  if (maxIndex >= acc.countsArrayLength) {
    throw new NinesError('NINES_ERR_BAD_HISTOGRAM',
      `h holds values up to ${h.highestEquivalentValue(h.valueFromIndex(maxIndex))} ns, beyond the 1 h range of nines histograms`);
  }
  if (sum === 0) return acc;

  forEachNonZero(h, (index, count) => acc.addToCountAtIndex(index, count));
  acc.setTotalCount(acc.totalCount + sum);
  // Bucket-based, as a decoded copy and Java report it (a raw or fractional max could differ).
  const top = acc.highestEquivalentValue(acc.valueFromIndex(maxIndex));
  if (top > acc.maxValue) acc.maxValue = top;
  if (minNonZeroIndex >= 0) {
    const low = acc.valueFromIndex(minNonZeroIndex);
    if (low < acc.minNonZeroValue) acc.minNonZeroValue = low;
  }
  acc.startTimeStampMsec = Math.min(acc.startTimeStampMsec, h.startTimeStampMsec);
  acc.endTimeStampMsec = Math.max(acc.endTimeStampMsec, h.endTimeStampMsec);
  return acc;
}

/**
 * Encodes a histogram as HdrHistogram V2 compressed base64 ("HISTF…"), readable by every
 * HdrHistogram implementation. Timestamps and tag are not part of the encoding.
 * @param {JsHistogram} h a histogram with nines' configuration
 * @returns {string} base64; about 0.3–6 KB for an interval of device latencies
 */
function encodeHistogram (h) {
  checkHistogram(h, 'h');
  // the same bytes, page by page (encode-v2.js)
  if (h instanceof PagedHistogram) return encodePagedV2(h);
  return encodeIntoCompressedBase64(h);
}

module.exports = {
  createHistogram,
  createAccumulator,
  recordNs,
  mergeInto,
  encodeHistogram,
  decodeHistogram,
  checkHistogram,
  RECORD_OK,
  RECORD_CLAMPED,
  RECORD_INVALID
};
