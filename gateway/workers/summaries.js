'use strict';

/**
 * A job's interval summary, made on the pool's thread from the copy of its histograms that the
 * job's thread posted (PagedHistogram#toTransfer: its non-zero counts, or its touched pages).
 *
 * Why here and not where the histograms live. Summarizing and encoding an interval took 0.1 ms at
 * p50 and 1.5 ms at p99 per piece on the job's thread (`bench/stalls.js`, 428 pieces a minute at
 * 2,000/s), and every piece delayed whichever send or reply fell due meanwhile: one of the two
 * causes of a fixed-rate tail that were nines' own (issue 20). Copying the counts costs the job's
 * thread a few µs; the percentiles and the compression now run beside MQTT and HTTP, which no
 * deadline waits on. They still go in pieces, one per turn (steps.js), so a thousand jobs' summaries
 * do not hold the pool's thread for long either.
 */

const { PagedHistogram } = require('../latency/paged-histogram');
const { summaryPayload } = require('../jobs/payload');
const { toNinesError } = require('../base/errors');
const { loopDelayP99Ms } = require('./loop-delay');

const HISTS = ['response', 'service', 'lag'];
/** Histograms kept for the next summaries of this thread, pages and all: filling new ones allocated
 * their pages anew each time, the largest cost of a summary here with 1,000 jobs (profiled) */
const FREE_MAX = 48;
const free = [];

/**
 * What a job's thread posts for an interval: the snapshot's counts and times, and its histograms
 * as transfers; the snapshot itself can be recycled at once.
 * @param {import('../latency/snapshot').Snapshot} snap
 * @returns {object}
 */
function snapshotTransfer (snap) {
  const out = { ...snap };
  for (const name of HISTS) out[name] = snap[name].toTransfer();
  return out;
}

/**
 * The buffers of a snapshotTransfer(), for postMessage's transfer list.
 * @param {object} t
 * @returns {ArrayBuffer[]}
 */
function transferList (t) {
  const out = [];
  for (const name of HISTS) {
    const h = t[name];
    if (h.pairs !== null) out.push(h.pairs.buffer);
    else out.push(h.pages.buffer, h.pool.buffer);
  }
  return out;
}

/**
 * Summarizes a posted interval in pieces: each histogram's statistics, the encodings, the payload,
 * then `emit` with what the pool's 'summary' event carries. A piece that throws ends that summary
 * with `fail` (the rest of the queue goes on).
 * @param {import('./steps').Steps} steps the pool thread's FIFO of pieces
 * @param {object} snap snapshotTransfer()'s result, this thread's now: its histogram fields become
 *   the histograms they describe
 * @param {object} meta the job's meta for summaryPayload (target, sendingSinceMs, loopDelayP99Ms…)
 * @param {{gateway: string, hlog: boolean, allHistograms: boolean, loop?: Float32Array}} opts
 *   loop: the job's thread's loop-delay samples over its interval, µs (loop-delay.js)
 * @param {(s: {payload: object, hlog: object[]|null, hists: {service: string, lag: string}|null}) => void} emit
 * @param {(err: Error) => void} fail
 */
function summarizeInPieces (steps, snap, meta, opts, emit, fail) {
  const { summarize, encodeHistogram, encodeInterval } = require('../latency');
  const both = opts.allHistograms || opts.hlog;
  const w = { summaries: {}, encoded: {}, payload: null, failed: false };
  const piece = (fn) => steps.add(() => {
    if (w.failed) return;
    try {
      fn();
    } catch (err) {
      w.failed = true;
      fail(toNinesError(err, 'NINES_ERR_BAD_HISTOGRAM'));
    }
  });
  piece(() => { for (const name of HISTS) snap[name] = PagedHistogram.fromTransfer(snap[name], free.pop()); });
  if (opts.loop) piece(() => { meta.loopDelayP99Ms = loopDelayP99Ms(opts.loop); });
  piece(() => { w.summaries.response = summarize(snap.response); });
  piece(() => { w.summaries.service = summarize(snap.service); });
  piece(() => { w.summaries.lag = summarize(snap.lag); });
  piece(() => { w.encoded.response = encodeHistogram(snap.response); });
  if (both) {
    piece(() => { w.encoded.service = encodeHistogram(snap.service); });
    piece(() => { w.encoded.lag = encodeHistogram(snap.lag); });
  }
  piece(() => {
    const payload = summaryPayload({ ...snap, summaries: w.summaries, encoded: w.encoded }, 0, meta, { gateway: opts.gateway, job: meta.job });
    const hists = both ? { service: w.encoded.service, lag: w.encoded.lag } : null;
    const hlog = opts.hlog
      ? [
          encodeInterval('response', snap.response, snap.startMs, snap.endMs, payload.hist),
          encodeInterval('service', snap.service, snap.startMs, snap.endMs, hists.service),
          encodeInterval('lag', snap.lag, snap.startMs, snap.endMs, hists.lag)
        ]
      : null;
    emit({ payload, hlog, hists: opts.allHistograms ? hists : null });
  });
  // the histograms are the next summaries' once this one is out (or failed): nothing kept them
  steps.add(() => {
    for (const name of HISTS) {
      const h = snap[name];
      if (h instanceof PagedHistogram && !h.wide && free.length < FREE_MAX) { h.reset(); free.push(h); }
      snap[name] = null;
    }
  });
}

module.exports = { snapshotTransfer, transferList, summarizeInPieces };
