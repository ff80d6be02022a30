'use strict';

/**
 * histogram_quantile over classic buckets, as Prometheus computes it (promql/quantile.go,
 * bucketQuantile): the bucket holding rank q·count, linear interpolation inside it from the bound
 * below (0 below the first bound); a rank in +Inf gives the last finite bound. The model the
 * documented error of the classic buckets is stated for.
 * @param {number} q 0…1
 * @param {Array<{le: number, cumulative: number}>} buckets finite bounds, ascending
 * @param {number} count the +Inf bucket
 * @returns {number}
 */
function histogramQuantile (q, buckets, count) {
  const rank = q * count;
  let prevLe = 0;
  let prevCum = 0;
  for (const b of buckets) {
    if (b.cumulative >= rank) return prevLe + (b.le - prevLe) * ((rank - prevCum) / (b.cumulative - prevCum));
    prevLe = b.le;
    prevCum = b.cumulative;
  }
  return prevLe;
}

module.exports = { histogramQuantile };
