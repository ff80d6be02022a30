'use strict';

/**
 * Renders a run (machine, versions, questions, targets) as Markdown and writes the plots. Rows are
 * aggregated over their runs (median, min–max); latency rows get ratios to the floor (question 2)
 * and to the C libmodbus client (question 1).
 */

const fs = require('node:fs');
const path = require('node:path');
const { aggregate, spreadPct } = require('./aggregate');
const { fmt, fmtNs, fmtInt, fmtRatio } = require('./format');
const { decode } = require('./hist');

/**
 * Finds a row by question name and row id in a run's results.
 * @param {object[]} results
 * @param {string} name question name
 * @param {string} id row id
 * @returns {{row: object, agg: object}|null} the row and its aggregate, or null when absent or skipped
 */
function findRow (results, name, id) {
  const q = results.find((r) => r.name === name);
  if (!q || !q.sections) return null;
  for (const s of q.sections) {
    const row = s.rows.find((r) => r.id === id);
    if (row && !row.skipped && row.runs.length) return { row, agg: aggregate(row.runs) };
  }
  return null;
}

/**
 * The reference rows a latency section's ratios are taken against: the ones it names (`refs`: row
 * ids of the floor, question 2, and of the C libmodbus client, question 1, in the same CPU placement),
 * else the unpinned floor and no C client (a ratio across placements would mislead).
 * @param {object[]} results
 * @param {object} section
 * @returns {{floor: object|null, cClient: object|null}} aggregates
 */
function sectionRefs (results, section) {
  const named = section.refs || {};
  const floor = findRow(results, 'floor', named.floor || 'floor');
  const cClient = named.cClient ? findRow(results, 'modbus-round-trip', named.cClient) : null;
  return { floor: floor && floor.agg, cClient: cClient && cClient.agg };
}

/** @param {string[]} cells @returns {string} a Markdown table line */
const line = (cells) => `| ${cells.join(' | ')} |`;

/**
 * A latency section as a Markdown table.
 * @param {object} section {title, rows}
 * @param {{floor: object|null, cClient: object|null}} refs aggregates of the reference rows
 * @returns {string[]}
 */
function latencyTable (section, refs) {
  const out = [line(['', 'req/s (min–max)', '±', 'p50', 'p90', 'p99', 'p99.9', 'max', 'errors', '× floor: req/s · p50', '× C client: req/s · p50']),
    line(Array(11).fill('---'))];
  for (const row of section.rows) {
    if (row.skipped || !row.runs.length) { out.push(line([row.label, `skipped: ${row.skipped || 'no runs'}`, ...Array(9).fill('')])); continue; }
    const a = aggregate(row.runs);
    const m = (k) => (a[k] ? a[k].median : null);
    const vs = (ref) => (ref && ref.reqPerSec ? `${fmtRatio(m('reqPerSec') / ref.reqPerSec.median)} · ${fmtRatio(m('p50') / ref.p50.median)}` : '–');
    out.push(line([
      row.label,
      `${fmtInt(m('reqPerSec'))} (${fmtInt(a.reqPerSec.min)}–${fmtInt(a.reqPerSec.max)})`,
      `${spreadPct(a.reqPerSec).toFixed(1)} %`,
      fmtNs(m('p50')), fmtNs(m('p90')), fmtNs(m('p99')), fmtNs(m('p999')), fmtNs(m('max')),
      fmtInt(a.errors ? a.errors.max : 0),
      vs(refs.floor), vs(refs.cClient)
    ]));
  }
  return out;
}

/**
 * The Brainboxes table format (mean, p99, p99.99, max, count) for the same rows.
 * @param {object} section
 * @returns {string[]}
 */
