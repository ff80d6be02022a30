'use strict';

const { createAccumulator, mergeInto, summarize } = require('../../latency');

/**
 * A job's response-time histogram over its latest intervals, for the status page: the interval
 * histograms added into one accumulator, and the oldest subtracted bucket by bucket when it
 * leaves the window. Percentiles are read from the sum (latency-method.md rule 6), never
 * averaged over intervals.
 */
class SlidingWindow {
  /** @param {number} size intervals kept */
  constructor (size) {
    this.size = size;
    /** @type {import('../../latency/paged-histogram').PagedHistogram[]} */
    this.ring = [];
    this.acc = createAccumulator();
    this.counts = [];
  }

  /**
   * @param {import('../../latency/paged-histogram').PagedHistogram} h an interval's histogram (ns)
   * @param {{ok: number, errors: number, timeouts: number, skipped: number}} counts
   */
  push (h, counts) {
    mergeInto(this.acc, h);
    this.ring.push(h);
    this.counts.push({ ok: counts.ok, errors: counts.errors, timeouts: counts.timeouts, skipped: counts.skipped });
    if (this.ring.length > this.size) {
      const old = this.ring.shift();
      this.counts.shift();
      old.forEachNonZero((index, count) => this.acc.addToCountAtIndex(index, -count));
      this.acc.setTotalCount(this.acc.totalCount - old.totalCount);
    }
  }

  /** @returns {number} intervals in the window now */
  get intervals () {
    return this.ring.length;
  }

  /** @returns {{ok: number, errors: number, timeouts: number, skipped: number}} summed over the window */
  get totals () {
    const t = { ok: 0, errors: 0, timeouts: 0, skipped: 0 };
    for (const c of this.counts) for (const k of Object.keys(t)) t[k] += c[k];
    return t;
  }

  /** @returns {import('../../latency/summary').Stats} in ms, from the merged histogram */
  stats () {
    return summarize(this.acc);
  }
}

module.exports = { SlidingWindow };
