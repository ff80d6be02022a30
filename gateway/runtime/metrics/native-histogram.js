'use strict';

/**
 * Prometheus native histograms (exponential buckets) fed from nines' HDR histograms, cumulative
 * since the gateway started, so PromQL's rate(), increase() and sum() merge them across intervals
 * and gateways by adding buckets, never by averaging percentiles (latency-method.md rule 6).
 *
 * Why native and not classic buckets: p99 within 5 % through histogram_quantile's linear
 * interpolation needs bucket boundaries at most 5 % apart. Fixed classic `le` buckets 5 % apart
 * over 10 µs … 60 s are about 340 per histogram, so 3 histograms × 1,000 jobs would make a
 * million series per gateway, nearly all constant. A native histogram is one series whose
 * buckets exist only where there are counts, and every gateway uses the same bucket boundaries
 * (powers of 2^(2^-schema)), so sum() adds them exactly.
 *
 * Schema 5: bucket boundaries 2^(1/32) = 2.19 % apart. The error against nines' own p99 is at most
 * one bucket's width (2.19 %) plus where an HDR bucket (≤ 0.1 % wide at 3 digits) straddles a
 * boundary: each HDR bucket is placed by its highest equivalent value, the value nines reports
 * for a percentile, so both sides round the same way.
 */

const SCHEMA = 5;
/** Buckets per power of two */
const PER_OCTAVE = 2 ** SCHEMA;
/**
 * client_golang's default zero threshold (2^-128): only exact zeros fall into the zero bucket, and
 * a histogram with no observations yet still reads as native (Prometheus tells native from classic
 * by a non-zero threshold or spans).
 */
const ZERO_THRESHOLD = 2 ** -128;
/** frexp fractions at the bucket boundaries of one octave, as client_golang computes them */
const BOUNDS = Float64Array.from({ length: PER_OCTAVE }, (_, i) => 2 ** (i / PER_OCTAVE - 1));

/**
 * The native bucket of a positive value: bucket k holds (2^((k-1)/32), 2^(k/32)], upper bound
 * inclusive, the same key client_golang computes from math.Frexp.
 * @param {number} v > 0
 * @returns {number} integer key
 */
function bucketKey (v) {
  let exp = Math.floor(Math.log2(v)) + 1;
  let frac = v / 2 ** exp;
  // log2 can be off by one ulp near powers of two: bring frac into [0.5, 1)
  if (frac >= 1) { frac /= 2; exp++; } else if (frac < 0.5) { frac *= 2; exp--; }
  let lo = 0;
  let hi = PER_OCTAVE; // first bound >= frac, or PER_OCTAVE
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (BOUNDS[mid] < frac) lo = mid + 1;
    else hi = mid;
  }
  return lo + (exp - 1) * PER_OCTAVE;
}

/**
 * The upper bound of a bucket, in the histogram's unit.
 * @param {number} key
 * @returns {number}
 */
function bucketUpper (key) {
  return 2 ** (key / PER_OCTAVE);
}

/**
 * HDR bucket index → native key, the same for every HDR histogram of nines' fixed layout, filled
 * on first use of each index (33,792 indexes at most).
 */
const keyCache = new Map();

/**
 * One cumulative native histogram in seconds.
 */
class NativeHistogram {
  constructor () {
    /** @type {Map<number, number>} bucket key → count */
    this.buckets = new Map();
    this.zeroCount = 0;
    this.count = 0;
    /** seconds; from HDR bucket midpoints, as nines' mean is (within 0.05 %) */
    this.sum = 0;
  }

  /**
   * Adds an HDR histogram of integer ns (any JS histogram with nines' configuration).
   * @param {import('../../latency/paged-histogram').PagedHistogram} h
   */
  addHdr (h) {
    if (h.totalCount === 0) return;
    h.forEachNonZero((index, count) => {
      let key = keyCache.get(index);
      if (key === undefined) {
        const top = h.highestEquivalentValue(h.valueFromIndex(index));
        key = index === 0 ? null : bucketKey(top / 1e9);
        keyCache.set(index, key);
      }
      if (key === null) this.zeroCount += count;
      else this.buckets.set(key, (this.buckets.get(key) || 0) + count);
      this.count += count;
    });
    // the mean of bucket medians times the count, as HdrHistogram's mean is computed
    this.sum += h.mean * h.totalCount / 1e9;
  }

  /**
   * The buckets as Prometheus writes them: spans of consecutive keys and count deltas.
   * @returns {{spans: Array<{offset: number, length: number}>, deltas: number[]}}
   */
  spans () {
    const keys = [...this.buckets.keys()].sort((a, b) => a - b);
    const spans = [];
    const deltas = [];
    let prevKey = null;
    let prevCount = 0;
    for (const key of keys) {
      const count = this.buckets.get(key);
      // a gap of one or two empty buckets costs less as zeros than as a new span
      if (prevKey !== null && key - prevKey <= 3) {
        for (let k = prevKey + 1; k < key; k++) { deltas.push(-prevCount); prevCount = 0; }
        spans[spans.length - 1].length += key - prevKey;
      } else {
        spans.push({ offset: prevKey === null ? key : key - prevKey - 1, length: 1 });
      }
      deltas.push(count - prevCount);
      prevCount = count;
      prevKey = key;
    }
    return { spans, deltas };
  }

  /**
   * The q-quantile as Prometheus 2.x's histogram_quantile computes it for a native histogram:
   * the bucket holding rank q·count, linear interpolation inside it. For tests and the docs'
   * error figure; Prometheus does this itself.
   * @param {number} q 0…1
   * @returns {number} seconds; NaN when empty
   */
  quantile (q) {
    if (this.count === 0) return NaN;
    const rank = q * this.count;
    let cumulative = this.zeroCount;
    if (rank <= cumulative) return 0;
    const keys = [...this.buckets.keys()].sort((a, b) => a - b);
    for (const key of keys) {
      const count = this.buckets.get(key);
      if (cumulative + count >= rank) {
        const lower = bucketUpper(key - 1);
        const upper = bucketUpper(key);
        return lower + (upper - lower) * ((rank - cumulative) / count);
      }
      cumulative += count;
    }
    return bucketUpper(keys[keys.length - 1]);
  }
}

module.exports = { NativeHistogram, bucketKey, bucketUpper, SCHEMA, ZERO_THRESHOLD };
