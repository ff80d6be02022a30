'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { percentilePlotSvg } = require('../../gateway/latency/plot');
const { createHistogram, recordNs } = require('../../gateway/latency/histogram');
const { parseHgrm } = require('../../gateway/latency/hgrm');
const { latencies, throwsCode } = require('./support/helpers');

const TAG = /^<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<>]*")*)\s*(\/?)>$/;
const BAD_TEXT = /[<>]|&(?!(?:amp|lt|gt|quot|apos);)/;

/**
 * A tiny well-formedness check: one root, every tag well-formed and balanced, attributes quoted,
 * no stray markup characters or entities in text or attribute values.
 * @param {string} svg
 * @returns {Record<string, number>} element counts by name
 */
function checkXml (svg) {
  const body = svg.replace(/^<\?xml version="1\.0" encoding="UTF-8"\?>\n/, '');
  const counts = {};
  const stack = [];
  let roots = 0;
  let last = 0;
  for (const m of body.matchAll(/<[^<>]*>/g)) {
    const text = body.slice(last, m.index);
    assert.doesNotMatch(text, BAD_TEXT, `text before ${m[0]}`);
    if (stack.length === 0) assert.equal(text.trim(), '', 'nothing outside the root');
    last = m.index + m[0].length;
    const tag = TAG.exec(m[0]);
    assert.ok(tag, `malformed tag ${m[0]}`);
    for (const value of tag[3].matchAll(/="([^"]*)"/g)) assert.doesNotMatch(value[1], BAD_TEXT);
    const [, closing, name, , selfClosing] = tag;
    if (closing) {
      assert.equal(stack.pop(), name, `</${name}> closes the open element`);
      continue;
    }
    counts[name] = (counts[name] || 0) + 1;
    if (stack.length === 0) roots++;
    if (!selfClosing) stack.push(name);
  }
  assert.equal(body.slice(last).trim(), '');
  assert.deepEqual(stack, [], 'every element is closed');
  assert.equal(roots, 1);
  return counts;
}

/** @param {number} seed @param {number} median ns @returns {import('hdr-histogram-js').Histogram} */
function histogram (seed, median) {
  const h = createHistogram();
  for (const v of latencies(10000, seed, median)) recordNs(h, v);
  return h;
}

describe('latency/plot: percentilePlotSvg', () => {
  it('draws well-formed SVG with one polyline per series and a legend entry each', () => {
    const svg = percentilePlotSvg([
      { label: 'direct', histogram: histogram(70, 2e6) },
      { label: 'worker', histogram: histogram(71, 3e6) },
      { label: 'empty', histogram: createHistogram() }
    ], { title: 'ED-588 @01' });
    const counts = checkXml(svg);
    assert.equal(counts.svg, 1);
    assert.equal(counts.polyline, 3);
    assert.match(svg, /<title>ED-588 @01<\/title>/);
    for (const label of ['direct', 'worker', 'empty']) assert.match(svg, new RegExp(`>${label}</text>`));
  });

  it('labels the x axis in nines as far as the data reaches', () => {
    const svg = percentilePlotSvg([{ label: 'a', histogram: histogram(72, 2e6) }]);
    const labels = [...svg.matchAll(/>([\d.]+%)</g)].map((m) => m[1]);
    assert.deepEqual(labels.slice(0, 5), ['0%', '90%', '99%', '99.9%', '99.99%']);
  });

  it('escapes labels and titles and replaces characters XML forbids', () => {
    const label = 'a <b> & "c" \'d\' \u0001';
    const svg = percentilePlotSvg([{ label, histogram: histogram(73, 2e6) }], { title: '</svg><script>' });
    checkXml(svg);
    assert.ok(svg.includes('a &lt;b&gt; &amp; &quot;c&quot; &apos;d&apos; \uFFFD'));
    assert.ok(!svg.includes('<script>'));
  });

  it('switches the y axis to log scale when the values span more than two decades', () => {
    const narrow = createHistogram();
    for (let v = 1e6; v <= 5e6; v += 1000) recordNs(narrow, v);
    const linear = percentilePlotSvg([{ label: 'a', histogram: narrow }]);
    assert.doesNotMatch(linear, /log scale/);
    assert.match(linear, />0<\/text>/, 'a linear axis starts at 0');
    const slow = createHistogram();
    recordNs(slow, 5e9);
    const fast = createHistogram();
    recordNs(fast, 1e6);
    const log = percentilePlotSvg([{ label: 'fast', histogram: fast }, { label: 'slow', histogram: slow }], { unit: 's' });
    assert.match(log, /Latency \(s\), log scale/);
    checkXml(log);
  });

  it('plots rows read from .hgrm files, skipping the final 100 % row', () => {
    const text = fs.readFileSync(path.join(__dirname, '../fixtures/latency/notes-2.4-example.hgrm.txt'), 'utf8');
    const { rows } = parseHgrm(text);
    const svg = percentilePlotSvg([{ label: 'notes §2.4', rows }], { unit: 'ms', width: 640, height: 400 });
    checkXml(svg);
    const points = /<polyline [^>]*points="([^"]*)"/.exec(svg)[1].split(' ');
    assert.equal(points.length, rows.length - 1);
    assert.match(svg, /width="640" height="400"/);
  });

  it('refuses bad series and options with the field named', () => {
    const h = histogram(75, 2e6);
    throwsCode(() => percentilePlotSvg([]), 'NINES_ERR_INVALID_ARG', /series must be an array of 1 to 64/);
    throwsCode(() => percentilePlotSvg([{ label: 'a' }]), 'NINES_ERR_INVALID_ARG', /series\[0\] must be an object with a histogram/);
    throwsCode(() => percentilePlotSvg([{ label: 1, histogram: h }]), 'NINES_ERR_INVALID_ARG', /series\[0\].label/);
    throwsCode(() => percentilePlotSvg([{ label: 'a', histogram: {} }]), 'NINES_ERR_INVALID_ARG', /series\[0\].histogram/);
    throwsCode(() => percentilePlotSvg([{ label: 'a', rows: [{ value: -1, inverse: 2 }] }]), 'NINES_ERR_INVALID_ARG', /series\[0\].rows\[0\]/);
    throwsCode(() => percentilePlotSvg([{ label: 'a', histogram: h }], { unit: 'min' }), 'NINES_ERR_INVALID_ARG', /options.unit/);
    throwsCode(() => percentilePlotSvg([{ label: 'a', histogram: h }], { width: 50 }), 'NINES_ERR_INVALID_ARG', /options.width/);
    throwsCode(() => percentilePlotSvg([{ label: 'a', histogram: h }], { title: 5 }), 'NINES_ERR_INVALID_ARG', /options.title/);
  });
});
