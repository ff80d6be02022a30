'use strict';

const { EventEmitter } = require('node:events');
const { createClient } = require('../drivers');
const { parseTarget } = require('../drivers/target');
const { startSchedule } = require('../scheduler');
const { createOpSource } = require('./op-source');
const { ValueGate, replyValues } = require('../values/gate');
const { toNinesError } = require('../base/errors');

/**
 * One polling job: an operation against a device at a rate on N connections, its latency recorded
 * per interval, its values filtered. The same code runs inline on the caller's thread and inside a
 * worker thread (worker/job-worker.js): it knows nothing of threads.
 *
 * Events:
 * - 'snapshot' (snapshot, meta): every interval; `snapshot` as Recorder.snapshot() returns it;
 * - 'values' ({values, ts, polls}): values that passed the value gate;
 * - 'job-error' (NinesError): failures, coalesced: the first of a code at once, then at most one per
 *   interval with a count (a dead device at 1 kHz must not flood anyone);
 * - 'state' ({connection, state}): a connection's state changed;
 * - 'end' (): a bounded job (count or duration) finished and flushed its last interval.
 */
class Job extends EventEmitter {
  /**
   * @param {object} spec normalized job: {name, target, command|generator|read|write, ratePerSec, connections,
   *   policy, count, durationMs, values: {mode, deadband, n, minIntervalMs}, device: {timeoutMs, connectTimeoutMs, queueMax}}
   * @param {object} [opts]
   * @param {number} [opts.intervalMs=10000] summary interval
   * @param {Function} [opts.createClient] driver factory (tests)
   */
  constructor (spec, { intervalMs = 10000, createClient: factory = createClient } = {}) {
    super();
    this.spec = { connections: 1, ratePerSec: Infinity, policy: 'capped', values: { mode: 'off' }, device: {}, ...spec };
    this.target = parseTarget(this.spec.target);
    this.source = createOpSource(this.spec, this.target);
    this.intervalMs = intervalMs;
    this.factory = factory;
    this.clients = [];
    this.schedule = null;
    this.started = null;
    this.recorder = null;
    this.timer = null;
    this.running = false;
    this.errorCounts = new Map();
    const v = this.spec.values || { mode: 'off' };
    this.values = new ValueGate({ ...v, emit: (values, info) => this.emit('values', { values, ...info }) });
  }

  /**
   * Opens the connections and starts polling once they are up (or have failed: a device that is down
   * at start is polled anyway, and its failures are counted). Measuring from before a connection
   * exists would charge the handshake of every connection to the first requests.
   * Each job runs at a fixed phase within its period, from a hash of its name, so that hundreds of
   * jobs started together do not all send at the same instants.
   */
  start () {
    if (this.running) return;
    const { Recorder } = require('../latency');
    this.running = true;
    this.recorder = new Recorder({ policy: this.spec.ratePerSec === Infinity ? 'closed' : this.spec.policy });
    const d = this.spec.device || {};
    const connects = [];
    for (let i = 0; i < this.spec.connections; i++) {
      const c = this.factory(this.target, { timeoutMs: d.timeoutMs, connectTimeoutMs: d.connectTimeoutMs, queueMax: d.queueMax || 4 });
      const connection = i;
      c.on('connect', () => this.emit('state', { connection, state: 'connected' }));
      c.on('reconnecting', (info) => this.emit('state', { connection, state: 'reconnecting', ...info }));
      c.on('close', () => this.emit('state', { connection, state: c.state }));
      c.on('error', () => {}); // failures are reported per request below
      connects.push(c.connect().catch((err) => this.reportError(err)));
      this.clients.push(c);
    }
    // intervals end at the job's own phase too: a thread running a thousand jobs would otherwise
    // encode all their histograms at the same instant and stall its polling for that long
    const phase = phaseOf(this.spec.name);
    this.timer = setTimeout(() => {
      this.timer = setInterval(() => this.flushInterval(), this.intervalMs);
      this.flushInterval();
    }, Math.max(1, Math.round(phase * this.intervalMs)));
    this.started = Promise.all(connects).then(() => {
      if (!this.running) return;
      this.schedule = startSchedule({
        clients: this.clients,
        nextOp: this.source.nextOp,
        ratePerSec: this.spec.ratePerSec,
        count: this.spec.count,
        durationMs: this.spec.durationMs,
        policy: this.spec.policy,
        timeoutMs: d.timeoutMs,
        recorder: this.recorder,
        startDelayMs: this.spec.ratePerSec === Infinity ? 0 : phaseOf(this.spec.name) * 1000 / this.spec.ratePerSec,
        onReply: (reply) => this.values.offer(replyValues(reply)),
        onError: (err) => this.reportError(err)
      });
      this.schedule.done.then(() => {
        if (!this.running) return;
        this.finish().then(() => this.emit('end'));
      });
    });
  }

  /** Emits the current interval's snapshot and starts a new interval. */
  flushInterval () {
    if (!this.recorder) return;
    const snap = this.recorder.snapshot();
    this.emit('snapshot', snap, this.meta());
    this.flushErrors();
  }

  /** @returns {object} what a summary says about the job besides the numbers */
  meta () {
    return {
      job: this.spec.name,
      target: this.target.url,
      op: this.source.label,
      policy: this.spec.ratePerSec === Infinity ? 'closed' : this.spec.policy,
      ratePerSec: this.spec.ratePerSec === Infinity ? null : this.spec.ratePerSec,
      connections: this.spec.connections
    };
  }

  /** Starts a new interval, discarding what the current one has recorded. */
  reset () {
    if (this.recorder) this.recorder.snapshot();
    this.errorCounts.clear();
  }

  reportError (err) {
    const e = toNinesError(err);
    const seen = this.errorCounts.get(e.code);
    if (seen === undefined) {
      this.errorCounts.set(e.code, { count: 0, last: e });
      this.emit('job-error', e);
    } else {
      seen.count++;
      seen.last = e;
    }
  }

  flushErrors () {
    for (const [code, s] of this.errorCounts) {
      if (s.count > 0) {
        const e = s.last;
        e.details = { ...(e.details || {}), repeated: s.count };
        this.emit('job-error', e);
        s.count = 0;
      } else {
        this.errorCounts.delete(code);
      }
    }
  }

  async finish () {
    this.running = false;
    if (this.timer) { clearTimeout(this.timer); clearInterval(this.timer); this.timer = null; }
    if (this.started) await this.started;
    if (this.schedule) { this.schedule.stop(); await this.schedule.done; }
    this.values.close();
    this.flushInterval();
    await Promise.allSettled(this.clients.map((c) => c.close()));
    this.clients = [];
  }

  /** Stops polling, lets in-flight requests complete, emits the last interval, closes the connections. */
  async stop () {
    if (!this.running) return;
    await this.finish();
  }
}

/**
 * A fixed phase in [0, 1) from a name (FNV-1a), the same on every start of the same job.
 * @param {string} name
 * @returns {number}
 */
function phaseOf (name) {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h / 0x100000000;
}

module.exports = { Job, phaseOf };
