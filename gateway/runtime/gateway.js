'use strict';

const { EventEmitter } = require('node:events');
const { WorkerPool } = require('../workers/pool');
const { NinesError } = require('../base/errors');

/**
 * The gateway: config → jobs → workers → publisher.
 *
 * Jobs run in the worker pool (or inline); every interval each job's snapshot becomes a latency
 * summary (design.md payload) published at QoS 1 with a `seq` that this thread numbers, so it stays
 * contiguous across worker restarts, and across gateway restarts when `mqtt.spool` keeps the stream
 * on disk. Values and errors are published rate-limited. The broker may come and go: polling never
 * stops, summaries and values wait in the publisher's bounded buffers (and spool).
 *
 * Devices live in the pool with their connections (maxConnections each, shared by their jobs); every
 * change of a device's health is published in the retained status.
 *
 * The metrics endpoint and the status page (integrations.js), when configured, listen to the
 * gateway's events; for the metrics the workers encode the service and lag histograms too. So
 * does the Sparkplug B edge node (sparkplug/, mqtt.sparkplug), in an MQTT session of its own.
 *
 * Events: 'summary' (job, payload, hists: {service, lag} encoded when the metrics are on, else null),
 * 'values' (job, {values, ts, polls}), 'job-error' (job|null, NinesError),
 * 'worker-exit' (info), 'broker' ({url, embedded, host, loopback, login, passwordSource, prefix}),
 * 'broker-refused' (refusal: what the embedded broker refused, rate-limited), 'health' (device, health),
 * 'listening' ({what, url, login}: the metrics endpoint, the status page or the Sparkplug edge node is up),
 * 'reload' (the jobs kept, changed, added, removed), 'end' (job).
 */
class Gateway extends EventEmitter {
  /**
   * @param {import('./config/validate').Config} config a validated config (config.loadConfig / validateConfig)
   * @param {object} [opts]
   * @param {'worker'|'inline'} [opts.mode] overrides config.gateway.mode
   * @param {string} [opts.version]
   */
  constructor (config, opts = {}) {
    super();
    this.config = config;
    this.mode = opts.mode || config.gateway.mode;
    this.version = opts.version || require('../../package.json').version;
    this.latest = new Map(); // job → last summary, for tables and status
    this.broker = null;
    this.publisher = null;
    this.pool = null;
    this.startedAt = null;
    this.ended = new Set();
    this.hlogs = new Map(); // job → {stream, writer, file}
    this.hlogsEnded = new Set(); // jobs whose log a reload ended: a new log names its stream's start
    this.health = new Map(); // device → health
    /** @type {Promise<unknown>} reloads one at a time */
    this.reloading = Promise.resolve();
    this.integrations = null;
    /** @type {{edge: object, session: object, stop: () => Promise<void>}|null} the Sparkplug B edge node (mqtt.sparkplug) */
    this.sparkplug = null;
    /** @type {{stats: object, stop: () => void}|null} writes by tag over MQTT (mqtt.writes) */
    this.writeCommands = null;
  }

