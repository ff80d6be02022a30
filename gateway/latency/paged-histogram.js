'use strict';

/**
 * An HdrHistogram with nines' fixed configuration (1 ns … 1 h, 3 significant digits) whose counts
 * live in pages of 128 allocated on first touch, in one compact pool per histogram.
 *
 * Why not the library's typed-array histograms. Budget: 1,000 jobs × 3 histograms, double
 * buffered = 6,000 histograms, well under 256 MB. Measured on Node 20, hdr-histogram-js 3.0.1,
 * each layout in its own process, 6,000 histograms of ms-range device latencies:
 *   - fixed range 1 ns … 1 h, 32-bit: 33,792 counts (135 KB) each: 811 MB of ArrayBuffers, 835 MB RSS;
 *   - autoResize from HTV 2, 32-bit, clamped at 1 h: grows to 15–26 K counts (62–103 KB) as the
 *     max goes from 10 ms to 10 s: 369–615 MB of ArrayBuffers, 468–666 MB RSS;
 *   - autoResize, 16-bit: 189–308 MB, and counts past 65,535 wrap silently (latency-notes §1.8 #1);
 *   - PackedHistogram: about 100 MB RSS, but 6 ms per percentile query and 5 ms per encode, far
 *     too slow for thousands of summaries per interval.
 * In ns at 3 digits every octave costs 1,024 counts and device latencies sit ten octaves above the
 * bottom bucket, so dense arrays are mostly zeros. Paged (128 counts per page, chosen over
 * 64/256/512 by the same measurement; the pool grows 1.5× from 4 pages), 1,000 Recorders with
 * 1,000 samples per interval in both buffers: 63–83 MB of ArrayBuffers, 120–142 MB RSS (about
 * 35 MB of it V8 heap headroom), 70–80 KB per recorder; recording costs 88–130 ns per value
 * against 87 ns for the library's dense Int32Histogram (noisy 2-vCPU machine).
 *
 * Counts start 16-bit and the whole pool widens to 32-bit, then to float64 (exact to 2^53), the
 * moment one count would overflow, where the library's unsigned buckets wrap silently (§1.8 #1).
 * Accumulators start as float64.
 *
 * The range is fixed, never auto-resized: every histogram has the same layout (bucketCount 32,
 * subBucketCount 2048), so merges are exact index-by-index adds and every encoding says
 * highestTrackableValue = 1 h, as a Java histogram with the same configuration does.
 *
 * JsHistogram is the library's extension point (its own PackedHistogram and TypedArrayHistogram
 * subclass it the same way). Its mean and stdDeviation walk all counts through an iterator that
 * recomputes Math.log2 and Math.pow per bucket (3 ms and 6 ms for one 10,000-sample histogram),
 * and getValueAtPercentile scans every count; the overrides below skip untouched pages and do the
 * same arithmetic in the same order, so results are bit-identical (tested against Int32Histogram):
 * about 50 and 70 µs.
 */

const { JsHistogram } = require('hdr-histogram-js');
const { NinesError } = require('../base/errors');
const C = require('../base/constants');

const PAGE_BITS = 7;
const PAGE_SIZE = 1 << PAGE_BITS;
const PAGE_MASK = PAGE_SIZE - 1;
const FIRST_CAPACITY_PAGES = 4;
const U16_MAX = 0xffff;
const U32_MAX = 0xffffffff;
const F64_MAX = Number.MAX_SAFE_INTEGER;
/** The layout nines' configuration gives (1 ns lowest, 3 digits): checked in the constructor */
const SUB_BUCKET_HALF_MAGNITUDE = 10;
const SUB_BUCKET_HALF_COUNT = 1 << SUB_BUCKET_HALF_MAGNITUDE;
const SUB_BUCKET_COUNT = 2 * SUB_BUCKET_HALF_COUNT;
/** 2^n for bucket widths, n < 64 */
const POW2 = Float64Array.from({ length: 64 }, (_, n) => 2 ** n);

