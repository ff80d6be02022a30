'use strict';

/**
 * `.hgrm` percentile distributions (latency-notes §2): written by the library's plain-JS
 * outputPercentileDistribution (the WASM one prints wrong decimals, §1.6), read back by parseHgrm,
 * and the same rows as numbers for plotting.
 */

const { JsHistogram } = require('hdr-histogram-js');
const { invalid, positive, plainObject } = require('./validate');

/**
 * hdr-plot matches data rows with a leading-whitespace regex: the 12-column value field must keep
 * a space, so a printed value needs at most 11 characters with its 3 decimals, i.e. < 1e7 units.
 * (latency-notes §2.6 says 1e8, but "10000000.000" already fills all 12 columns.)
 */
const MAX_PRINTED_VALUE = 1e7;

/**
 * @param {unknown} h
 * @returns {JsHistogram}
 */
function checkJsHistogram (h) {
  if (!(h instanceof JsHistogram)) {
    throw invalid('h', h, 'a JS HdrHistogram (the WASM one prints wrong decimals, latency-notes §1.6)');
  }
  return h;
}

/**
 * @param {unknown} ticks
 * @returns {number}
 */
function checkTicks (ticks) {
  if (!Number.isInteger(ticks) || ticks < 1 || ticks > 1000) {
    throw invalid('options.ticksPerHalfDistance', ticks, 'an integer in [1, 1000]');
  }
  return /** @type {number} */ (ticks);
}

/**
 * Prints a histogram as HdrHistogram's percentile distribution text, byte for byte as Java
 * prints it: the library's output with the `#[Max` footer showing the highest equivalent value of
 * the top bucket (Java's getMaxValue) instead of the raw recorded max (latency-notes §2.5).
 *
 * @param {JsHistogram} h values in ns (any JS histogram; decimals follow its significant digits)
 * @param {object} [options]
 * @param {number} [options.unitRatio] ns per printed unit, default 1e6 (print ms)
 * @param {number} [options.ticksPerHalfDistance] rows per halving of the distance to 100 %, default 5
 * @param {boolean} [options.javaMax] default true; false keeps the library's raw max in the footer
 * @returns {string} the .hgrm text, ending in a newline
 * @throws {NinesError} NINES_ERR_INVALID_ARG, also when the max would print as 1e7 units or more
 */
function toHgrm (h, options = {}) {
  checkJsHistogram(h);
  plainObject(options, 'options');
  const unitRatio = options.unitRatio === undefined ? 1e6 : positive(options.unitRatio, 'options.unitRatio');
  const ticks = checkTicks(options.ticksPerHalfDistance === undefined ? 5 : options.ticksPerHalfDistance);
  const javaMax = options.javaMax === undefined ? true : options.javaMax;
  if (typeof javaMax !== 'boolean') throw invalid('options.javaMax', javaMax, 'a boolean');
  if (h.totalCount === 0) return h.outputPercentileDistribution(ticks, unitRatio);

  const top = h.getValueAtPercentile(100);
  if (top / unitRatio >= MAX_PRINTED_VALUE) {
    throw invalid('options.unitRatio', unitRatio,
      `large enough that the max (${top}) prints below ${MAX_PRINTED_VALUE} units, or .hgrm readers drop rows ` +
      '(use the default 1e6: milliseconds from ns)');
  }
  if (!javaMax) return h.outputPercentileDistribution(ticks, unitRatio);
  // The footer prints h.maxValue; lend it the bucket-based max for the call (single-threaded, and
  // restored even if printing throws) rather than forking the library's printer.
  const saved = h.maxValue;
  h.maxValue = top;
  try {
    return h.outputPercentileDistribution(ticks, unitRatio);
  } finally {
    h.maxValue = saved;
  }
}

/**
 * @typedef {object} HgrmRow
 * @property {number} value highest equivalent value of the bucket where the tick was reached
 * @property {number} percentile the tick level, 0…1
 * @property {number} totalCount samples up to and including value
 * @property {number|null} inverse 1/(1 − percentile), the plotter's x axis; null on the final
 *   100 % row (infinite there; the .hgrm text prints only three columns)
 */

