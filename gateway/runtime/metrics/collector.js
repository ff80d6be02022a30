'use strict';

const { NativeHistogram, SCHEMA, ZERO_THRESHOLD } = require('./native-histogram');
const { BucketLayout, ClassicHistogram } = require('./classic-buckets');
const { intervalQuantiles, QUANTILES } = require('./interval-quantiles');

/**
 * What the metrics endpoint exposes, accumulated on the gateway's main thread from what it
 * already gets: every job's interval summary (counts, and the response, service and lag
 * histograms the worker encoded once, decoded once for every face: runtime/summary-histograms.js),
 * every device's health, and the MQTT publisher's stats.
 *
 * Everything is cumulative since the gateway started, as Prometheus counters and histograms are:
 * PromQL's rate() and increase() take the differences, and sum() merges gateways. The one
 * exception is what a Prometheus summary holds by definition: its quantiles (and the max gauge
 * beside them) are over the job's last interval, as a client library's are over its sliding window;
 * its _sum and _count are cumulative, the histogram's own.
 *
 * Each latency histogram carries its native buckets (protobuf only) and classic `le` buckets (every
 * format): one family, "classic + native" as Prometheus's client libraries expose it, so a scraper
 * with native histograms on takes the native buckets and the others take the classic ones.
 *
 * Names follow Prometheus's naming guidelines: a `nines_` prefix, base units (seconds), `_total`
 * on counters, and the outcome as a label so that sum() over it is the slots of a job. The job's
 * label is `job_name`, not `job`, which Prometheus sets to the scrape job.
 *
 * @typedef {object} Sample
 * @property {Record<string, string>} labels
 * @property {number} [value] counters and gauges
 * @property {number} [count] histograms
 * @property {number} [sum]
 * @property {{schema: number, zeroThreshold: number, zeroCount: number, spans: object[], deltas: number[]}} [native]
 * @property {Array<{le: number, cumulative: number}>} [classic] finite bounds; +Inf is the count
 * @property {Array<{quantile: number, value: number}>} [quantiles] summaries
 *
 * @typedef {object} Family
 * @property {string} name without `_total` for counters
 * @property {string} help
 * @property {'counter'|'gauge'|'histogram'|'summary'} type
 * @property {string} [unit]
 * @property {Sample[]} samples
 */

const OUTCOMES = Object.freeze([['ok', 'ok'], ['error', 'errors'], ['timeout', 'timeouts'], ['skipped', 'skipped']]);
/** The write commands' outcomes (runtime/mqtt/write-commands.js stats): each command ends in one */
const WRITE_OUTCOMES = Object.freeze(['written', 'failed', 'unknown', 'invalid', 'backlog', 'expired']);
const HISTOGRAMS = Object.freeze([
  ['response', 'nines_job_response_time_seconds', 'Response time of a job\'s requests, from each request\'s intended send time (no coordinated omission).'],
  ['service', 'nines_job_service_time_seconds', 'Service time of a job\'s requests, from the actual send to the reply.'],
  ['lag', 'nines_job_dispatch_lag_seconds', 'Dispatch lag of a job\'s requests: actual send minus intended send (the scheduler\'s own lateness, and the wait for the device\'s connection).']
]);
/** The summaries of the last interval: the same three, under names of their own (a family has one type) */
const SUMMARIES = Object.freeze([
  ['response', 'nines_job_interval_response_time_seconds', 'response time'],
  ['service', 'nines_job_interval_service_time_seconds', 'service time'],
  ['lag', 'nines_job_interval_dispatch_lag_seconds', 'dispatch lag']
]);

class MetricsCollector {
  /**
   * @param {object} opts
   * @param {string} opts.gateway the gateway id (label `gateway`)
   * @param {string} opts.version
   * @param {Record<string, string>} opts.jobs job name → device name, from the config
   * @param {() => object|null} opts.publisherStats the MQTT publisher's stats now
   * @param {() => object|null} [opts.writeStats] the MQTT write commands' counters now (null: off)
   * @param {number[]} [opts.bucketsNs] the classic buckets' upper bounds, ns, ascending (the
   *   config's gateway.metrics.bucketsNs); none: the histograms carry native buckets only
   */
  constructor ({ gateway, version, jobs, publisherStats, writeStats = () => null, bucketsNs = [] }) {
    this.gateway = gateway;
    this.layout = new BucketLayout(bucketsNs);
    this.version = version;
    this.publisherStats = publisherStats;
    this.writeStats = writeStats;
    /**
     * @type {Map<string, {labels: object, counts: object, intervals: number, hist: Record<string, NativeHistogram>,
     *   classic: Record<string, ClassicHistogram>, last: Record<string, {values: number[], max: number}>}>}
     */
    this.jobs = new Map();
    this.setJobs(jobs);
    /** @type {Map<string, {state: string, seenUp: boolean, reconnects: number}>} */
    this.devices = new Map();
    this.processRegistry = null;
  }