/** toTransfer's working space, grown to the most pages a histogram of this thread has touched */
let scratch = new Float64Array(0);
/** Up to this many touched pages a copy is the non-zero counts; past it, the pages (toTransfer) */
const SPARSE_MAX_PAGES = 8;

/**
 * The library's ulp (src/ulp.ts), used by getValueAtPercentile's rank rounding.
 * @param {number} x
 * @returns {number}
 */
const ulp = (x) => Math.pow(2, Math.floor(Math.log2(x)) - 52);

class PagedHistogram extends JsHistogram {
  /**
   * @param {{wide?: boolean}} [options] wide: float64 counts from the start (accumulators)
   */
  constructor (options = {}) {
    super(C.HIST_LOWEST_NS, C.HIST_HIGHEST_NS, C.HIST_DIGITS);
    // A fixed layout: the library's autoResize would change bucketCount and push add() onto its
    // lossy slow path (latency-notes §1.5).
    this.autoResize = false;
    // recordValue's integer path relies on this layout
    if (this.subBucketHalfCountMagnitude !== SUB_BUCKET_HALF_MAGNITUDE || this.unitMagnitude !== 0) {
      throw new NinesError('NINES_ERR_INVALID_ARG', `histogram layout ${this.subBucketHalfCountMagnitude}/${this.unitMagnitude} is not nines' (10/0)`);
    }
    this._totalCount = 0;
    this._wide = options.wide === true;
    /** page number → slot in the pool, -1 when the page was never touched */
    this._slots = new Int16Array(Math.ceil(this.countsArrayLength / PAGE_SIZE)).fill(-1);
    this._pagesUsed = 0;
    // Each field takes every kind of value it will ever hold right here, so widening (16 → 32 → 64
    // bits) never changes the object's shape: a shape seen late sends the code that records into
    // histograms back to be compiled again, in the middle of a run (issue 11)
    this._pool = new Float64Array(0);
    this._pool = new Uint32Array(0);
    this._pool = this._wide ? new Float64Array(0) : new Uint16Array(0);
    this._countMax = U32_MAX;
    this._countMax = F64_MAX;
    this._countMax = this._wide ? F64_MAX : U16_MAX;
  }

  /** @returns {boolean} true for accumulators (float64 counts from the start) */
  get wide () {
    return this._wide;
  }

  /** @returns {number} bits per count now: 16, 32 or 64 (it only grows) */
  get countBits () {
    return this._countMax === U16_MAX ? 16 : this._countMax === U32_MAX ? 32 : 64;
  }

  /**
   * Calls fn for every non-zero count, in ascending index order.
   * @param {(index: number, count: number) => void} fn
   */
  forEachNonZero (fn) {
    const slots = this._slots;
    for (let page = 0; page < slots.length; page++) {
      const slot = slots[page];
      if (slot < 0) continue;
      const pool = this._pool;
      const base = slot << PAGE_BITS;
      for (let j = 0; j < PAGE_SIZE; j++) {
        const count = pool[base + j];
        if (count !== 0) fn((page << PAGE_BITS) | j, count);
      }
    }
  }

  /** @param {number} page @returns {number} the new slot */
  _newPage (page) {
    const slot = this._pagesUsed++;
    if ((this._pagesUsed << PAGE_BITS) > this._pool.length) {
      const pages = Math.min(this._slots.length, Math.max(FIRST_CAPACITY_PAGES, Math.ceil(this._pagesUsed * 1.5)));
      const pool = new this._pool.constructor(pages << PAGE_BITS);
      pool.set(this._pool);
      this._pool = pool;
    }
    this._slots[page] = slot;
    return slot;
  }

