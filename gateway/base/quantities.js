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

const BYTE_UNITS = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3, tib: 1024 ** 4 };

/**
 * Parses a size: a whole number of bytes, or a string such as "64MB", "1GB", "512 KiB" (KB, MB, GB
 * are powers of 1000 as on a disk label; KiB, MiB, GiB powers of 1024).
 * @param {number|string} value
 * @param {string} [field] name used in the error message
 * @returns {number} bytes, a whole number >= 0
 */
function parseBytes (value, field = 'size') {
  let bytes;
  if (typeof value === 'number') {
    bytes = value;
  } else if (typeof value === 'string') {
    const m = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*([kmgt]i?b|b)?\s*$/i.exec(value);
    if (m) bytes = Math.floor(Number(m[1]) * BYTE_UNITS[(m[2] || 'b').toLowerCase()]);
  }
  if (typeof bytes !== 'number' || !Number.isSafeInteger(bytes) || bytes < 0) {
    throw new NinesError('NINES_ERR_INVALID_ARG',
      `${field} must be a whole number of bytes or a string like "64MB", "1GB", "512KiB"; got ${JSON.stringify(value)}`,
      { field, value });
  }
  return bytes;
}

/** How to write a rate, in every refusal of one that is not a rate at all */
const RATE_HINT = 'use "max" or e.g. "1000/s"';
/** Highest rate parseRate accepts, per second */
const MAX_RATE_PER_S = 1e6;
const NUMBER = '(\\d+(?:\\.\\d+)?|\\.\\d+)';
/** "1000/s", "60 / min", or a bare number (per second) */
const PER_UNIT_RE = new RegExp(`^\\s*${NUMBER}\\s*(?:\\/\\s*(s|sec|m|min|h))?\\s*$`);
/** "10Hz", "2.5 kHz" (any case) */
const HERTZ_RE = new RegExp(`^\\s*${NUMBER}\\s*(k?)hz\\s*$`, 'i');
/** a period: "100ms", "2s", "500us", "1min" (the units of parseDuration) */
const PERIOD_RE = new RegExp(`^\\s*${NUMBER}\\s*(ns|us|µs|ms|s|m|min|h)\\s*$`);
/** Periods per second of one period unit: "10us" is 1e6 / 10 requests per second */
const PERIOD_UNITS_PER_S = { ns: 1e9, us: 1e6, µs: 1e6, ms: 1000, s: 1, m: 1 / 60, min: 1 / 60, h: 1 / 3600 };

/**
 * Parses a request rate: "max" (closed loop); a number or "1000/s", "60/min", "5/h" (requests per
 * second, minute, hour); a frequency, "10Hz" or "1kHz"; or a period between requests, "100ms",
 * "2s", "500us", "1min" (a duration with its unit, as parseDuration reads it: "100ms" is 10/s).
 * @param {number|string} value
 * @param {string} [field]
 * @returns {number} requests per second, or Infinity for "max"
 * @throws {NinesError} NINES_ERR_INVALID_ARG with details {field, value, rule, outOfRange}: outOfRange
 *   true for a well-formed rate out of range, false for a value that is no rate at all (so an edge
 *   can give its own hint without reading the rule's text)
 */
function parseRate (value, field = 'rate') {
  let perSec;
  if (value === 'max' || value === Infinity) return Infinity;
  if (typeof value === 'number') {
    perSec = value;
  } else if (typeof value === 'string') {
    let m;
    if ((m = PER_UNIT_RE.exec(value))) perSec = Number(m[1]) * RATE_UNITS_PER_S[m[2] || 's'];
    else if ((m = HERTZ_RE.exec(value))) perSec = Number(m[1]) * (m[2] ? 1000 : 1);
    else if ((m = PERIOD_RE.exec(value))) perSec = PERIOD_UNITS_PER_S[m[2]] / Number(m[1]);
  }
  if (typeof perSec !== 'number' || !Number.isFinite(perSec) || perSec <= 0 || perSec > MAX_RATE_PER_S) {
    // a well-formed rate refused here is out of range, not misspelt: the rule says which
    const wellFormed = typeof value === 'number' || (typeof value === 'string' && /^\s*-?(\d+(\.\d+)?|\.\d+)\s*(\/\s*(s|sec|m|min|h))?\s*$/.test(value));
    const rule = wellFormed ? `must be more than 0 and at most ${MAX_RATE_PER_S}/s` : `is not a rate; ${RATE_HINT}`;
    throw new NinesError('NINES_ERR_INVALID_ARG',
      `${field} must be "max" or a positive rate up to ${MAX_RATE_PER_S}/s such as 1000, "1000/s", "60/min", "10Hz", or a period between requests such as "100ms"; got ${JSON.stringify(value)}`,
      { field, value, rule, outOfRange: wellFormed });
  }
  return perSec;
}

/**
 * Writes a millisecond figure as a rule states it: 100 → "100ms", 60000 → "1m", 86400000 → "24h".
 * @param {number} ms
 * @returns {string}
 */
function formatMs (ms) {
  if (ms >= 3600000 && ms % 3600000 === 0) return `${ms / 3600000}h`;
  if (ms >= 60000 && ms % 60000 === 0) return `${ms / 60000}m`;
  if (ms >= 1000 && ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
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

module.exports = { parseDuration, parseRate, parseBytes, formatNs, formatMs, MAX_RATE_PER_S, RATE_HINT };
