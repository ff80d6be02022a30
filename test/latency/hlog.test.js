'use strict';

const assert = require('node:assert/strict');
const hdr = require('hdr-histogram-js');
const { HlogWriter, readHlog } = require('../../gateway/latency/hlog');
const { createHistogram, recordNs, encodeHistogram } = require('../../gateway/latency/histogram');
const { Recorder } = require('../../gateway/latency/recorder');
const { summarize } = require('../../gateway/latency/summary');
const { latencies, throwsCode } = require('./support/helpers');

const START_MS = 1700000000000;

/** @returns {{writer: HlogWriter, text: () => string}} */
function collect (options = {}) {
  const chunks = [];
  const writer = new HlogWriter({ comment: '0.1.0 gateway=gw1 job=plc7', startTimeMs: START_MS, write: (s) => chunks.push(s), ...options });
  return { writer, text: () => chunks.join('') };
}

/** Three 10 s snapshots from one recorder. */
function snapshots () {
  const clock = { t: START_MS, nowMs: () => clock.t };
  const r = new Recorder({ clock });
  const out = [];
  for (let i = 0; i < 3; i++) {
    for (const v of latencies(1000, 50 + i)) r.recordOk(v, Math.floor(v / 2), 10000 + i);
    clock.t += 10000;
    out.push(r.snapshot());
  }
  return out;
}

describe('latency/hlog: HlogWriter', () => {
  it('writes the 1.3 header with a nines unit comment and no blank line after StartTime', () => {
    const { text } = collect();
    assert.equal(text(), [
      '#[nines 0.1.0 gateway=gw1 job=plc7 unit=ns]',
      '#[Histogram log format version 1.3]',
      '#[StartTime: 1700000000.000 (seconds since epoch), 2023-11-14T22:13:20.000Z]',
      '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"',
      ''
    ].join('\n'));
  });

  it('writes one tagged line per histogram with start relative to StartTime and the max in ms', () => {
    const { writer, text } = collect();
    const [, second] = snapshots();
    writer.writeSnapshot(second);
    const lines = text().split('\n').slice(4, -1);
    assert.equal(lines.length, 3);
    const cells = lines.map((l) => l.split(','));
    assert.deepEqual(cells.map((c) => c[0]), ['Tag=response', 'Tag=service', 'Tag=lag']);
    for (const c of cells) assert.deepEqual(c.slice(1, 3), ['10.000', '10.000']);
    assert.equal(cells[0][3], (second.response.getValueAtPercentile(100) / 1e6).toFixed(3));
    assert.equal(cells[0][4], encodeHistogram(second.response));
  });

  it('refuses tags with commas, spaces or line breaks', () => {
    const { writer } = collect();
    const h = createHistogram();
    for (const tag of ['a,b', 'dev 7', 'x\ny', 'tab\there', '', 5, undefined]) {
      throwsCode(() => writer.writeInterval({ tag, histogram: h, startMs: START_MS, endMs: START_MS }), 'NINES_ERR_INVALID_ARG', /tag must be/);
    }
  });

  it('refuses intervals before StartTime or ending before they start, and foreign histograms', () => {
    const { writer } = collect();
    const h = createHistogram();
    throwsCode(() => writer.writeInterval({ tag: 't', histogram: h, startMs: START_MS - 1, endMs: START_MS }), 'NINES_ERR_INVALID_ARG', /interval.startMs/);
    throwsCode(() => writer.writeInterval({ tag: 't', histogram: h, startMs: START_MS + 5, endMs: START_MS }), 'NINES_ERR_INVALID_ARG', /interval.endMs/);
    throwsCode(() => writer.writeInterval({ tag: 't', histogram: hdr.build({ numberOfSignificantValueDigits: 2 }), startMs: START_MS, endMs: START_MS }), 'NINES_ERR_INVALID_ARG');
  });

  it('validates its options', () => {
    throwsCode(() => new HlogWriter({ startTimeMs: START_MS }), 'NINES_ERR_INVALID_ARG', /options.write/);
    throwsCode(() => new HlogWriter({ startTimeMs: NaN, write () {} }), 'NINES_ERR_INVALID_ARG', /options.startTimeMs/);
    throwsCode(() => new HlogWriter({ startTimeMs: 0, comment: 'a\nb', write () {} }), 'NINES_ERR_INVALID_ARG', /options.comment/);
    throwsCode(() => new HlogWriter(), 'NINES_ERR_INVALID_ARG');
  });
});

