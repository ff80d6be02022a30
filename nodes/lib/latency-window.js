'use strict';

/**
 * The sliding window of nines-latency-merge: the interval histograms received per key, merged by
 * adding them (never by averaging percentiles), percentiles read from the sum.
 *
 * Time is the gateways' own: an interval stays while its `end` is within the window of the newest
 * `end` received. So a replayed log merges the same as a live feed, and Node-RED's clock does not
 * have to agree with the gateways'.
 *
 * Duplicates (MQTT QoS 1 may deliver a message twice) are recognised by gateway, job and seq and
 * merged once; a gap in seq is counted as `missed`. Every bound is counted when it bites.
 */

/** Keys the merge can group by: payload field(s) → key text */
const KEY_BY = Object.freeze({
  job: (p) => p.job,
  gateway: (p) => p.gateway,
  target: (p) => p.target,
  'gateway/job': (p) => `${p.gateway}/${p.job}`,
  all: () => 'all'
});

/** Percentile fields a summary carries (ms) */
const PERCENTILES = Object.freeze(['p50', 'p90', 'p99', 'p99_9', 'p99_99', 'max']);

/** Intervals kept per key at most; beyond, the oldest go and are counted in `dropped` */
const MAX_INTERVALS_PER_KEY = 10000;
/** Keys (and gateway/job streams) kept at most: a flood of distinct job names must not grow the
 * window without bound; past it the oldest key (the stream heard from least recently) goes, counted */
const MAX_KEYS = 5000;
/** A forward jump of seq larger than this is a resync (a restart, or a forged seq), not that many
 * lost summaries: 10,000 intervals are 2.8 h at 1 s, the same bound as `nines watch` */
const MAX_SEQ_JUMP = 10000;

/**
 * @param {number|string} t epoch ms or an ISO date
 * @returns {number} epoch ms, NaN when unreadable
 */
function toMs (t) {
  if (typeof t === 'number') return t;
  if (typeof t === 'string') return Date.parse(t);
  return NaN;
}

class LatencyWindow {
  /**
   * @param {object} opts
   * @param {string} [opts.keyBy='job'] one of KEY_BY
   * @param {number} [opts.windowMs=60000]
   * @param {{createAccumulator: Function, mergeInto: Function, summarize: Function}} opts.latency
   *   gateway/latency (injected so the window is testable alone)
   */
  constructor ({ keyBy = 'job', windowMs = 60000, latency }) {
    if (!KEY_BY[keyBy]) throw new TypeError(`keyBy must be one of ${Object.keys(KEY_BY).join(', ')}`);
    this.keyBy = keyBy;
    this.windowMs = windowMs;
    this.latency = latency;
    this.reset();
  }

  /** Forgets everything. */
  reset () {
    /** @type {Map<string, {entries: object[], seen: Set<string>, missed: number, duplicates: number, dropped: number}>} */
    this.keys = new Map();
    /** last seq per gateway/job stream */
    this.lastSeq = new Map();
    this.newestEndMs = -Infinity;
    this.forgottenKeys = 0;
    this.forgottenStreams = 0;
  }