  /** Starts the broker (when none is configured), the publisher, the devices and the jobs. */
  async start () {
    const { Publisher } = require('./mqtt/publisher');
    const m = this.config.mqtt;
    // the specs the config check built (config/validate.js): run as they are
    const devices = Object.values(this.config.devices);
    const jobs = this.config.jobs;
    let url = m.url;
    let auth;
    if (!url) {
      const { startEmbeddedBroker } = require('./mqtt/broker');
      const e = m.embedded || {};
      // only this gateway's publisher (logging in with the credential the broker generates) may
      // publish under the prefix or use its client id; clients log in with e.auth when it is set
      this.broker = await startEmbeddedBroker({
        host: e.host,
        port: e.port,
        maxPacketBytes: e.maxPacketBytes,
        maxClients: e.maxClients,
        ...(e.auth ? { username: e.auth.username, password: e.auth.password } : {}),
        gateway: {
          clientId: m.clientId,
          prefix: m.prefix,
          ...(m.sparkplug ? { sparkplug: { clientId: m.sparkplug.clientId, group: m.sparkplug.group, node: m.sparkplug.node } } : {}),
          ...(m.writes ? { writes: { gateway: this.config.gateway.id } } : {})
        },
        onRefused: (refusal) => this.emit('broker-refused', refusal)
      });
      url = this.broker.url;
      auth = this.broker.gatewayAuth;
      this.emit('broker', {
        url,
        embedded: true,
        host: this.broker.host,
        loopback: this.broker.loopback,
        login: this.broker.login,
        passwordSource: e.auth ? e.auth.passwordSource : null,
        prefix: m.prefix
      });
    } else {
      this.emit('broker', { url, embedded: false });
    }
    this.startedAt = new Date().toISOString();
    const { publisherOptions, publisherJobs } = require('./mqtt/publisher-options');
    this.publisher = new Publisher(publisherOptions(this.config, { url, version: this.version, auth }));
    this.publisher.on('error', (err) => this.emit('job-error', null, err));
    this.publisher.setJobs(publisherJobs(this.config));
    await this.publisher.start();

    if (this.config.gateway.metrics || this.config.gateway.http) {
      this.integrations = await require('./integrations').startIntegrations(this);
    }
    if (m.sparkplug) {
      // its own MQTT session (its will is the NDEATH), on the same broker and login
      this.sparkplug = await require('./sparkplug').startSparkplug(this, { url, auth });
    }

    this.pool = new WorkerPool({
      mode: this.mode,
      workers: this.config.gateway.workers,
      gateway: this.config.gateway.id,
      hlog: Boolean(this.config.gateway.hlog),
      allHistograms: Boolean(this.config.gateway.metrics)
    });
    this.pool.on('summary', (job, payload, hlog, meta, hists) => this.onSummary(job, payload, hlog, hists));
    this.pool.on('values', (job, v) => {
      // a tag job's values come with the quality of each tag and the names of those that changed;
      // ts is when they were read: delivered late (after an outage, from the spool), they still say so
      const payload = { job, gateway: this.config.gateway.id, ts: v.ts, polls: v.polls, values: v.values };
      if (v.quality !== undefined) { payload.quality = v.quality; payload.changed = v.changed; }
      this.publisher.publishValue(job, payload);
      this.emit('values', job, v);
    });
    this.pool.on('job-error', (job, err) => {
      if (job) this.publisher.publishError(job, err);
      this.emit('job-error', job, err);
    });
    this.pool.on('health', (device, health) => {
      this.health.set(device, health);
      this.publisher.setDeviceHealth(device, health);
      this.emit('health', device, health);
    });
    this.pool.on('end', (job) => { this.ended.add(job); this.emit('end', job); });
    this.pool.on('worker-exit', (info) => {
      const err = new NinesError('NINES_ERR_WORKER', `worker ${info.worker} exited with code ${info.code}; restarting its jobs (${info.jobs.join(', ')}) in ${info.restartInMs} ms`, info);
      for (const job of info.jobs) this.publisher.publishError(job, err);
      this.emit('worker-exit', info);
      this.emit('job-error', null, err);
    });
    for (const d of devices) this.pool.addDevice(d);
    // with a disk spool, each job's stream goes on where the last run left it (seq, covered time)
    const resume = this.publisher.resumePoints();
    for (const j of jobs) this.pool.startJob(j, resume.get(j.name));
    // writes by tag over MQTT, when asked for (off by default): runtime/mqtt/write-commands.js
    if (m.writes) this.writeCommands = require('./mqtt/write-commands').startWriteCommands(this, { prefix: m.prefix, gateway: this.config.gateway.id, ...m.writes });
  }

  /** A summary from the pool: numbered there, computed and encoded where the histogram lives. */
  onSummary (job, payload, hlog, hists = null) {
    this.latest.set(job, payload);
    if (this.config.gateway.hlog && hlog) this.writeHlog(job, hlog, payload);
    this.publisher.publishLatency(job, payload);
    this.emit('summary', job, payload, hists);
  }

