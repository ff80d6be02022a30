'use strict';

/**
 * A job's quantiles over its last interval, for the metrics' summaries: p50, p90, p99 and p99.9
 * as Prometheus summary quantiles, and the max as a gauge beside them. They are read from the
 * interval's HDR histogram the way nines' own summary reads them (latency/summary.js: the highest
 * equivalent value of the bucket holding the rank), so the endpoint and the MQTT latency payload
 * give the same figures, within the HDR histogram's 3 significant digits of the true values.
 *
 * Computed once per interval when the summary arrives, never per scrape.
 */

/** The summary's quantiles, as Prometheus writes them (0…1) */
const QUANTILES = Object.freeze([0.5, 0.9, 0.99, 0.999]);
/** The same as percentiles, then 100 for the max */
const PERCENTILES = Object.freeze([...QUANTILES.map((q) => Math.round(q * 1e5) / 1e3), 100]);

/**
 * @param {import('../../latency/paged-histogram').PagedHistogram|null} h an interval's histogram, ns
 * @returns {{values: number[], max: number}} seconds, in the order of QUANTILES; NaN for an empty
 *   or missing histogram (Prometheus's client libraries write an empty summary's quantiles as NaN)
 */
function intervalQuantiles (h) {
  if (!h || h.totalCount === 0) return { values: QUANTILES.map(() => NaN), max: NaN };
  const ns = typeof h.valuesAtPercentiles === 'function'
    ? h.valuesAtPercentiles(PERCENTILES)
    : PERCENTILES.map((p) => h.getValueAtPercentile(p));
  return { values: ns.slice(0, QUANTILES.length).map((v) => v / 1e9), max: ns[QUANTILES.length] / 1e9 };
}

module.exports = { intervalQuantiles, QUANTILES };