  /**
   * Adds one validated latency payload and its decoded histogram.
   * @param {object} p the payload (gateway, job, target, seq, start, end, count, ok, errors, timeouts, skipped)
   * @param {object} histogram its decoded response-time histogram (ns)
   * @returns {{key: string, duplicate: boolean}}
   */
  add (p, histogram) {
    const key = String(KEY_BY[this.keyBy](p));
    let k = this.keys.get(key);
    if (!k) {
      k = { entries: [], seen: new Set(), missed: 0, duplicates: 0, dropped: 0, resyncs: 0 };
      this.keys.set(key, k);
      if (this.keys.size > MAX_KEYS) this.forgetOldest(this.keys, 'forgottenKeys');
    }
    const id = `${p.gateway}\u0000${p.job}\u0000${p.seq}`;
    if (k.seen.has(id)) {
      k.duplicates++;
      return { key, duplicate: true };
    }
    const stream = `${p.gateway}\u0000${p.job}`;
    const last = this.lastSeq.get(stream);
    if (last === undefined || p.seq > last) {
      const jump = last === undefined ? 0 : p.seq - last - 1;
      if (jump > MAX_SEQ_JUMP) k.resyncs++;
      else if (jump > 0) k.missed += jump;
      // re-inserted, so the Map's order is least recently heard first
      this.lastSeq.delete(stream);
      this.lastSeq.set(stream, p.seq);
      if (this.lastSeq.size > MAX_KEYS) this.forgetOldest(this.lastSeq, 'forgottenStreams');
    } else if (p.seq <= 1) {
      // seq starting again from the beginning: the gateway restarted
      this.lastSeq.set(stream, p.seq);
    } else if (k.missed > 0) {
      // a late interval, counted as missed when its successor came first
      k.missed--;
    }

    const endMs = toMs(p.end);
    const startMs = toMs(p.start);
    k.entries.push({
      id,
      gateway: p.gateway,
      job: p.job,
      startMs: Number.isFinite(startMs) ? startMs : endMs,
      endMs,
      count: p.count || 0,
      ok: p.ok || 0,
      errors: p.errors || 0,
      timeouts: p.timeouts || 0,
      skipped: p.skipped || 0,
      histogram
    });
    k.seen.add(id);
    if (k.entries.length > MAX_INTERVALS_PER_KEY) {
      k.seen.delete(k.entries.shift().id);
      k.dropped++;
    }
    if (endMs > this.newestEndMs) this.newestEndMs = endMs;
    this.evict();
    return { key, duplicate: false };
  }

  /** Forgets the first (least recently added) entry of a bounded map, and counts it. */
  forgetOldest (map, counter) {
    const first = map.keys().next().value;
    map.delete(first);
    this[counter]++;
  }

  /** Drops the intervals that ended before the window; keys left empty go too. */
  evict () {
    const oldest = this.newestEndMs - this.windowMs;
    for (const [key, k] of this.keys) {
      if (k.entries.every((e) => e.endMs >= oldest)) continue;
      k.entries = k.entries.filter((e) => {
        if (e.endMs >= oldest) return true;
        k.seen.delete(e.id);
        return false;
      });
      if (k.entries.length === 0) this.keys.delete(key);
    }
  }

  /**
   * The merged summary of one key over the window.
   * @param {string} key
   * @returns {object|null} null when the key has nothing in the window
   */
  summary (key) {
    const k = this.keys.get(key);
    if (!k || k.entries.length === 0) return null;
    const { createAccumulator, mergeInto, summarize } = this.latency;
    const acc = createAccumulator();
    const gateways = new Set();
    const jobs = new Set();
    const totals = { count: 0, ok: 0, errors: 0, timeouts: 0, skipped: 0 };
    let startMs = Infinity;
    let endMs = -Infinity;
    for (const e of k.entries) {
      mergeInto(acc, e.histogram);
      gateways.add(e.gateway);
      jobs.add(e.job);
      for (const f of Object.keys(totals)) totals[f] += e[f];
      if (e.startMs < startMs) startMs = e.startMs;
      if (e.endMs > endMs) endMs = e.endMs;
    }
    const s = summarize(acc, { unitNs: 1e6 });
    const out = {
      key,
      keyBy: this.keyBy,
      window: { seconds: this.windowMs / 1000, start: startMs, end: endMs, intervals: k.entries.length },
      gateways: [...gateways].sort(),
      jobs: [...jobs].sort(),
      ...totals,
      min: s.min,
      mean: s.mean
    };
    for (const p of PERCENTILES) out[p] = s[p];
    out.unit = 'ms';
    out.missed = k.missed;
    out.duplicates = k.duplicates;
    if (k.dropped) out.dropped = k.dropped;
    if (k.resyncs) out.resyncs = k.resyncs;
    return out;
  }
}

/**
 * One msg per percentile for a chart (FlowFuse Dashboard ui-chart: series by topic).
 * @param {object} summary from LatencyWindow#summary
 * @param {string[]} percentiles e.g. ['p50', 'p99', 'max']
 * @returns {object[]} msgs `{topic: 'key p99', payload: ms, timestamp}`
 */
function chartSeries (summary, percentiles) {
  return percentiles.map((p) => ({ topic: `${summary.key} ${p}`, payload: summary[p], timestamp: summary.window.end }));
}

module.exports = { LatencyWindow, chartSeries, KEY_BY, PERCENTILES, MAX_INTERVALS_PER_KEY, MAX_KEYS, MAX_SEQ_JUMP, toMs };