  /**
   * Appends a job's interval to its HdrHistogram interval log (`<dir>/<job>-<start>.hlog`, format 1.3,
   * tags response, service and lag, values in ns), readable by HistogramLogProcessor and
   * HistogramLogAnalyzer. A log that cannot be written is reported once and dropped. A job added by a
   * reload under the name of one removed earlier is a new stream, in a log of its own from its start.
   */
  writeHlog (job, intervals, meta) {
    let h = this.hlogs.get(job);
    if (h === undefined) {
      const fs = require('node:fs');
      const path = require('node:path');
      const { HlogWriter } = require('../latency');
      const dir = this.config.gateway.hlog;
      const sinceMs = this.hlogsEnded.has(job) ? meta.start : Date.parse(this.startedAt);
      const file = path.join(dir, `${job}-${new Date(sinceMs).toISOString().replace(/[:.]/g, '-')}.hlog`);
      try {
        fs.mkdirSync(dir, { recursive: true });
        // opened here, not by the stream's own later open: the log exists once its first interval
        // is reported, and a name taken or a folder unwritable fails now, in this catch
        const stream = fs.createWriteStream(null, { fd: fs.openSync(file, 'wx') });
        h = { file, stream, writer: null };
        stream.on('error', (err) => {
          this.emit('job-error', job, new NinesError('NINES_ERR_IO', `cannot write the interval log ${file}: ${err.message}`, { file, cause: err.code }));
          h.writer = null;
        });
        h.writer = new HlogWriter({
          comment: `${this.version} gateway=${this.config.gateway.id} job=${job} target=${meta.target}`,
          startTimeMs: sinceMs,
          write: (text) => stream.write(text)
        });
      } catch (err) {
        // a file system failure (permissions, a full disk, a file where the folder should be), not a bad argument
        this.emit('job-error', job, new NinesError('NINES_ERR_IO', `cannot write the interval log ${file}: ${err.message}`, { file, cause: err.code }));
        h = { file, stream: null, writer: null };
      }
      this.hlogs.set(job, h);
    }
    if (h.writer) for (const interval of intervals) h.writer.writeEncodedInterval(interval);
  }

  /**
   * Writes named values to a device's tags (devices.<name>.tags; on a line, a unit's:
   * devices.<name>.units.<unit>.tags): `{ setpoint: 71.5, pump_on: true }`. Every value is encoded
   * by its tag and checked before anything is sent (tags/write.js); then the writes go in the order
   * given, through the device's connections, stopping at the first that fails.
   * @param {string} device
   * @param {Record<string, unknown>} values
   * @param {string} [unit] the unit, on a line of units (required there)
   * @param {{notAfter?: number, rawText?: (tag: string) => string|undefined}} [opts] notAfter: the
   *   latest start of each request (epoch ms as performance.timeOrigin + performance.now() count),
   *   past which it fails unsent (NINES_ERR_WRITE_EXPIRED); rawText: how a value was sent, for a refusal
   * @returns {Promise<{ok: boolean, results: Record<string, object>}>} each tag's outcome
   * @throws {NinesError} NINES_ERR_INVALID_ARG (unknown device, unit or tag, writes not allowed, a
   *   read-only tag), NINES_ERR_INVALID_VALUE (a value its tag cannot hold); nothing is written then
   */
  async writeTags (device, values, unit, opts = {}) {
    const writes = this.checkTagWrites(device, values, unit, opts);
    const { runTagWrites } = require('../tags/write');
    const reqOpts = { user: 'tag-writes', ...(opts.notAfter !== undefined ? { notAfter: opts.notAfter } : {}) };
    return runTagWrites(writes, (op) => this.pool.request(device, op, reqOpts));
  }

  /**
   * The checks and encoding of writeTags, sending nothing.
   * @param {string} device
   * @param {Record<string, unknown>} values
   * @param {string} [unit]
   * @param {{rawText?: (tag: string) => string|undefined}} [opts]
   * @returns {import('../tags/write').TagWrite[]}
   * @throws {NinesError} as writeTags
   */
  checkTagWrites (device, values, unit, opts = {}) {
    const spec = Object.hasOwn(this.config.devices, device) ? this.config.devices[device] : undefined;
    if (spec === undefined) throw new NinesError('NINES_ERR_INVALID_ARG', `no device ${JSON.stringify(device)} in this gateway`, { field: 'device', value: device });
    const d = this.config.deviceOptions[device];
    // as for write jobs and in Node-RED: nothing moves a real actuator unless its device says it may
    if (!d.allowWrites) throw new NinesError('NINES_ERR_INVALID_ARG', `device "${device}" does not allow writes; set devices.${device}.allowWrites: true`, { field: 'allowWrites', device });
    if (!this.pool) throw new NinesError('NINES_ERR_CLOSED', 'the gateway is not running', {});
    const u = require('../devices/line').resolveUnit(unit, spec);
    const tags = u === null ? (d.tags ? d.tags.all : []) : (d.units[u.name] ? d.units[u.name].all : []);
    const quirks = u === null ? spec : u;
    const unitId = u === null ? undefined : u.unitId;
    const { encodeTagWrites } = require('../tags/write');
    return encodeTagWrites(tags, values, { protocol: spec.target.protocol, address: spec.target.address, unitId, unsupportedFunctionCodes: quirks.unsupportedFunctionCodes, rawText: opts.rawText });
  }