function brainboxesTable (section) {
  const out = [line(['', 'mean', 'p99', 'p99.99', 'max', 'count']), line(Array(6).fill('---'))];
  for (const row of section.rows) {
    if (row.skipped || !row.runs.length) continue;
    const a = aggregate(row.runs);
    out.push(line([row.label, fmtNs(a.mean.median), fmtNs(a.p99.median), fmtNs(a.p9999.median), fmtNs(a.max.median), fmtInt(a.count.median)]));
  }
  return out;
}

/**
 * A custom section: the question names its columns ({key, label, unit}).
 * @param {object} section
 * @returns {string[]}
 */
function customTable (section) {
  const cols = section.columns;
  const out = [line(['', ...cols.map((c) => c.label)]), line(Array(cols.length + 1).fill('---'))];
  for (const row of section.rows) {
    if (row.skipped || !row.runs.length) { out.push(line([row.label, `skipped: ${row.skipped || 'no runs'}`, ...Array(cols.length - 1).fill('')])); continue; }
    const a = aggregate(row.runs);
    out.push(line([row.label, ...cols.map((c) => {
      const v = a[c.key];
      if (!v) return row[c.key] !== undefined ? String(row[c.key]) : '–';
      const spread = row.runs.length > 1 && v.min !== v.max ? ` (${fmt(v.min, c.unit)}–${fmt(v.max, c.unit)})` : '';
      return fmt(v.median, c.unit) + (c.spread === false ? '' : spread);
    })]));
  }
  return out;
}

/**
 * Writes one SVG percentile plot per latency question (rows with histograms).
 * @param {object[]} results
 * @param {string} dir
 * @param {string} stem file name stem
 * @returns {Object<string, string>} question name → plot file name
 */
function writePlots (results, dir, stem) {
  let plot;
  try {
    plot = require(path.join(__dirname, '..', '..', 'gateway', 'latency')).percentilePlotSvg;
  } catch { plot = null; }
  const files = {};
  if (typeof plot !== 'function') return files;
  for (const q of results) {
    const series = (q.plotSeries || []).map((p) => ({ label: p.label, histogram: decode(p.hist) }));
    for (const s of q.plotSeries ? [] : q.sections || []) {
      for (const row of s.rows) {
        if (!row.hist || row.skipped || (q.plotRows && !q.plotRows.includes(row.id))) continue;
        series.push({ label: row.label, histogram: decode(row.hist) });
      }
    }
    if (!q.latency || series.length === 0) continue;
    const file = `${stem}-q${q.question}-${q.name}.svg`;
    fs.writeFileSync(path.join(dir, file), plot(series, { title: `Q${q.question}: ${q.title}`, unit: 'ms', width: 900, height: 520 }));
    files[q.name] = file;
  }
  return files;
}

/**
 * @param {object} run {date, mode, machine, versions, loadBefore, loadAfter, results, targets, cBuild, elapsedMs, argv}
 * @param {Object<string, string>} plots
 * @returns {string} Markdown
 */
