'use strict';

const { toNinesError } = require('../base/errors');

/**
 * What a measurement says about itself besides its percentiles: whether it held its offered rate,
 * and why its failed requests failed. Shared by the probe, the sweep and the gateway's summaries, so
 * "fell behind" means the same everywhere.
 */

/**
 * A run held its offered rate when it achieved at least this fraction of it: the sweep's saturation
 * rule (latency-method.md, "Offered-load sweep": achieved < 95 % of offered).
 */
const HELD_FRACTION = 0.95;

/**
 * True when a fixed-rate run achieved less than 95 % of its offered rate. Achieved counts what was
 * sent (ok + errors + timeouts): slots the `skip` policy skipped were not sent and do not count.
 * @param {number|null} achievedPerSec
 * @param {number|null|undefined} offeredPerSec null, undefined or Infinity: closed loop, nothing to hold
 * @returns {boolean}
 */
function fellBehind (achievedPerSec, offeredPerSec) {
  if (offeredPerSec === null || offeredPerSec === undefined || offeredPerSec === Infinity) return false;
  return !(achievedPerSec >= HELD_FRACTION * offeredPerSec);
}

/**
 * Counts failures per error code and keeps the first message of each as a sample, so a run that
 * failed says why. Timeouts count too (`NINES_ERR_REPLY_TIMEOUT`): the counts sum to errors + timeouts.
 */
class ErrorTally {
  constructor () {
    /** @type {Map<string, {count: number, sample: string}>} */
    this.byCode = new Map();
  }

  /** @param {unknown} err a failure the scheduler reported */
  add (err) {
    const e = toNinesError(err);
    const seen = this.byCode.get(e.code);
    if (seen) seen.count++;
    else this.byCode.set(e.code, { count: 1, sample: e.message });
  }

  /** @returns {Record<string, {count: number, sample: string}>} by code, most frequent first */
  toJSON () {
    const out = {};
    for (const [code, v] of [...this.byCode].sort((a, b) => b[1].count - a[1].count)) out[code] = { ...v };
    return out;
  }
}

/**
 * Lines saying why requests failed, for tables: `  479 × NINES_ERR_DEVICE_INVALID: #019 was refused…`.
 * @param {Record<string, {count: number, sample: string}>|undefined} byCode
 * @param {string} [indent='  ']
 * @returns {string[]}
 */
function errorLines (byCode, indent = '  ') {
  if (!byCode) return [];
  return Object.entries(byCode).map(([code, v]) => `${indent}${v.count} × ${code}, e.g. ${v.sample}`);
}

module.exports = { HELD_FRACTION, fellBehind, ErrorTally, errorLines };