  /** Widens every count one step (16 → 32 → 64 bits); past 2^53 a count cannot stay exact. */
  _widen () {
    if (this._countMax === U16_MAX) {
      this._pool = new Uint32Array(this._pool);
      this._countMax = U32_MAX;
    } else if (this._countMax === U32_MAX) {
      this._pool = new Float64Array(this._pool);
      this._countMax = F64_MAX;
    } else {
      throw new NinesError('NINES_ERR_BAD_HISTOGRAM', 'a histogram count would exceed 2^53 - 1 and lose exactness');
    }
  }

  /**
   * @param {number} index
   * @param {number} count
   * @returns {number} the pool position of index, allocating its page when needed
   */
  _position (index, count) {
    if (!Number.isSafeInteger(count) || count < 0) {
      throw new NinesError('NINES_ERR_INVALID_ARG', `a histogram count must be an integer in [0, 2^53 - 1]; got ${count} at index ${index}`);
    }
    const page = index >>> PAGE_BITS;
    if (!(index >= 0 && index < this.countsArrayLength)) {
      throw new NinesError('NINES_ERR_INVALID_ARG', `histogram index must be in [0, ${this.countsArrayLength}); got ${index}`);
    }
    let slot = this._slots[page];
    if (slot < 0) slot = this._newPage(page);
    while (count > this._countMax) this._widen();
    return (slot << PAGE_BITS) | (index & PAGE_MASK);
  }

  /** @param {number} index @returns {number} */
  getCountAtIndex (index) {
    const slot = this._slots[index >>> PAGE_BITS];
    return slot >= 0 ? this._pool[(slot << PAGE_BITS) | (index & PAGE_MASK)] : 0;
  }

  /**
   * recordValue, with integer arithmetic for whole values below 2^31 ns (2.1 s): the library finds a
   * value's bucket with Math.log2 and Math.pow, which made a value cost 160 ns here, three of them per
   * request (issue 11). For such a value floor(log2(v)) is exactly 31 − clz32(v) (a double's log2 of
   * a 31-bit integer never rounds up to the next integer), and with this fixed layout (unit
   * magnitude 0, 1,024 half sub-buckets) the index, min and max come out as the library computes
   * them. Anything else (fractions, larger values) takes the library's path.
   * @param {number} value
   */
  recordValue (value) {
    if ((value | 0) !== value || value < 0) {
      super.recordValue(value);
      return;
    }
    const bucket = value < SUB_BUCKET_COUNT ? 0 : 31 - SUB_BUCKET_HALF_MAGNITUDE - Math.clz32(value);
    this.incrementCountAtIndex(((bucket + 1) << SUB_BUCKET_HALF_MAGNITUDE) + (value >>> bucket) - SUB_BUCKET_HALF_COUNT);
    if (value > this.maxValue) this.maxValue = value;
    if (value !== 0 && value < this.minNonZeroValue) this.minNonZeroValue = value;
    this.incrementTotalCount();
  }

  /** Hot path of recordValue. The library checked index < countsArrayLength before calling. @param {number} index */
  incrementCountAtIndex (index) {
    let slot = this._slots[index >>> PAGE_BITS];
    if (slot < 0) slot = this._newPage(index >>> PAGE_BITS);
    const at = (slot << PAGE_BITS) | (index & PAGE_MASK);
    const count = this._pool[at];
    // latency-notes §1.8 #1: an unsigned typed array would wrap to 0 here without a word.
    if (count === this._countMax) this._widen();
    this._pool[at] = count + 1;
  }

  /** @param {number} index @param {number} value may be negative (subtract) */
  addToCountAtIndex (index, value) {
    const count = this.getCountAtIndex(index) + value;
    // _position may replace the pool (new page, widening): take the position before the pool.
    const at = this._position(index, count);
    this._pool[at] = count;
  }

  /** @param {number} index @param {number} value */
  setCountAtIndex (index, value) {
    const at = this._position(index, value);
    this._pool[at] = value;
  }

