'use strict';

const { NinesError } = require('./errors');

const DURATION_UNITS_MS = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60000, min: 60000, h: 3600000 };
const RATE_UNITS_PER_S = { s: 1, sec: 1, m: 1 / 60, min: 1 / 60, h: 1 / 3600 };

/**
 * Parses a duration: a number (milliseconds) or a string such as "250ms", "1.5s", "10us", "2m".
 * @param {number|string} value
 * @param {string} [field] name used in the error message
 * @returns {number} milliseconds (may be fractional), finite and >= 0
 */
function parseDuration (value, field = 'duration') {
  let ms;
  if (typeof value === 'number') {
    ms = value;
  } else if (typeof value === 'string') {
    const m = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(ns|us|µs|ms|s|m|min|h)?\s*$/.exec(value);
    if (m) ms = Number(m[1]) * DURATION_UNITS_MS[m[2] || 'ms'];
  }
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
    throw new NinesError('NINES_ERR_INVALID_ARG',
      `${field} must be a non-negative number of milliseconds or a string like "500ms", "1s", "10us"; got ${JSON.stringify(value)}`,
      { field, value });
  }
  return ms;
}

/**
 * Parses a request rate: "max" (closed loop), a number (per second) or "1000/s", "60/min", "5/h".
 * @param {number|string} value
 * @param {string} [field]
 * @returns {number} requests per second, or Infinity for "max"
 */
function parseRate (value, field = 'rate') {
  let perSec;
  if (value === 'max' || value === Infinity) return Infinity;
  if (typeof value === 'number') {
    perSec = value;
  } else if (typeof value === 'string') {
    const m = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(?:\/\s*(s|sec|m|min|h))?\s*$/.exec(value);
    if (m) perSec = Number(m[1]) * RATE_UNITS_PER_S[m[2] || 's'];
  }
  if (typeof perSec !== 'number' || !Number.isFinite(perSec) || perSec <= 0 || perSec > 1e6) {
    throw new NinesError('NINES_ERR_INVALID_ARG',
      `${field} must be "max" or a positive rate up to 1000000/s such as 1000, "1000/s", "60/min"; got ${JSON.stringify(value)}`,
      { field, value });
  }
  return perSec;
}

/**
 * Formats nanoseconds for humans with 3 significant digits and a unit (ns, µs, ms, s).
 * @param {number} ns
 * @returns {string}
 */
function formatNs (ns) {
  if (!Number.isFinite(ns)) return String(ns);
  const abs = Math.abs(ns);
  if (abs < 1e3) return `${Math.round(ns)}ns`;
  if (abs < 1e6) return `${(ns / 1e3).toPrecision(3)}µs`;
  if (abs < 1e9) return `${(ns / 1e6).toPrecision(3)}ms`;
  return `${(ns / 1e9).toPrecision(3)}s`;
}

module.exports = { parseDuration, parseRate, formatNs };