/**
 * The rows of the percentile distribution as numbers, without formatting.
 * @param {JsHistogram} h
 * @param {{ticksPerHalfDistance?: number, unitRatio?: number}} [options] unitRatio divides
 *   values (default 1: the histogram's own unit)
 * @returns {HgrmRow[]}
 */
function percentileRows (h, options = {}) {
  checkJsHistogram(h);
  plainObject(options, 'options');
  const ticks = checkTicks(options.ticksPerHalfDistance === undefined ? 5 : options.ticksPerHalfDistance);
  const unitRatio = options.unitRatio === undefined ? 1 : positive(options.unitRatio, 'options.unitRatio');
  const rows = [];
  const iterator = h.percentileIterator;
  iterator.reset(ticks);
  while (iterator.hasNext()) {
    const step = iterator.next();
    const level = step.percentileLevelIteratedTo;
    rows.push({
      value: step.valueIteratedTo / unitRatio,
      percentile: level / 100,
      totalCount: step.totalCountToThisValue,
      inverse: level < 100 ? 1 / (1 - level / 100) : null
    });
  }
  return rows;
}

const MEAN_LINE = /^#\[Mean\s*=\s*([^,\s]+),\s*StdDeviation\s*=\s*([^\]\s]+)\s*\]/;
const MAX_LINE = /^#\[Max\s*=\s*([^,\s]+),\s*Total count\s*=\s*([^\]\s]+)\s*\]/;

/**
 * @param {string} text
 * @param {string} field
 * @param {string} line
 * @returns {number}
 */
function number (text, field, line) {
  const value = Number(text);
  if (text === '' || !Number.isFinite(value)) throw invalid(field, line, 'a line of finite numbers');
  return value;
}

/**
 * Reads a percentile distribution: ours, Java's (HistogramLogProcessor adds comment lines before
 * the header, which are skipped), and the CSV variant (no footer, last column "Infinity").
 * @param {string} text
 * @returns {{rows: HgrmRow[], mean: number|null, stddev: number|null, max: number|null, count: number|null}}
 *   in the printed unit; footer values are null when the text has no footer (CSV); count then
 *   comes from the last row
 * @throws {NinesError} NINES_ERR_INVALID_ARG naming the line that does not parse
 */
function parseHgrm (text) {
  if (typeof text !== 'string') throw invalid('text', text, 'a string');
  const out = { rows: [], mean: null, stddev: null, max: null, count: null };
  let sawHeader = false;
  text.split(/\r\n|\r|\n/).forEach((raw, i) => {
    const line = raw.trim();
    const field = `text line ${i + 1}`;
    if (line === '') return;
    if (line.startsWith('#')) {
      let m = MEAN_LINE.exec(line);
      if (m) {
        out.mean = number(m[1], field, raw);
        out.stddev = number(m[2], field, raw);
      }
      m = MAX_LINE.exec(line);
      if (m) {
        out.max = number(m[1], field, raw);
        out.count = number(m[2], field, raw);
      }
      return;
    }
    if (/^"?Value"?[\s,]/.test(line)) {
      sawHeader = true;
      return;
    }
    const cells = line.includes(',') ? line.split(',') : line.split(/\s+/);
    if (cells.length !== 3 && cells.length !== 4) throw invalid(field, raw, 'a row of 3 or 4 numbers (Value Percentile TotalCount 1/(1-Percentile))');
    const row = {
      value: number(cells[0], field, raw),
      percentile: number(cells[1], field, raw),
      totalCount: number(cells[2], field, raw),
      inverse: cells.length === 4 && cells[3] !== 'Infinity' ? number(cells[3], field, raw) : null
    };
    if (row.value < 0 || row.percentile < 0 || row.percentile > 1 || !Number.isSafeInteger(row.totalCount) || row.totalCount < 0) {
      throw invalid(field, raw, 'a row with value >= 0, percentile in [0, 1] and an integer count');
    }
    out.rows.push(row);
  });
  if (!sawHeader && out.rows.length === 0) throw invalid('text', text, 'an HdrHistogram percentile distribution (.hgrm)');
  if (out.count === null && out.rows.length > 0) out.count = out.rows[out.rows.length - 1].totalCount;
  return out;
}

module.exports = { toHgrm, parseHgrm, percentileRows, MAX_PRINTED_VALUE };
