'use strict';

/**
 * Turns a row's runs into what the tables print: per field the median and the min–max over runs,
 * and the throughput spread as ± half the range in % of the median (undici's tolerance).
 */

/** @param {number[]} xs @returns {number} */
function median (xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * @param {object[]} runs
 * @returns {Object<string, {median: number, min: number, max: number}>} one entry per numeric field
 */
function aggregate (runs) {
  const out = {};
  if (!runs || runs.length === 0) return out;
  for (const k of Object.keys(runs[0])) {
    const xs = runs.map((r) => r[k]).filter((x) => typeof x === 'number' && Number.isFinite(x));
    if (xs.length === 0) continue;
    out[k] = { median: median(xs), min: Math.min(...xs), max: Math.max(...xs) };
  }
  return out;
}

/**
 * @param {{median: number, min: number, max: number}} a
 * @returns {number} ± half the range, in % of the median
 */
function spreadPct (a) {
  return a && a.median ? ((a.max - a.min) / 2) / a.median * 100 : 0;
}

module.exports = { median, aggregate, spreadPct };