  /**
   * Empties the histogram and gives its pages back, keeping the pool's memory: a histogram that is
   * reset and filled again (a recorder's next interval but one, a summary on the pool's thread)
   * reuses the memory, and every scan (percentiles, mean, a copy) covers the pages of what it holds
   * now, not of everything it ever held.
   */
  clearCounts () {
    this._pool.fill(0, 0, this._pagesUsed << PAGE_BITS);
    this._slots.fill(-1);
    this._pagesUsed = 0;
  }

  /** @param {number} newHighestTrackableValue */
  resize (newHighestTrackableValue) {
    throw new NinesError('NINES_ERR_INVALID_ARG',
      `histogram range is fixed at 1 ns … ${C.HIST_HIGHEST_NS} ns (1 h); cannot grow to ${newHighestTrackableValue}`);
  }

  /** @returns {number} bytes */
  _getEstimatedFootprintInBytes () {
    return 1024 + this._slots.byteLength + this._pool.byteLength;
  }

  /**
   * Same rank rule as JsHistogram.getValueAtPercentile (ceil with a 1-ulp guard, at least 1),
   * skipping untouched pages.
   * @param {number} percentile 0…100
   * @returns {number} highest equivalent value (lowest for percentile 0), 0 when empty
   */
  getValueAtPercentile (percentile) {
    const requested = Math.min(percentile, 100);
    const fpCount = (requested / 100.0) * this.totalCount;
    const rank = Math.max(Math.ceil(fpCount - ulp(fpCount)), 1);
    const slots = this._slots;
    const pool = this._pool;
    let total = 0;
    for (let page = 0; page < slots.length; page++) {
      const slot = slots[page];
      if (slot < 0) continue;
      const base = slot << PAGE_BITS;
      for (let j = 0; j < PAGE_SIZE; j++) {
        total += pool[base + j];
        if (total >= rank) {
          const value = this.valueFromIndex((page << PAGE_BITS) | j);
          return percentile === 0.0 ? this.lowestEquivalentValue(value) : this.highestEquivalentValue(value);
        }
      }
    }
    return 0;
  }

  /**
   * Several percentiles in one scan of the touched pages, each exactly as getValueAtPercentile
   * gives it: a summary reads seven of them from three histograms once per interval, in the thread
   * that polls, where every scan delays a reply (issue 11).
   * @param {number[]} percentiles ascending, 0…100
   * @returns {number[]} the values, in the same order
   */
  valuesAtPercentiles (percentiles) {
    const n = percentiles.length;
    const out = new Array(n).fill(0);
    const total = this.totalCount;
    const ranks = percentiles.map((p) => {
      const fpCount = (Math.min(p, 100) / 100.0) * total;
      return Math.max(Math.ceil(fpCount - ulp(fpCount)), 1);
    });
    const slots = this._slots;
    const pool = this._pool;
    let k = 0;
    let sum = 0;
    for (let page = 0; page < slots.length && k < n; page++) {
      const slot = slots[page];
      if (slot < 0) continue;
      const base = slot << PAGE_BITS;
      for (let j = 0; j < PAGE_SIZE && k < n; j++) {
        const count = pool[base + j];
        if (count === 0) continue;
        sum += count;
        while (k < n && sum >= ranks[k]) {
          const value = this.valueFromIndex((page << PAGE_BITS) | j);
          out[k] = percentiles[k] === 0.0 ? this.lowestEquivalentValue(value) : this.highestEquivalentValue(value);
          k++;
        }
      }
    }
    return out;
  }

  /**
   * Mean and standard deviation, as the mean and getStdDeviation getters give them (two scans).
   * @returns {{mean: number, stddev: number}} 0 and 0 when empty
   */
  meanAndStdDeviation () {
    const mean = this.mean;
    return { mean, stddev: this.getStdDeviation(mean) };
  }

