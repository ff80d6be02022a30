'use strict';

/**
 * Percentile plots as standalone SVG, in the style of HdrHistogram's plotFiles.html: latency
 * against 1/(1 − percentile) on a log axis labelled 0 %, 90 %, 99 %, 99.9 % … ("nines").
 * No dependencies; used by `nines plot a.hgrm b.hgrm -o plot.svg` and the benchmarks.
 */

const { JsHistogram } = require('hdr-histogram-js');
const { percentileRows } = require('./hgrm');
const { invalid, plainObject } = require('./validate');

const UNIT_NS = Object.freeze({ ns: 1, us: 1e3, µs: 1e3, ms: 1e6, s: 1e9 });
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];
const MARGIN = { left: 72, right: 40, top: 44, bottom: 52 };
const MAX_SERIES = 64;
/** Above this max/min ratio the y axis goes logarithmic */
const LOG_Y_RATIO = 100;

/**
 * Escapes text for XML content and attributes; characters XML 1.0 forbids become U+FFFD.
 * @param {string} text
 * @returns {string}
 */
function escapeXml (text) {
  return String(text)
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

/** @param {number} v @returns {string} */
const fmt = (v) => String(Number(v.toPrecision(4)));
/** @param {number} v @returns {string} coordinates with two decimals */
const px = (v) => v.toFixed(2);

/**
 * @param {unknown} size
 * @param {string} field
 * @param {number} fallback
 * @returns {number}
 */
function checkSize (size, field, fallback) {
  if (size === undefined) return fallback;
  if (!Number.isInteger(size) || size < 200 || size > 10000) throw invalid(field, size, 'an integer in [200, 10000] (pixels)');
  return /** @type {number} */ (size);
}

/**
 * @param {unknown} item
 * @param {number} i
 * @param {number} unitNs
 * @returns {{label: string, points: {inverse: number, value: number}[]}}
 */
function seriesPoints (item, i, unitNs) {
  const field = `series[${i}]`;
  plainObject(item, field);
  if (typeof item.label !== 'string') throw invalid(`${field}.label`, item.label, 'a string');
  let rows;
  if (item.histogram !== undefined) {
    if (!(item.histogram instanceof JsHistogram)) throw invalid(`${field}.histogram`, item.histogram, 'a JS HdrHistogram (ns)');
    rows = percentileRows(item.histogram, { unitRatio: unitNs });
  } else if (Array.isArray(item.rows)) {
    rows = item.rows;
  } else {
    throw invalid(field, item, 'an object with a histogram (ns) or rows (from parseHgrm, in the plot unit)');
  }
  const points = [];
  rows.forEach((row, j) => {
    const ok = row !== null && typeof row === 'object' && Number.isFinite(row.value) && row.value >= 0 &&
      (row.inverse === null || (Number.isFinite(row.inverse) && row.inverse >= 1));
    if (!ok) throw invalid(`${field}.rows[${j}]`, row, 'a row with value >= 0 and inverse null or >= 1');
    // The 100 % row has no finite x; the row before it already sits in the top bucket.
    if (row.inverse !== null) points.push({ inverse: row.inverse, value: row.value });
  });
  return { label: item.label, points };
}

/**
 * @param {number} maxValue
 * @param {number} minPositive
 * @returns {{log: boolean, lo: number, hi: number, ticks: number[]}}
 */
function yScale (maxValue, minPositive) {
  if (maxValue > 0 && minPositive > 0 && maxValue / minPositive > LOG_Y_RATIO) {
    const lo = Math.floor(Math.log10(minPositive));
    const hi = Math.max(Math.ceil(Math.log10(maxValue)), lo + 1);
    const ticks = [];
    for (let e = lo; e <= hi; e++) ticks.push(10 ** e);
    return { log: true, lo: 10 ** lo, hi: 10 ** hi, ticks };
  }
  const top = maxValue > 0 ? maxValue : 1;
  const raw = top / 5;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const norm = raw / magnitude;
  const step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * magnitude;
  const hi = Math.ceil(top / step - 1e-9) * step;
  const ticks = [];
  for (let k = 0; k * step <= hi + step / 1e6; k++) ticks.push(k * step);
  return { log: false, lo: 0, hi, ticks };
}

/**
 * Draws percentile curves as SVG.
 * @param {Array<{label: string, histogram?: import('hdr-histogram-js').Histogram, rows?: import('./hgrm').HgrmRow[]}>} series
 *   one curve each: a histogram in ns, or rows from parseHgrm already in `unit`
 * @param {object} [options]
 * @param {string} [options.title] default "Latency by percentile"
 * @param {string} [options.unit] ns | us | µs | ms | s, default ms
 * @param {number} [options.width] pixels, default 800
 * @param {number} [options.height] pixels, default 480
 * @returns {string} a standalone SVG document (valid XML; labels escaped)
 */
function percentilePlotSvg (series, options = {}) {
  if (!Array.isArray(series) || series.length === 0 || series.length > MAX_SERIES) {
    throw invalid('series', series, `an array of 1 to ${MAX_SERIES} series`);
  }
  plainObject(options, 'options');
  const title = options.title === undefined ? 'Latency by percentile' : options.title;
  if (typeof title !== 'string') throw invalid('options.title', title, 'a string');
  const unit = options.unit === undefined ? 'ms' : options.unit;
  if (!Object.hasOwn(UNIT_NS, unit)) throw invalid('options.unit', unit, `one of ${Object.keys(UNIT_NS).join(', ')}`);
  const width = checkSize(options.width, 'options.width', 800);
  const height = checkSize(options.height, 'options.height', 480);
  const curves = series.map((item, i) => seriesPoints(item, i, UNIT_NS[unit]));

  const all = curves.flatMap((c) => c.points);
  const maxInverse = all.reduce((m, p) => Math.max(m, p.inverse), 1);
  const decades = Math.min(Math.max(Math.ceil(Math.log10(maxInverse) - 1e-9), 2), 12);
  const maxValue = all.reduce((m, p) => Math.max(m, p.value), 0);
  const minPositive = all.reduce((m, p) => (p.value > 0 ? Math.min(m, p.value) : m), Infinity);
  const ys = yScale(maxValue, minPositive);

  const left = MARGIN.left;
  const top = MARGIN.top;
  const plotW = width - MARGIN.left - MARGIN.right;
  const plotH = height - MARGIN.top - MARGIN.bottom;
  const xOf = (inverse) => left + (Math.log10(inverse) / decades) * plotW;
  const yOf = ys.log
    ? (v) => top + plotH - ((Math.log10(Math.max(v, ys.lo)) - Math.log10(ys.lo)) / (Math.log10(ys.hi) - Math.log10(ys.lo))) * plotH
    : (v) => top + plotH - (v / ys.hi) * plotH;

  const out = [];
  out.push('<?xml version="1.0" encoding="UTF-8"?>');
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`);
  out.push(`<title>${escapeXml(title)}</title>`);
  out.push(`<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`);
  out.push(`<text x="${px(left + plotW / 2)}" y="${px(top / 2 + 6)}" text-anchor="middle" font-size="15">${escapeXml(title)}</text>`);

  out.push('<g stroke="#e0e0e0" stroke-width="1">');
  for (let k = 0; k <= decades; k++) out.push(`<line x1="${px(xOf(10 ** k))}" y1="${px(top)}" x2="${px(xOf(10 ** k))}" y2="${px(top + plotH)}"/>`);
  for (const t of ys.ticks) out.push(`<line x1="${px(left)}" y1="${px(yOf(t))}" x2="${px(left + plotW)}" y2="${px(yOf(t))}"/>`);
  out.push('</g>');
  out.push(`<rect x="${px(left)}" y="${px(top)}" width="${px(plotW)}" height="${px(plotH)}" fill="none" stroke="#333333"/>`);

  out.push('<g fill="#333333">');
  for (let k = 0; k <= decades; k++) {
    const label = k === 0 ? '0%' : `${(100 - 100 / 10 ** k).toFixed(Math.max(0, k - 2))}%`;
    out.push(`<text x="${px(xOf(10 ** k))}" y="${px(top + plotH + 18)}" text-anchor="middle">${label}</text>`);
  }
  for (const t of ys.ticks) out.push(`<text x="${px(left - 8)}" y="${px(yOf(t) + 4)}" text-anchor="end">${fmt(t)}</text>`);
  out.push(`<text x="${px(left + plotW / 2)}" y="${px(height - 12)}" text-anchor="middle">Percentile</text>`);
  const yLabelX = 16;
  const yLabelY = top + plotH / 2;
  out.push(`<text x="${yLabelX}" y="${px(yLabelY)}" text-anchor="middle" transform="rotate(-90 ${yLabelX} ${px(yLabelY)})">Latency (${escapeXml(unit)})${ys.log ? ', log scale' : ''}</text>`);
  out.push('</g>');

  out.push('<g fill="none" stroke-width="1.5" stroke-linejoin="round">');
  curves.forEach((curve, i) => {
    const points = curve.points.map((p) => `${px(xOf(p.inverse))},${px(yOf(p.value))}`).join(' ');
    out.push(`<polyline stroke="${COLORS[i % COLORS.length]}" points="${points}"/>`);
  });
  out.push('</g>');

  const longest = curves.reduce((m, c) => Math.max(m, c.label.length), 0);
  const boxW = Math.min(plotW - 20, 44 + 7 * longest);
  out.push('<g>');
  out.push(`<rect x="${px(left + 10)}" y="${px(top + 10)}" width="${px(boxW)}" height="${px(10 + 18 * curves.length)}" fill="#ffffff" fill-opacity="0.85" stroke="#cccccc"/>`);
  curves.forEach((curve, i) => {
    const y = top + 24 + 18 * i;
    out.push(`<line x1="${px(left + 18)}" y1="${px(y - 4)}" x2="${px(left + 40)}" y2="${px(y - 4)}" stroke="${COLORS[i % COLORS.length]}" stroke-width="2"/>`);
    out.push(`<text x="${px(left + 46)}" y="${px(y)}" fill="#333333">${escapeXml(curve.label)}</text>`);
  });
  out.push('</g>');
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

module.exports = { percentilePlotSvg, escapeXml };