  /**
   * The jobs exposed, after a config reload: a job kept by name (and device) keeps its counters and
   * histograms, which only grow, as Prometheus counters must; a new one starts at zero; a removed one's
   * series go.
   * @param {Record<string, string>} jobs job name → device name
   */
  setJobs (jobs) {
    const next = new Map();
    for (const [name, device] of Object.entries(jobs)) {
      const known = this.jobs.get(name);
      next.set(name, known && known.labels.device === device
        ? known
        : {
            labels: { gateway: this.gateway, job_name: name, device },
            counts: { ok: 0, errors: 0, timeouts: 0, skipped: 0 },
            intervals: 0,
            hist: { response: new NativeHistogram(), service: new NativeHistogram(), lag: new NativeHistogram() },
            classic: { response: new ClassicHistogram(this.layout), service: new ClassicHistogram(this.layout), lag: new ClassicHistogram(this.layout) },
            last: { response: intervalQuantiles(null), service: intervalQuantiles(null), lag: intervalQuantiles(null) }
          });
    }
    this.jobs = next;
  }

  /**
   * A job's interval summary (design.md payload) and its histograms, decoded (a summary whose
   * histograms do not decode never comes here, so counts and histograms never disagree).
   * @param {string} job
   * @param {object} payload
   * @param {import('../summary-histograms').DecodedHistograms} decoded read, never changed
   */
  onSummary (job, payload, decoded) {
    const j = this.jobs.get(job);
    if (!j) return;
    for (const [, field] of OUTCOMES) j.counts[field] += payload[field];
    j.intervals++;
    for (const [name, h] of Object.entries(decoded)) {
      j.hist[name].addHdr(h);
      j.classic[name].addHdr(h);
      j.last[name] = intervalQuantiles(h);
    }
  }

  /**
   * A device's health (devices/device.js): up or not, and how often it came back.
   * @param {string} device
   * @param {{state: string}} health
   */
  onHealth (device, health) {
    let d = this.devices.get(device);
    if (!d) { d = { state: health.state, seenUp: false, reconnects: 0 }; this.devices.set(device, d); }
    if (health.state === 'up' && d.state !== 'up') {
      if (d.seenUp) d.reconnects++;
      d.seenUp = true;
    }
    d.state = health.state;
  }

  /**
   * The process's own metrics (CPU, memory, event loop, GC) from prom-client, which keeps them
   * the way every Node exporter does; started on first use.
   * @returns {import('prom-client').Registry}
   */
  processMetrics () {
    if (!this.processRegistry) {
      const client = require('prom-client');
      this.processRegistry = new client.Registry();
      client.collectDefaultMetrics({ register: this.processRegistry });
    }
    return this.processRegistry;
  }