  /**
   * Calls fn(median, count) for every non-zero count in ascending index order, where median is
   * medianEquivalentValue(valueFromIndex(index)) computed from the index alone: the library derives
   * it again through Math.log2 and Math.pow for every bucket (about 240 ns each; mean and
   * stdDeviation took 0.8 ms for 3,300 occupied buckets). The value of index i is
   * sub · 2^(bucket + unitMagnitude), which is already the lowest equivalent value of its bucket,
   * and the bucket's width is 2^(bucket + unitMagnitude) because sub < subBucketCount. The pages are
   * walked here rather than through forEachNonZero: one callback per occupied bucket, none between.
   * @param {(median: number, count: number) => void} fn
   */
  _forEachMedian (fn) {
    const half = this.subBucketHalfCount;
    const halfMagnitude = this.subBucketHalfCountMagnitude;
    const unit = this.unitMagnitude;
    const slots = this._slots;
    const pool = this._pool;
    for (let page = 0; page < slots.length; page++) {
      const slot = slots[page];
      if (slot < 0) continue;
      const base = slot << PAGE_BITS;
      for (let j = 0; j < PAGE_SIZE; j++) {
        const count = pool[base + j];
        if (count === 0) continue;
        const index = (page << PAGE_BITS) | j;
        let bucket = (index >>> halfMagnitude) - 1;
        let sub = (index & (half - 1)) + half;
        if (bucket < 0) {
          sub -= half;
          bucket = 0;
        }
        const width = POW2[bucket + unit];
        fn(sub * width + Math.floor(width / 2), count);
      }
    }
  }

  /** @returns {number} mean of bucket median values, as JsHistogram computes it; 0 when empty */
  get mean () {
    if (this.totalCount === 0) return 0;
    let totalValue = 0;
    this._forEachMedian((median, count) => {
      totalValue += median * count;
    });
    return totalValue / this.totalCount;
  }

  /**
   * @param {number} [mean]
   * @returns {number} standard deviation, as JsHistogram computes it; 0 when empty
   */
  getStdDeviation (mean = this.mean) {
    if (this.totalCount === 0) return 0;
    let total = 0;
    this._forEachMedian((median, count) => {
      const deviation = median - mean;
      total += deviation * deviation * count;
    });
    return Math.sqrt(total / this.totalCount);
  }

  /** @returns {number} */
  get stdDeviation () {
    return this.getStdDeviation();
  }

  /**
   * @param {number} expectedIntervalBetweenValueSamples
   * @returns {PagedHistogram}
   */
  copyCorrectedForCoordinatedOmission (expectedIntervalBetweenValueSamples) {
    const copy = new PagedHistogram({ wide: this._wide });
    copy.addWhileCorrectingForCoordinatedOmission(this, expectedIntervalBetweenValueSamples);
    return copy;
  }

  /**
   * A copy as plain data for postMessage, not an encoding: the percentiles and the compression are
   * left to whoever receives it (issue 20). Two forms, whichever is cheaper for what it holds:
   * - `pairs` (index, count…) of its non-zero counts, when it touched few pages or holds few
   *   samples: a device's interval touches few counts (a 10 Hz job's second, ten). Whole pages were 20-50 KB per job and
   *   interval, and with 1,000 jobs summarizing every second that much new memory brought the
   *   worker a mark-compact every 0.4 s;
   * - its touched pages (`pages`: the page of each slot, `pool`: their counts), when it touched
   *   many and holds many samples: native copies, where a pass over them in JavaScript took 110-210 µs at 5,000-10,000
   *   samples a second (bench/stalls.js), run once per interval and so never compiled.
   * @param {boolean} [pairsOnly=false] always the pairs, whatever it holds (the tests compare the forms)
   * @returns {PagedTransfer}
   */
  toTransfer (pairsOnly = false) {
    const slots = this._slots;
    const pool = this._pool;
    const out = {
      pairs: null,
      pages: null,
      pool: null,
      wide: this._wide,
      totalCount: this.totalCount,
      maxValue: this.maxValue,
      minNonZeroValue: this.minNonZeroValue,
      startTimeStampMsec: this.startTimeStampMsec,
      endTimeStampMsec: this.endTimeStampMsec,
      tag: this.tag
    };
    // pages when there are many and they hold many samples: their copy is then no larger than
    // the pairs would be, and a pass over them would cost the most
    if (!pairsOnly && this._pagesUsed > SPARSE_MAX_PAGES && this.totalCount > this._pagesUsed * 16) {
      const pages = new Int16Array(this._pagesUsed);
      for (let page = 0; page < slots.length; page++) if (slots[page] >= 0) pages[slots[page]] = page;
      out.pages = pages;
      out.pool = pool.slice(0, this._pagesUsed << PAGE_BITS);
      return out;
    }
    const need = 2 * (this._pagesUsed << PAGE_BITS);
    if (scratch.length < need) scratch = new Float64Array(need);
    let n = 0;
    for (let page = 0; page < slots.length; page++) {
      const slot = slots[page];
      if (slot < 0) continue;
      const base = slot << PAGE_BITS;
      for (let j = 0; j < PAGE_SIZE; j++) {
        const count = pool[base + j];
        if (count !== 0) { scratch[n++] = (page << PAGE_BITS) | j; scratch[n++] = count; }
      }
    }
    out.pairs = scratch.slice(0, n);
    return out;
  }

