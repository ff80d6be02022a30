'use strict';

/** Number formatting for the tables: latencies with units, rates, ratios, counts. */

/**
 * @param {number|null|undefined} ns
 * @returns {string} 850 ns, 31.2 µs, 2.81 ms, 1.20 s (3 significant digits)
 */
function fmtNs (ns) {
  if (ns === null || ns === undefined || !Number.isFinite(ns)) return '–';
  const p3 = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
  if (ns < 1e3) return `${Math.round(ns)} ns`;
  if (ns < 1e6) return `${p3(ns / 1e3)} µs`;
  if (ns < 1e9) return `${p3(ns / 1e6)} ms`;
  return `${p3(ns / 1e9)} s`;
}

/** @param {number} x @returns {string} 31,512 */
function fmtInt (x) {
  if (x === null || x === undefined || !Number.isFinite(x)) return '–';
  return Math.round(x).toLocaleString('en-US');
}

/** @param {number} x @returns {string} 0.85× */
function fmtRatio (x) {
  if (x === null || x === undefined || !Number.isFinite(x)) return '–';
  return `${x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2)}×`;
}

/**
 * Formats a value by unit.
 * @param {number} x
 * @param {'ns'|'int'|'ratio'|'pct'|'MB'|'bytes'|'num'} unit
 * @returns {string}
 */
function fmt (x, unit) {
  if (x === null || x === undefined || !Number.isFinite(x)) return '–';
  switch (unit) {
    case 'ns': return fmtNs(x);
    case 'int': return fmtInt(x);
    case 'ratio': return fmtRatio(x);
    case 'pct': return `${x.toFixed(1)} %`;
    case 'MB': return `${x.toFixed(1)} MB`;
    case 'bytes': return `${fmtInt(x)} B`;
    default: return x >= 100 ? fmtInt(x) : String(Math.round(x * 100) / 100);
  }
}

module.exports = { fmtNs, fmtInt, fmtRatio, fmt };
