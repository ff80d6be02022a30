'use strict';

/**
 * Classic Prometheus histogram buckets (cumulative counts per `le` bound) counted from nines' HDR
 * histograms, for every scraper that reads no native histograms: Prometheus without native
 * histograms on, VictoriaMetrics, Telegraf, Grafana Agent in text mode. The bounds are the user's
 * (gateway.metrics.buckets), the same for every job, so sum() adds them across jobs and gateways.
 *
 * Counts are exact at the HDR histogram's resolution: each HDR bucket (at most 0.1 % wide at 3
 * significant digits) is placed by its highest equivalent value, the value nines reports for a
 * percentile, as the native buckets are (native-histogram.js). So when nines' p99 is at most a
 * bound, that bound's cumulative count is at least 99 % of the count, and histogram_quantile lands
 * in the bucket that holds nines' own value: its error is at most that bucket's width.
 */

class BucketLayout {
  /**
   * @param {number[]} boundsNs upper bounds in ns, ascending, whole numbers (checked by the config)
   */
  constructor (boundsNs) {
    this.boundsNs = Float64Array.from(boundsNs);
    /** the bounds in seconds, the unit of the exposition */
    this.les = boundsNs.map((ns) => ns / 1e9);
    /**
     * HDR bucket index → classic bucket (bounds.length: above the last bound, only in +Inf), the
     * same for every HDR histogram of nines' fixed layout, filled on first use of each index
     * @type {Map<number, number>}
     */
    this._positions = new Map();
  }

  /**
   * @param {import('../../latency/paged-histogram').PagedHistogram} h any histogram of nines' layout
   * @param {number} index an HDR bucket index
   * @returns {number} the classic bucket that counts it
   */
  position (h, index) {
    let pos = this._positions.get(index);
    if (pos === undefined) {
      const top = h.highestEquivalentValue(h.valueFromIndex(index));
      const b = this.boundsNs;
      let lo = 0;
      let hi = b.length; // first bound >= top, or b.length
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (b[mid] < top) lo = mid + 1;
        else hi = mid;
      }
      pos = lo;
      this._positions.set(index, pos);
    }
    return pos;
  }
}

/**
 * One cumulative classic histogram (since the gateway started) over a layout.
 */
class ClassicHistogram {
  /** @param {BucketLayout} layout */
  constructor (layout) {
    this.layout = layout;
    /** counts per bucket, not cumulative; the last is above the last bound */
    this.counts = new Float64Array(layout.boundsNs.length + 1);
  }

  /**
   * Adds an HDR histogram of integer ns.
   * @param {import('../../latency/paged-histogram').PagedHistogram} h
   */
  addHdr (h) {
    if (h.totalCount === 0 || this.layout.boundsNs.length === 0) return;
    const layout = this.layout;
    const counts = this.counts;
    h.forEachNonZero((index, count) => { counts[layout.position(h, index)] += count; });
  }

  /**
   * The finite buckets as the expositions write them; +Inf is the histogram's count.
   * @returns {Array<{le: number, cumulative: number}>} le in seconds
   */
  cumulative () {
    const les = this.layout.les;
    const out = new Array(les.length);
    let sum = 0;
    for (let i = 0; i < les.length; i++) {
      sum += this.counts[i];
      out[i] = { le: les[i], cumulative: sum };
    }
    return out;
  }
}

module.exports = { BucketLayout, ClassicHistogram };