  /**
   * The histogram a toTransfer() copy describes. The copy comes from nines' own threads, so only
   * its shape is checked; each count goes through setCountAtIndex, which checks index and count.
   * @param {PagedTransfer} t
   * @param {PagedHistogram} [into] an empty histogram to fill (its pages are reused: filling a new
   *   one allocates them, page by page)
   * @returns {PagedHistogram}
   */
  static fromTransfer (t, into) {
    const isObject = t !== null && typeof t === 'object';
    const pairs = isObject && t.pairs instanceof Float64Array && t.pairs.length % 2 === 0;
    const pages = isObject && t.pages instanceof Int16Array && ArrayBuffer.isView(t.pool) && t.pool.length === t.pages.length << PAGE_BITS;
    if (!(pairs || pages) || !Number.isSafeInteger(t.totalCount)) {
      throw new NinesError('NINES_ERR_BAD_HISTOGRAM', 'not a PagedHistogram transfer (toTransfer)');
    }
    const h = into !== undefined && into.totalCount === 0 && into.wide === (t.wide === true) ? into : new PagedHistogram({ wide: t.wide === true });
    if (pairs) {
      const p = t.pairs;
      for (let i = 0; i < p.length; i += 2) h.setCountAtIndex(p[i], p[i + 1]);
    } else {
      for (let slot = 0; slot < t.pages.length; slot++) {
        const first = t.pages[slot] << PAGE_BITS;
        const base = slot << PAGE_BITS;
        for (let j = 0; j < PAGE_SIZE; j++) {
          const count = t.pool[base + j];
          if (count !== 0) h.setCountAtIndex(first | j, count);
        }
      }
    }
    h.setTotalCount(t.totalCount);
    h.maxValue = t.maxValue;
    h.minNonZeroValue = t.minNonZeroValue;
    h.startTimeStampMsec = t.startTimeStampMsec;
    h.endTimeStampMsec = t.endTimeStampMsec;
    h.tag = t.tag;
    return h;
  }

  /** @returns {string} */
  toString () {
    return `PagedHistogram ${this.countBits}b ${JSON.stringify(this)}`;
  }
}

/**
 * @typedef {object} PagedTransfer a PagedHistogram as plain data (toTransfer): pairs, or pages and pool
 * @property {Float64Array|null} pairs index, count, index, count… of the non-zero counts, ascending
 * @property {Int16Array|null} pages the page number of each slot of `pool`
 * @property {Uint16Array|Uint32Array|Float64Array|null} pool 128 counts per slot
 * @property {boolean} wide
 * @property {number} totalCount
 * @property {number} maxValue
 * @property {number} minNonZeroValue
 * @property {number} startTimeStampMsec
 * @property {number} endTimeStampMsec
 * @property {string} tag
 */

module.exports = { PagedHistogram, PAGE_BITS };