function toMarkdown (run, plots) {
  const m = run.machine;
  const out = [`# nines benchmarks — ${run.date}, ${m.host}${run.mode === 'quick' ? ' (quick smoke pass: figures are not comparable)' : ''}`, ''];
  out.push(`Machine: ${m.cpu}, ${m.cores} cores, ${m.ramGiB} GiB RAM, ${m.kernel} (${m.os}). Load average before ${run.loadBefore.join(' / ')}, after ${run.loadAfter.join(' / ')}. ` +
    `Total ${Math.round(run.elapsedMs / 1000)} s, \`${run.argv}\`.`, '');
  out.push('Versions: ' + Object.entries(run.versions).filter(([, v]) => v).map(([k, v]) => `${k} ${v}`).join(', ') + '.', '');
  out.push('Latency rows: median over rounds (rounds interleave the variants), min–max of req/s and ± half its range; ' +
    'percentiles from HDR histograms of every request (ns, 3 significant digits). Ratios: req/s and p50 over the floor (C TCP ping-pong, Q2) and over the C libmodbus client (Q1).', '');
  out.push('## Targets', '', line(['target', 'measured', 'limit', 'result', 'what limits it (when missed)']), line(['---', '---', '---', '---', '---']));
  for (const t of run.targets) {
    const res = t.met === null ? `not measured${t.why ? ': ' + t.why : ''}` : t.met ? 'met' : `**not met**${t.by ? ', by ' + t.by : ''}`;
    out.push(line([t.text, t.measured || '–', t.limit || '–', res, t.limits || '']));
  }
  out.push('');
  for (const q of run.results) {
    out.push(`## Q${q.question}. ${q.title}`, '');
    if (q.error) { out.push(`Failed: ${q.error}`, ''); continue; }
    for (const s of q.sections) {
      out.push(`### ${s.title}`, '');
      if (s.kind === 'latency') out.push(...latencyTable(s, sectionRefs(run.results, s)));
      else out.push(...customTable(s));
      out.push('');
      if (s.brainboxes) out.push('Brainboxes format:', '', ...brainboxesTable(s), '');
    }
    for (const n of q.notes || []) out.push(`- ${n}`);
    // a row's note once, however many placements repeat the row
    const noted = new Set();
    for (const s of q.sections) {
      for (const r of s.rows) {
        if (!r.note || noted.has(`${r.label}\0${r.note}`)) continue;
        noted.add(`${r.label}\0${r.note}`);
        out.push(`- ${r.label}: ${r.note}`);
      }
    }
    if (plots[q.name]) out.push('', `![Q${q.question} percentiles](${plots[q.name]})`);
    out.push('');
  }
  out.push('## Command lines', '', '```');
  for (const q of run.results) for (const c of q.cmdlines || []) out.push(`# Q${q.question}: ${c}`);
  out.push('```', '');
  return out.join('\n');
}

/**
 * Whether a run may be the README's headline: a full run (not a quick pass) of every question,
 * whether it has just run or is re-rendered from its saved .json.
 * @param {{mode: string, argv: string}} run
 * @returns {boolean}
 */
function headlinesReadme (run) {
  return run.mode === 'full' && !/ --only\b/.test(run.argv);
}

/**
 * The README's headline: date, machine, the Q1 clients table with the floor row, and the targets.
 * @param {object} run
 * @param {string} resultsFile the .md file name, for the link
 * @returns {string}
 */
function headlineMarkdown (run, resultsFile) {
  const m = run.machine;
  const q1 = run.results.find((r) => r.name === 'modbus-round-trip');
  const out = [`Measured ${run.date} on ${m.host}: ${m.cpu}, ${m.cores} cores, ${m.ramGiB} GiB, ${m.kernel}; Node ${run.versions.node}; ` +
    `load average ${run.loadBefore.join(' / ')} before, ${run.loadAfter.join(' / ')} after (a shared machine). Full results: [results/${resultsFile}](results/${resultsFile}).`, ''];
  // Q1's client tables, one per CPU placement, each with the floor of the same placement
  for (const s of q1 && q1.sections ? q1.sections.filter((x) => x.kind === 'latency' && x.placement && /^Clients/.test(x.title)) : []) {
    const refs = sectionRefs(run.results, s);
    const floor = findRow(run.results, 'floor', (s.refs && s.refs.floor) || 'floor');
    const rows = [...s.rows];
    if (floor) rows.push(floor.row);
    out.push(`Modbus TCP FC3 ×10, one connection, closed loop, ${s.title.replace(/^Clients, /, '')}:`, '', ...latencyTable({ rows }, refs), '');
  }
  out.push(line(['target', 'measured', 'result']), line(['---', '---', '---']));
  for (const t of run.targets) out.push(line([t.text, t.measured || '–', t.met === null ? 'not measured' : t.met ? 'met' : `not met (${t.by})`]));
  return out.join('\n');
}

module.exports = { findRow, sectionRefs, toMarkdown, writePlots, latencyTable, customTable, headlineMarkdown, headlinesReadme };
