'use strict';

/**
 * A scan's report as text: one row per unit (unit, vendor, product, revision, readable ranges per
 * table), then what bounded it.
 */

const { TABLES } = require('./scan');

/**
 * @param {Array<[number, number]>} ranges
 * @returns {string} "0-99,200-219", or "-" for none
 */
function rangesText (ranges) {
  if (ranges.length === 0) return '-';
  return ranges.map(([a, b]) => (a === b ? String(a) : `${a}-${b}`)).join(',');
}

/**
 * @param {import('./map-probe').TableMap|undefined} m
 * @returns {string}
 */
function tableCell (m) {
  if (m === undefined) return '';
  return rangesText(m.ranges) + (m.complete ? '' : ` (stopped at ${m.stoppedAt}: ${m.error || 'budget'})`);
}

/**
 * @param {import('./scan').ScanReport} r
 * @returns {string} the table and the summary lines
 */
function formatReport (r) {
  const head = ['unit', 'vendor', 'product', 'revision', 'name', ...TABLES.map((t) => t.table)];
  const rows = r.units.map((u) => {
    const id = u.identity;
    const ident = id.supported
      ? [id.vendorName || '', id.productCode || '', id.revision || '', id.productName || id.modelName || '']
      : ['(no FC43)', '', '', ''];
    return [String(u.unitId), ...ident, ...TABLES.map((t) => (u.map ? tableCell(u.map[t.table]) : ''))];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  const d = r.discovery;
  const out = [line(head), ...rows.map(line)];
  out.push('');
  out.push(`${r.units.length} unit(s) found on ${r.target} in ${(r.elapsedMs / 1000).toFixed(1)} s, ${r.requests} requests; ` +
    `finding them took ${(d.elapsedMs / 1000).toFixed(1)} s of at most ${(d.boundMs / 1000).toFixed(1)} s`);
  if (d.notProbed.length) out.push(`not asked (the bound ran out): unit ids ${compact(d.notProbed)}`);
  if (d.garbled.length) out.push(`answers that did not parse (noise, or two units on one id): unit ids ${compact(d.garbled)}`);
  if (r.cutShort) out.push('cut short by the hard cap on the scan\'s duration (--max-duration)');
  return out.join('\n') + '\n';
}

/** @param {number[]} ids @returns {string} "1-5,9" */
function compact (ids) {
  const out = [];
  for (let i = 0; i < ids.length; i++) {
    let j = i;
    while (j + 1 < ids.length && ids[j + 1] === ids[j] + 1) j++;
    out.push(i === j ? String(ids[i]) : `${ids[i]}-${ids[j]}`);
    i = j;
  }
  return out.join(',');
}

module.exports = { formatReport, compact };