  /** @returns {Promise<Family[]>} every family, in a stable order */
  async families () {
    const g = { gateway: this.gateway };
    const out = [];
    out.push({ name: 'nines_build_info', help: 'Always 1; the nines version and the gateway id as labels.', type: 'gauge', samples: [{ labels: { ...g, version: this.version }, value: 1 }] });

    const requests = [];
    const intervals = [];
    for (const j of this.jobs.values()) {
      for (const [outcome, field] of OUTCOMES) requests.push({ labels: { ...j.labels, outcome }, value: j.counts[field] });
      intervals.push({ labels: j.labels, value: j.intervals });
    }
    out.push({ name: 'nines_job_requests', help: 'A job\'s intended requests by outcome: ok, error (an error reply or a failure to send), timeout, skipped (a missed slot under the skip policy, never sent).', type: 'counter', samples: requests });
    out.push({ name: 'nines_job_intervals', help: 'Latency summaries (intervals) of a job accumulated into these metrics.', type: 'counter', samples: intervals });
    for (const [field, name, help] of HISTOGRAMS) {
      const samples = [];
      for (const j of this.jobs.values()) {
        const h = j.hist[field];
        const { spans, deltas } = h.spans();
        samples.push({ labels: j.labels, count: h.count, sum: h.sum, classic: j.classic[field].cumulative(), native: { schema: SCHEMA, zeroThreshold: ZERO_THRESHOLD, zeroCount: h.zeroCount, spans, deltas } });
      }
      out.push({ name, help, type: 'histogram', unit: 'seconds', samples });
    }
    for (const [field, name, what] of SUMMARIES) {
      const samples = [];
      const max = [];
      for (const j of this.jobs.values()) {
        const h = j.hist[field];
        const last = j.last[field];
        samples.push({ labels: j.labels, count: h.count, sum: h.sum, quantiles: QUANTILES.map((quantile, i) => ({ quantile, value: last.values[i] })) });
        max.push({ labels: j.labels, value: last.max });
      }
      out.push({ name, help: `A job's ${what} quantiles over its last interval (NaN before the first, or for an interval without requests); _sum and _count since the gateway started.`, type: 'summary', unit: 'seconds', samples });
      out.push({ name: name.replace(/_seconds$/, '_max_seconds'), help: `A job's ${what} maximum over its last interval (NaN before the first, or for an interval without requests).`, type: 'gauge', unit: 'seconds', samples: max });
    }

    const up = [];
    const reconnects = [];
    for (const [device, d] of this.devices) {
      const labels = { ...g, device };
      up.push({ labels, value: d.state === 'up' ? 1 : 0 });
      reconnects.push({ labels, value: d.reconnects });
    }
    out.push({ name: 'nines_device_up', help: '1 while the device has a connection up, else 0 (connecting, down, closed).', type: 'gauge', samples: up });
    out.push({ name: 'nines_device_reconnects', help: 'Times the device came back up after being down.', type: 'counter', samples: reconnects });

    const s = this.publisherStats() || {};
    out.push({ name: 'nines_mqtt_connected', help: '1 while the MQTT publisher is connected to its broker.', type: 'gauge', samples: [{ labels: g, value: s.connected ? 1 : 0 }] });
    out.push({ name: 'nines_mqtt_buffered_messages', help: 'Latency summaries waiting in the MQTT publisher\'s bounded buffer.', type: 'gauge', samples: [{ labels: g, value: s.buffered || 0 }] });
    out.push({ name: 'nines_mqtt_inflight_messages', help: 'Latency summaries sent to the broker and not yet acknowledged.', type: 'gauge', samples: [{ labels: g, value: s.inflight || 0 }] });
    out.push({ name: 'nines_mqtt_dropped_messages', help: 'Latency summaries let go unacknowledged: pushed out of a full buffer, refused by the broker, or unsent at stop.', type: 'counter', samples: [{ labels: g, value: s.dropped || 0 }] });
    out.push({ name: 'nines_mqtt_reconnects', help: 'Times the MQTT publisher connected again after losing its broker.', type: 'counter', samples: [{ labels: g, value: s.reconnects || 0 }] });

    const w = this.writeStats();
    if (w) {
      out.push({ name: 'nines_write_commands', help: 'MQTT write commands by outcome: written, failed (not written or written in part, nothing unknown), unknown (a write went out and its outcome is unknown), invalid, backlog (refused: the device\'s queue was full), expired (refused: it could not start within its maximum age).', type: 'counter', samples: WRITE_OUTCOMES.map((o) => ({ labels: { ...g, outcome: o }, value: w[o] || 0 })) });
      out.push({ name: 'nines_write_commands_queued', help: 'MQTT write commands waiting for their device now.', type: 'gauge', samples: [{ labels: g, value: w.queued || 0 }] });
    }

    const processFamilies = await this.processMetrics().getMetricsAsJSON();
    const processNames = new Set(processFamilies.map((f) => f.name));
    for (const f of processFamilies) {
      // prom-client's nodejs_active_{handles,requests,resources}_total are gauges, and a gauge must
      // not end in _total (promtool check metrics refuses it, Prometheus's naming rules too); each
      // is the sum over the `type` label of the family without the suffix, which stays
      if (f.type === 'gauge' && f.name.endsWith('_total') && processNames.has(f.name.slice(0, -'_total'.length))) continue;
      out.push(fromPromClient(f));
    }
    return out;
  }
}

/**
 * A prom-client metric (getMetricsAsJSON) as a family: counters lose their `_total` (added back
 * by each exposition), classic histograms are grouped by their labels without `le`.
 * @param {{name: string, help: string, type: string, values: Array<{labels: object, value: number, metricName?: string}>}} m
 * @returns {Family}
 */
function fromPromClient (m) {
  if (m.type === 'histogram') {
    const byKey = new Map();
    for (const v of m.values) {
      const { le, ...labels } = v.labels;
      const key = JSON.stringify(labels);
      if (!byKey.has(key)) byKey.set(key, { labels, count: 0, sum: 0, classic: [] });
      const s = byKey.get(key);
      if (v.metricName === `${m.name}_bucket`) s.classic.push({ le: le === '+Inf' ? Infinity : Number(le), cumulative: v.value });
      else if (v.metricName === `${m.name}_sum`) s.sum = v.value;
      else if (v.metricName === `${m.name}_count`) s.count = v.value;
    }
    return { name: m.name, help: m.help, type: 'histogram', samples: [...byKey.values()] };
  }
  const type = m.type === 'counter' ? 'counter' : 'gauge';
  const name = type === 'counter' ? m.name.replace(/_total$/, '') : m.name;
  return { name, help: m.help, type, samples: m.values.map((v) => ({ labels: v.labels, value: v.value })) };
}

module.exports = { MetricsCollector, fromPromClient };
