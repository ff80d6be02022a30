'use strict';

const { percentilePlotSvg } = require('../../latency');
const { SlidingWindow } = require('./window');

/**
 * What the status page shows, kept on the gateway's main thread: per job its latest summary and a
 * sliding window of its response-time histograms (window.js), per device its health. Built from
 * the gateway's events only; the page reads it through snapshot() and plotSvg().
 */
class StatusModel {
  /**
   * @param {object} opts
   * @param {string} opts.gateway
   * @param {string} opts.version
   * @param {number} opts.intervalMs
   * @param {number} opts.windowIntervals
   * @param {Array<{name: string, device: string, target: string}>} opts.jobs
   * @param {() => object|null} opts.publisherStats
   * @param {() => object|null} [opts.sparkplugStats] the Sparkplug edge node's (edge-node.js stats), or null
   */
  constructor ({ gateway, version, intervalMs, windowIntervals, jobs, publisherStats, sparkplugStats = () => null }) {
    this.gateway = gateway;
    this.version = version;
    this.intervalMs = intervalMs;
    this.windowIntervals = windowIntervals;
    this.publisherStats = publisherStats;
    this.sparkplugStats = sparkplugStats;
    this.started = new Date().toISOString();
    /** @type {Map<string, {name: string, device: string, target: string, last: object|null, window: SlidingWindow}>} */
    this.jobs = new Map();
    this.setJobs(jobs);
    /** @type {Map<string, object>} */
    this.devices = new Map();
  }

  /**
   * The jobs to show, after a config reload: a job kept by name keeps its window, a new one starts
   * empty, a removed one leaves the page.
   * @param {Array<{name: string, device: string, target: string}>} jobs
   */
  setJobs (jobs) {
    const next = new Map();
    for (const j of jobs) {
      const known = this.jobs.get(j.name);
      next.set(j.name, known ? { ...known, device: j.device, target: j.target } : { ...j, last: null, window: new SlidingWindow(this.windowIntervals) });
    }
    this.jobs = next;
  }

  /**
   * @param {string} job
   * @param {object} payload the design.md latency payload
   * @param {import('../summary-histograms').DecodedHistograms} decoded its histograms (runtime/summary-histograms.js);
   *   the window keeps the response histogram and only reads it
   */
  onSummary (job, payload, decoded) {
    const j = this.jobs.get(job);
    if (!j) return;
    j.window.push(decoded.response, payload);
    j.last = payload;
  }

  /** @param {string} device @param {object} health devices/device.js health */
  onHealth (device, health) {
    this.devices.set(device, health);
  }

  /** @returns {object} the page's data: plain JSON */
  snapshot () {
    const jobs = [];
    for (const j of this.jobs.values()) {
      const p = j.last;
      const health = this.devices.get(j.device);
      jobs.push({
        name: j.name,
        device: j.device,
        deviceState: health ? health.state : 'unknown',
        target: j.target,
        seq: p ? p.seq : null,
        end: p ? p.end : null,
        rate: p ? p.rate : null,
        fellBehind: p ? Boolean(p.fellBehind) : false,
        last: p ? { count: p.count, ok: p.ok, errors: p.errors, timeouts: p.timeouts, skipped: p.skipped, p50: p.p50, p99: p.p99, max: p.max } : null,
        window: { intervals: j.window.intervals, ...j.window.totals, ...j.window.stats() }
      });
    }
    const devices = [];
    for (const [name, h] of this.devices) {
      devices.push({
        name,
        state: h.state,
        since: new Date(h.since).toISOString(),
        lastError: h.lastError || null,
        connections: h.connections || null,
        // requests per connection as set and as used, and a pipelining fallback's warning
        inflight: h.inflight || null,
        warning: h.warning || null,
        // FC8 counters per unit and their growth since the read before (devices/diagnostics.js)
        diagnostics: h.diagnostics || null,
        diagnosticsText: diagnosticsText(h.diagnostics)
      });
    }
    const s = this.publisherStats() || {};
    return {
      gateway: this.gateway,
      version: this.version,
      started: this.started,
      now: new Date().toISOString(),
      intervalMs: this.intervalMs,
      windowIntervals: this.windowIntervals,
      mqtt: { connected: Boolean(s.connected), buffered: s.buffered || 0, dropped: s.dropped || 0, reconnects: s.reconnects || 0 },
      ...sparkplugSnapshot(this.sparkplugStats()),
      jobs,
      devices
    };
  }

  /**
   * The job's percentile curve (the .hgrm shape) over its window, as SVG (latency/plot.js).
   * @param {string} job
   * @returns {string|null} null for an unknown job
   */
  plotSvg (job) {
    const j = this.jobs.get(job);
    if (!j) return null;
    const title = `${j.name}: response time, last ${j.window.intervals} interval${j.window.intervals === 1 ? '' : 's'}`;
    if (j.window.acc.totalCount === 0) {
      return percentilePlotSvg([{ label: 'no samples yet', rows: [{ value: 0, inverse: 1 }] }], { title, width: 480, height: 280 });
    }
    return percentilePlotSvg([{ label: `${j.name} (${j.window.acc.totalCount} samples)`, histogram: j.window.acc }], { title, width: 480, height: 280 });
  }
}

/** The counters the page's table shows of each unit (the JSON has them all), with their labels */
const SHOWN_COUNTERS = Object.freeze([['busMessages', 'msgs'], ['busCommunicationErrors', 'CRC err'], ['busExceptions', 'exc'], ['serverNoResponses', 'no resp']]);

/**
 * One line per unit of a device's FC8 counters, for the page's table: "unit 2: msgs 1200 (+40) · CRC
 * err 0 (+0) · …"; "no FC8" for a unit that lacks it; "" when the device reads none.
 * @param {{units: object[]}|undefined} d devices/diagnostics.js health
 * @returns {string}
 */
function diagnosticsText (d) {
  if (!d) return '';
  return d.units.map((u) => {
    const who = `unit ${u.unitId}: `;
    if (u.unsupported) return who + 'no FC8';
    if (u.counters === null) return who + (u.lastError ? u.lastError.code : 'not read yet');
    return who + SHOWN_COUNTERS.map(([k, label]) => {
      const delta = u.deltas === null ? '' : u.deltas[k] === null ? ' (went back)' : ` (+${u.deltas[k]})`;
      return `${label} ${u.counters[k]}${delta}`;
    }).join(' · ');
  }).join('\n');
}

/**
 * The Sparkplug part of the page: whether the node is born, its primary host, and the DATA held
 * for it (how many, the oldest's age, how many were dropped).
 * @param {object|null} sp edge-node.js stats
 * @returns {{sparkplug?: object}}
 */
function sparkplugSnapshot (sp) {
  if (!sp) return {};
  return { sparkplug: { online: sp.online, bdSeq: sp.bdSeq, primaryHost: sp.primaryHost, held: sp.held } };
}

module.exports = { StatusModel };
