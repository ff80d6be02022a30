'use strict';

/**
 * Fleet view over latency summaries: for each job, the latest interval of every gateway that runs it,
 * merged by ADDING their histograms (never averaging percentiles), with `seq` gaps counted per
 * gateway/job so a lost summary is visible. Used by `nines watch`; the Node-RED merge node applies
 * the same rule over a sliding window.
 */
class FleetView {
  /** @param {{staleMs?: number}} [opts] a gateway whose last summary is older than staleMs drops out of the merge */
  constructor ({ staleMs = 60000 } = {}) {
    this.staleMs = staleMs;
    this.latest = new Map(); // job → Map(gateway → {payload, histogram, at})
    this.lastSeq = new Map(); // gateway/job → seq
    this.gaps = 0;
    this.rejected = 0;
  }

  /**
   * Takes one message (an MQTT payload: Buffer, string or object).
   * @param {Buffer|string|object} message
   * @param {number} [nowMs]
   * @returns {{ok: boolean, error?: Error}}
   */
  add (message, nowMs = Date.now()) {
    const { parseLatencyPayload } = require('../latency');
    let parsed;
    try {
      const obj = Buffer.isBuffer(message) ? JSON.parse(message.toString('utf8')) : (typeof message === 'string' ? JSON.parse(message) : message);
      parsed = parseLatencyPayload(obj);
    } catch (error) {
      this.rejected++;
      return { ok: false, error };
    }
    const p = parsed;
    const histogram = parsed.histogram;
    const key = `${p.gateway}/${p.job}`;
    const prev = this.lastSeq.get(key);
    if (prev !== undefined && p.seq > prev + 1) this.gaps += p.seq - prev - 1;
    this.lastSeq.set(key, p.seq);
    if (!this.latest.has(p.job)) this.latest.set(p.job, new Map());
    this.latest.get(p.job).set(p.gateway, { payload: p, histogram, at: nowMs });
    return { ok: true };
  }

  /**
   * One row per job: the merged latest intervals of all gateways running it.
   * @param {number} [nowMs]
   * @returns {object[]} payload-shaped rows ({job, gateway: 'N gateways', count, ok, …, p50…max, rate})
   */
  rows (nowMs = Date.now()) {
    const latency = require('../latency');
    const out = [];
    for (const [job, byGateway] of [...this.latest].sort((a, b) => a[0].localeCompare(b[0]))) {
      const fresh = [...byGateway.values()].filter((e) => nowMs - e.at <= this.staleMs);
      if (fresh.length === 0) continue;
      const acc = latency.createAccumulator();
      const row = { job, gateway: fresh.length === 1 ? fresh[0].payload.gateway : `${fresh.length} gateways`, count: 0, ok: 0, errors: 0, timeouts: 0, rate: 0 };
      for (const e of fresh) {
        latency.mergeInto(acc, e.histogram);
        for (const k of ['count', 'ok', 'errors', 'timeouts']) row[k] += e.payload[k] || 0;
        row.rate += e.payload.rate || 0;
      }
      Object.assign(row, latency.summarize(acc), { count: row.count });
      out.push(row);
    }
    return out;
  }
}

module.exports = { FleetView };
