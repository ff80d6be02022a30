'use strict';

/**
 * The latency measurement core: histograms in integer ns (1 ns … 1 h, 3 digits), the per-job
 * Recorder, summaries and the MQTT latency payload, .hgrm / .hlog files and SVG percentile plots.
 * Method: docs latency-method.md; evidence: reference/latency-notes.md.
 */

const histogram = require('./histogram');
const { PagedHistogram } = require('./paged-histogram');
const { Recorder } = require('./recorder');
const snapshot = require('./snapshot');
const summary = require('./summary');
const hgrm = require('./hgrm');
const hlog = require('./hlog');
const plot = require('./plot');

module.exports = {
  createHistogram: histogram.createHistogram,
  createAccumulator: histogram.createAccumulator,
  recordNs: histogram.recordNs,
  mergeInto: histogram.mergeInto,
  encodeHistogram: histogram.encodeHistogram,
  decodeHistogram: histogram.decodeHistogram,
  RECORD_OK: histogram.RECORD_OK,
  RECORD_CLAMPED: histogram.RECORD_CLAMPED,
  RECORD_INVALID: histogram.RECORD_INVALID,
  PagedHistogram,

  Recorder,
  POLICIES: snapshot.POLICIES,
  encodeSnapshot: snapshot.encodeSnapshot,
  decodeSnapshot: snapshot.decodeSnapshot,
  mergeSnapshots: snapshot.mergeSnapshots,

  summarize: summary.summarize,
  latencyPayload: summary.latencyPayload,
  parseLatencyPayload: summary.parseLatencyPayload,

  toHgrm: hgrm.toHgrm,
  parseHgrm: hgrm.parseHgrm,
  percentileRows: hgrm.percentileRows,

  HlogWriter: hlog.HlogWriter,
  encodeInterval: hlog.encodeInterval,
  readHlog: hlog.readHlog,

  percentilePlotSvg: plot.percentilePlotSvg
};