  /**
   * Applies a new config without a restart (runtime/reload.js): unchanged jobs keep running with no
   * gap; changed jobs go on with their new settings in the same stream (`seq` goes on, the next
   * summary starts where the last one ended); new jobs start new streams (`seq` 0, `first: true`);
   * removed ones flush their last summary and stop. A config that
   * changes what applies only at a restart (mqtt, gateway.id, workers, mode, hlog) is refused whole.
   * Reloads run one at a time.
   * @param {import('./config/validate').Config} next a validated config
   * @returns {Promise<{kept: string[], changed: string[], added: string[], removed: string[]}>}
   * @throws {NinesError} NINES_ERR_CONFIG (refused: nothing changed), or a builder's coded error
   */
  reload (next) {
    const run = this.reloading.then(() => this._reload(next));
    this.reloading = run.catch(() => {});
    return run;
  }

  async _reload (next) {
    if (!this.pool) throw new NinesError('NINES_ERR_CLOSED', 'the gateway is not running', {});
    const { planReload } = require('./reload');
    // both configs carry their built specs (config/validate.js): compared as they are
    const specs = (c) => ({ config: c, devices: Object.values(c.devices), jobs: c.jobs });
    const plan = planReload(specs(this.config), specs(next));
    this.config = next;
    // stopped first (each publishes its last interval), then devices swapped, then the new jobs
    await Promise.all(plan.jobsStopped.map((name) => this.pool.stopJob(name)));
    // a changed job goes on as the same stream: its next summary starts where the old instance's
    // last one ended (the slots between counted as skipped) and `seq` goes on; a removed job's
    // stream ends, so one added later under its name is a new stream (seq 0, `first: true`), as
    // does that of a bounded job that had finished (no slot of it was due since)
    const resume = new Map(plan.jobsStopped.map((name) => {
      const point = this.pool.endStream(name);
      return [name, this.ended.has(name) ? undefined : point];
    }));
    for (const name of plan.jobs.removed) { this.latest.delete(name); this.ended.delete(name); this.closeHlog(name); }
    for (const name of plan.devicesRemoved) {
      this.pool.removeDevice(name);
      if (!plan.devicesAdded.some((d) => d.name === name)) { this.health.delete(name); this.publisher.setDeviceHealth(name, null); }
    }
    for (const d of plan.devicesAdded) this.pool.addDevice(d);
    for (const j of plan.jobsStarted) { this.ended.delete(j.name); this.pool.startJob(j, resume.get(j.name)); }
    const { publisherJobs } = require('./mqtt/publisher-options');
    this.publisher.setJobs(publisherJobs(next));
    if (this.integrations) this.integrations.setJobs(next);
    this.emit('reload', plan.jobs);
    return plan.jobs;
  }

  /** Ends a removed job's interval log. @param {string} job */
  closeHlog (job) {
    const h = this.hlogs.get(job);
    if (h === undefined) return;
    this.hlogs.delete(job);
    this.hlogsEnded.add(job);
    if (h.stream) h.stream.end();
  }

  /** @returns {boolean} true when every job was bounded (count or duration) and has ended */
  get allEnded () {
    return this.config.jobs.length > 0 && this.ended.size === this.config.jobs.length;
  }

  /**
   * Stops the jobs (their last intervals are published), the metrics endpoint and the status page,
   * then the publisher (`offline` status, buffered summaries flushed within its stop timeout), then
   * the embedded broker.
   */
  async stop () {
    // write commands still waiting are answered (not written) while the broker is still there
    if (this.writeCommands) this.writeCommands.stop();
    if (this.pool) await this.pool.stop();
    if (this.integrations) await this.integrations.close();
    // its NDEATH before the broker goes (an embedded one stops below)
    if (this.sparkplug) await this.sparkplug.stop();
    await Promise.all([...this.hlogs.values()].filter((h) => h.stream).map((h) => new Promise((resolve) => h.stream.end(resolve))));
    if (this.publisher) await this.publisher.stop();
    if (this.broker) await this.broker.close();
  }
}

module.exports = { Gateway };
