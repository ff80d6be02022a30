'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const hdr = require('hdr-histogram-js');
const C = require('../../gateway/base/constants');
const { createHistogram, recordNs } = require('../../gateway/latency/histogram');
const { toHgrm, parseHgrm, percentileRows } = require('../../gateway/latency/hgrm');
const { latencies, throwsCode } = require('./support/helpers');

const EXAMPLE_US = [1200, 1250, 1300, 1320, 1400, 1450, 1500, 2100, 3800, 12000];
const EXAMPLE = fs.readFileSync(path.join(__dirname, '../fixtures/latency/notes-2.4-example.hgrm.txt'), 'utf8');

/** The §2.4 histogram exactly as the notes built it: library defaults, µs values. */
function exampleHistogram () {
  const h = hdr.build();
  for (const v of EXAMPLE_US) h.recordValue(v);
  return h;
}

/** hdr-plot's row regex (BrunoBonacci/hdr-plot, hdr_plot.py), anchored at the start like re.match */
const HDR_PLOT_ROW = /^\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)/;
const HDR_PLOT_MEAN = /^#\[Mean(?:\s+)=(?:\s+)([0-9.]+),(?:\s+)StdDeviation(?:\s+)=(?:\s+)([0-9.]+)/;
const HDR_PLOT_MAX = /^#\[Max(?:\s+)=(?:\s+)([0-9.]+),(?:\s+)Total count(?:\s+)=(?:\s+)([0-9.]+)/;

