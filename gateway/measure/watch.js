'use strict';

const { NinesError } = require('../base/errors');

/**
 * Fleet view over latency summaries: for each job, the latest interval of every gateway that runs it,
 * merged by ADDING their histograms (never averaging percentiles), with `seq` gaps counted per
 * gateway/job so a lost summary is visible. Used by `nines watch`; the Node-RED merge node applies
 * the same rule over a sliding window.
 *
 * Bounded, whatever arrives on the topic (issue 12, item 8: 50,000 distinct job names took a watch
 * to 1 GB, a 20 MB payload was accepted, a forged `seq: 9e15` set the gap counter to 9e15):
 * - a payload longer than `maxPayloadBytes` is rejected before it is decoded;
 * - a series (gateway/job) quiet for `forgetMs` is forgotten, and past `maxSeries` the least
 *   recently updated one is evicted to make room (both counted in `evicted`);
 * - a `seq` that jumps ahead by more than `maxSeqJump` is counted as a resync, not as that many lost
 *   summaries, and so is a `seq` that goes back (a gateway restarted).
 */

/** Defaults; `maxPayloadBytes` is the payload decoder's own cap (gateway/latency/summary.js) */
const DEFAULTS = Object.freeze({
  staleMs: 60000,
  forgetMs: 600000,
  maxSeries: 5000,
  // 10,000 intervals: 2.8 h of lost summaries at 1 s, 28 h at 10 s; more is a restart or a forgery
  maxSeqJump: 10000
});

class FleetView {
  /**
   * @param {object} [opts]
   * @param {number} [opts.staleMs=60000] a gateway whose last summary is older than this drops out of the merge
   * @param {number} [opts.forgetMs=600000] a series quiet this long is forgotten (its seq too), ≥ staleMs
   * @param {number} [opts.maxSeries=5000] gateway/job series kept at most
   * @param {number} [opts.maxSeqJump=10000] a larger forward jump of seq is a resync, not a gap
   * @param {number} [opts.maxPayloadBytes] longer payloads are rejected undecoded (default: the decoder's cap)
   */
  constructor (opts = {}) {
    const { MAX_PAYLOAD_CHARS } = require('../latency/summary');
    const o = { ...DEFAULTS, maxPayloadBytes: MAX_PAYLOAD_CHARS, ...opts };
    for (const name of ['staleMs', 'forgetMs', 'maxSeries', 'maxSeqJump', 'maxPayloadBytes']) {
      if (!(Number.isSafeInteger(o[name]) && o[name] >= 1)) {
        throw new NinesError('NINES_ERR_INVALID_ARG', `FleetView ${name} must be a whole number ≥ 1; got ${JSON.stringify(o[name])}`, { field: name, value: o[name] });
      }
    }
    this.staleMs = o.staleMs;
    this.forgetMs = Math.max(o.forgetMs, o.staleMs);
    this.maxSeries = o.maxSeries;
    this.maxSeqJump = o.maxSeqJump;
    this.maxPayloadBytes = o.maxPayloadBytes;
    /** gateway/job → {job, gateway, payload, histogram, at, seq}, least recently updated first */
    this.series = new Map();
    /** job → number of summaries accepted for it, so a caller can tell which rows are new */
    this.updates = new Map();
    this.gaps = 0;
    this.resyncs = 0;
    this.rejected = 0;
    this.evicted = 0;
  }

  /**
   * Takes one message (an MQTT payload: Buffer, string or object).
   * @param {Buffer|string|object} message
   * @param {number} [nowMs]
   * @returns {{ok: boolean, error?: Error}}
   */
  add (message, nowMs = Date.now()) {
    const { parseLatencyPayload } = require('../latency');
    let p;
    try {
      const size = Buffer.isBuffer(message) ? message.length : (typeof message === 'string' ? Buffer.byteLength(message) : 0);
      if (size > this.maxPayloadBytes) {
        throw new NinesError('NINES_ERR_INVALID_ARG', `payload of ${size} bytes is over the ${this.maxPayloadBytes}-byte cap`, { field: 'payload', size });
      }
      p = parseLatencyPayload(message);
    } catch (error) {
      this.rejected++;
      return { ok: false, error };
    }
    const key = `${p.gateway}/${p.job}`;
    const prev = this.series.get(key);
    if (prev) {
      const jump = p.seq - prev.seq;
      if (jump > this.maxSeqJump || jump < 0) this.resyncs++;
      else if (jump > 1) this.gaps += jump - 1;
      this.series.delete(key); // re-inserted last: the map stays in update order
    } else {
      this.forget(nowMs);
      while (this.series.size >= this.maxSeries) this._evict(this.series.keys().next().value);
    }
    this.series.set(key, { job: p.job, gateway: p.gateway, payload: p, histogram: p.histogram, at: nowMs, seq: p.seq });
    this.updates.set(p.job, (this.updates.get(p.job) || 0) + 1);
    return { ok: true };
  }

  /**
   * Forgets the series quiet for forgetMs (the oldest come first, so this stops at the first fresh one).
   * @param {number} [nowMs]
   */
  forget (nowMs = Date.now()) {
    for (const [key, e] of this.series) {
      if (nowMs - e.at <= this.forgetMs) break;
      this._evict(key);
    }
  }

  _evict (key) {
    const e = this.series.get(key);
    this.series.delete(key);
    this.evicted++;
    // the job's update counter goes when its last series goes
    for (const other of this.series.values()) if (other.job === e.job) return;
    this.updates.delete(e.job);
  }

  /**
   * One row per job: the merged latest intervals of all gateways running it.
   * @param {number} [nowMs]
   * @returns {object[]} payload-shaped rows ({job, gateway: 'N gateways', count, ok, …, p50…max, rate,
   *   lag: {p99}, updates}); lag.p99 is the highest of the gateways' dispatch-lag p99 (lag travels as
   *   a summary, without a histogram, so it cannot be merged; the worst gateway is the honest bound)
   */
  rows (nowMs = Date.now()) {
    const latency = require('../latency');
    this.forget(nowMs);
    const byJob = new Map();
    for (const e of this.series.values()) {
      if (nowMs - e.at > this.staleMs) continue;
      if (!byJob.has(e.job)) byJob.set(e.job, []);
      byJob.get(e.job).push(e);
    }
    const out = [];
    for (const [job, fresh] of [...byJob].sort((a, b) => a[0].localeCompare(b[0]))) {
      const acc = latency.createAccumulator();
      const row = { job, gateway: fresh.length === 1 ? fresh[0].gateway : `${fresh.length} gateways`, count: 0, ok: 0, errors: 0, timeouts: 0, rate: 0 };
      let lagP99 = null;
      for (const e of fresh) {
        latency.mergeInto(acc, e.histogram);
        for (const k of ['count', 'ok', 'errors', 'timeouts']) row[k] += e.payload[k] || 0;
        row.rate += e.payload.rate || 0;
        const l = e.payload.lag && e.payload.lag.p99;
        if (typeof l === 'number' && (lagP99 === null || l > lagP99)) lagP99 = l;
      }
      Object.assign(row, latency.summarize(acc), { count: row.count, lag: { p99: lagP99 }, updates: this.updates.get(job) || 0 });
      out.push(row);
    }
    return out;
  }
}

module.exports = { FleetView, DEFAULTS };