describe('latency/hlog: readHlog', () => {
  it('round-trips a log of snapshots: tags, times, max and histograms', () => {
    const { writer, text } = collect();
    const snaps = snapshots();
    for (const s of snaps) writer.writeSnapshot(s);
    const entries = readHlog(text());
    assert.equal(entries.length, 9);
    entries.forEach((e, i) => {
      const snap = snaps[Math.floor(i / 3)];
      const tag = ['response', 'service', 'lag'][i % 3];
      assert.equal(e.tag, tag);
      assert.equal(e.startSec, (snap.startMs - START_MS) / 1000);
      assert.equal(e.lengthSec, 10);
      assert.equal(e.startMs, snap.startMs);
      assert.equal(e.max, Number((snap[tag].getValueAtPercentile(100) / 1e6).toFixed(3)));
      assert.deepEqual(summarize(e.histogram), summarize(snap[tag]));
      assert.equal(e.histogram.tag, tag);
      assert.equal(e.histogram.endTimeStampMsec, snap.endMs);
    });
  });

  it('writes logs the library reader understands too', () => {
    const { writer, text } = collect();
    const [snap] = snapshots();
    writer.writeSnapshot(snap);
    const reader = new hdr.HistogramLogReader(text());
    const first = reader.nextIntervalHistogram();
    assert.equal(first.tag, 'response');
    assert.equal(first.totalCount, 1000);
    assert.equal(first.startTimeStampMsec, START_MS);
    assert.deepEqual(hdr.listTags(text()), ['response', 'service', 'lag']);
  });

  it('reads a log written by the library writer, stray blank line and untagged lines included', () => {
    const chunks = [];
    const libWriter = new hdr.HistogramLogWriter((s) => chunks.push(s));
    libWriter.outputLogFormatVersion();
    libWriter.outputStartTime(START_MS);
    libWriter.outputLegend();
    const h = createHistogram();
    for (const v of latencies(500, 60)) recordNs(h, v);
    libWriter.outputIntervalHistogram(h, 0, 10, 1e6);
    h.tag = 'svc';
    libWriter.outputIntervalHistogram(h, 10, 20, 1e6);
    const text = chunks.join('');
    assert.match(text, /\]\n\n"StartTimestamp"/, 'the library writes a blank line');
    const entries = readHlog(text);
    assert.deepEqual(entries.map((e) => e.tag), [null, 'svc']);
    assert.deepEqual(entries.map((e) => e.startMs), [START_MS, START_MS + 10000]);
    assert.equal(entries[1].histogram.totalCount, 500);
  });

  it('anchors timestamps at BaseTime when present, and takes large ones as absolute otherwise', () => {
    const b64 = encodeHistogram(createHistogram());
    const withBase = `#[StartTime: 1700000000.000 (seconds since epoch)]\n#[BaseTime: 1600000000.000 (seconds since epoch)]\n1.500,1.000,0.000,${b64}\n`;
    assert.equal(readHlog(withBase)[0].startMs, 1600000001500);
    const absolute = `#[StartTime: 1700000000.000 (seconds since epoch)]\n1700000002.000 1.000 0.000 ${b64}\n`;
    assert.equal(readHlog(absolute)[0].startMs, 1700000002000);
  });

  it('names the line of a malformed interval or a bad histogram', () => {
    const { writer, text } = collect();
    writer.writeSnapshot(snapshots()[0]);
    const lines = text().split('\n');
    const short = [...lines];
    short[5] = 'Tag=service,0.000,10.000';
    throwsCode(() => readHlog(short.join('\n')), 'NINES_ERR_INVALID_ARG', /\.hlog line 6/);
    const nan = [...lines];
    nan[5] = nan[5].replace(',0.000,', ',soon,');
    throwsCode(() => readHlog(nan.join('\n')), 'NINES_ERR_INVALID_ARG', /\.hlog line 6/);
    const corrupt = [...lines];
    corrupt[6] = corrupt[6].replace(/,HISTF.*$/, ',HISTFAAAAA==');
    const err = throwsCode(() => readHlog(corrupt.join('\n')), 'NINES_ERR_BAD_HISTOGRAM', /^\.hlog line 7: encoded histogram rejected/);
    assert.equal(err.details.line, 7);
    throwsCode(() => readHlog('#[StartTime: soon]\n'), 'NINES_ERR_INVALID_ARG', /\.hlog line 1/);
    throwsCode(() => readHlog(undefined), 'NINES_ERR_INVALID_ARG');
  });
});