describe('latency/hgrm: toHgrm', () => {
  it('prints the latency-notes §2.4 example byte for byte with the library footer', () => {
    assert.equal(toHgrm(exampleHistogram(), { unitRatio: 1000, javaMax: false }), EXAMPLE);
  });

  it('prints the same example with the Java #[Max footer (highest equivalent value, 12.007)', () => {
    const javaText = EXAMPLE.replace('#[Max     =       12.000,', '#[Max     =       12.007,');
    const h = exampleHistogram();
    assert.equal(toHgrm(h, { unitRatio: 1000 }), javaText);
    assert.equal(h.maxValue, 12000, 'the histogram is left as it was');
  });

  it('prints a nines histogram like the example except for its 1 h bucket count', () => {
    const h = createHistogram();
    for (const v of EXAMPLE_US) recordNs(h, v);
    const javaText = EXAMPLE.replace('#[Max     =       12.000,', '#[Max     =       12.007,')
      .replace('#[Buckets =            4,', '#[Buckets =           32,');
    assert.equal(toHgrm(h, { unitRatio: 1000 }), javaText);
  });

  it('writes 10,000 samples as rows the HdrHistogram plotter and hdr-plot accept, with their footers', () => {
    const h = createHistogram();
    for (const v of latencies(10000, 41)) recordNs(h, v);
    recordNs(h, C.HIST_HIGHEST_NS);
    const lines = toHgrm(h).split('\n');
    assert.equal(lines.pop(), '', 'ends with a newline');
    const data = lines.filter((l) => l.trim() !== '' && !l.startsWith('#') && !l.trim().startsWith('Value'));
    const plotter = data.filter((l) => l.trim().split(/\s+/).length === 4);
    assert.equal(plotter.length, data.length - 1, 'all rows but the final 100 % row have exactly 4 fields');
    assert.equal(data[data.length - 1].trim().split(/\s+/).length, 3);
    for (const row of plotter) assert.match(row, HDR_PLOT_ROW);
    assert.ok(plotter.length > 50, `${plotter.length} rows`);
    assert.equal(lines.filter((l) => HDR_PLOT_MEAN.test(l)).length, 1);
    assert.equal(lines.filter((l) => HDR_PLOT_MAX.test(l)).length, 1);
  });

  it('prints only a header and footer for an empty histogram', () => {
    const text = toHgrm(createHistogram());
    assert.match(text, /^ {7}Value {5}Percentile TotalCount 1\/\(1-Percentile\)\n\n#\[Mean/);
  });

  it('refuses a unit that would print the max at 1e7 units or more, which hdr-plot drops', () => {
    const h = createHistogram();
    recordNs(h, C.HIST_HIGHEST_NS);
    throwsCode(() => toHgrm(h, { unitRatio: 1000 }), 'NINES_ERR_INVALID_ARG', /options.unitRatio must be large enough/);
    assert.match(toHgrm(h), /3601330\.078/);
  });

  it('refuses bad options and WASM histograms, whose printer writes wrong decimals', () => {
    const h = createHistogram();
    throwsCode(() => toHgrm(h, { unitRatio: -1 }), 'NINES_ERR_INVALID_ARG', /options.unitRatio/);
    throwsCode(() => toHgrm(h, { ticksPerHalfDistance: 0 }), 'NINES_ERR_INVALID_ARG', /ticksPerHalfDistance/);
    throwsCode(() => toHgrm(h, { javaMax: 'yes' }), 'NINES_ERR_INVALID_ARG', /javaMax/);
    hdr.initWebAssemblySync();
    const wasm = hdr.build({ useWebAssembly: true });
    try {
      throwsCode(() => toHgrm(wasm), 'NINES_ERR_INVALID_ARG', /WASM/);
    } finally {
      wasm.destroy();
    }
  });
});

describe('latency/hgrm: parseHgrm', () => {
  it('reads back rows, mean, stddev, max and count of our output', () => {
    const h = createHistogram();
    for (const v of latencies(10000, 42)) recordNs(h, v);
    const parsed = parseHgrm(toHgrm(h));
    const rows = percentileRows(h, { unitRatio: 1e6 });
    assert.equal(parsed.rows.length, rows.length);
    parsed.rows.forEach((row, i) => {
      assert.ok(Math.abs(row.value - rows[i].value) <= 0.0005, `row ${i}`);
      assert.ok(Math.abs(row.percentile - rows[i].percentile) <= 1e-12);
      assert.equal(row.totalCount, rows[i].totalCount);
      if (rows[i].inverse === null) assert.equal(row.inverse, null);
      else assert.ok(Math.abs(row.inverse - rows[i].inverse) <= 0.005);
    });
    assert.equal(parsed.count, 10000);
    assert.ok(Math.abs(parsed.mean - h.mean / 1e6) <= 0.0005);
    assert.ok(Math.abs(parsed.stddev - h.stdDeviation / 1e6) <= 0.0005);
    assert.equal(parsed.max, Number((h.getValueAtPercentile(100) / 1e6).toFixed(3)));
  });

  it('reads the §2.4 example and Java HistogramLogProcessor output with its extra comment lines', () => {
    const java = '#[Overall percentile distribution between 0.000 and 10.000 seconds (relative to StartTime)]\n' +
      '#[StartTime: 1700000000.000 (seconds since epoch), Tue Nov 14 22:13:20 UTC 2023]\n' +
      EXAMPLE.replace('#[Max     =       12.000,', '#[Max     =       12.007,').replace(/\n/g, '\r\n');
    const parsed = parseHgrm(java);
    assert.equal(parsed.rows.length, 20);
    assert.deepEqual(parsed.rows[10], { value: 2.101, percentile: 0.75, totalCount: 8, inverse: 4 });
    assert.deepEqual(parsed.rows[19], { value: 12.007, percentile: 1, totalCount: 10, inverse: null });
    assert.deepEqual([parsed.mean, parsed.stddev, parsed.max, parsed.count], [2.733, 3.179, 12.007, 10]);
  });

  it('reads the CSV variant, which has no footer', () => {
    const csv = exampleHistogram().outputPercentileDistribution(5, 1000, true);
    const parsed = parseHgrm(csv);
    assert.equal(parsed.rows.length, 20);
    assert.equal(parsed.rows[19].inverse, null);
    assert.equal(parsed.rows[18].inverse, 11.43);
    assert.deepEqual([parsed.mean, parsed.max, parsed.count], [null, null, 10]);
  });

  it('names the line that does not parse', () => {
    throwsCode(() => parseHgrm(EXAMPLE.replace('       1.250 0.200000000000', '       1.250 zero')), 'NINES_ERR_INVALID_ARG', /text line 5/);
    throwsCode(() => parseHgrm('hello world'), 'NINES_ERR_INVALID_ARG', /text line 1/);
    throwsCode(() => parseHgrm('1 2'), 'NINES_ERR_INVALID_ARG');
    throwsCode(() => parseHgrm(''), 'NINES_ERR_INVALID_ARG', /percentile distribution/);
    throwsCode(() => parseHgrm(null), 'NINES_ERR_INVALID_ARG', /text must be a string/);
  });
});
