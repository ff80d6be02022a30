'use strict';

const { EventEmitter } = require('node:events');
const { startSchedule } = require('../scheduler');
const { createOpSource } = require('./op-source');
const { ValueGate, replyValues } = require('../values/gate');
const { toNinesError } = require('../base/errors');
const { WindowReporter } = require('../base/window-reporter');
const { MAX_QUEUE: MAX_USER_QUEUE } = require('../devices/spec');

/**
 * One polling job: an operation against a device at a rate, its latency recorded per interval, its
 * values decoded and gated. The job opens no connection: it is a user of a Device, whose shared
 * connections serve all its users in turn (devices/device.js). The same code runs inline on the
 * caller's thread and in a worker thread (workers/host.js): it knows nothing of threads.
 *
 * Events:
 * - 'snapshot' (snapshot, meta): every interval; `snapshot` as Recorder.snapshot() returns it;
 * - 'values' ({values, ts, polls}): values that passed the value gate (decoded first when the spec says how);
 * - 'job-error' (NinesError): failures, coalesced: the first of a code at once, then at most one per
 *   interval with a count (a dead device at 1 kHz must not flood anyone);
 * - 'end' (): a bounded job (count or duration) finished and flushed its last interval.
 */
class Job extends EventEmitter {
  /**
   * @param {import('./spec').JobSpec} spec built by jobs/spec.js (trusted as it is)
   * @param {object} opts
   * @param {{user: Function, open: Function}} opts.device the Device the job polls (devices/device.js)
   * @param {number} [opts.resumeFromMs] the end of the job's last summary when it is restarted after
   *   its worker died: the first interval covers the gap, and the slots nobody served are counted
   */
  constructor (spec, { device, resumeFromMs }) {
    super();
    this.spec = spec;
    this.device = device;
    this.source = spec.kind === 'tags' ? { nextOp: () => null, label: spec.op } : createOpSource({ [spec.kind]: spec.operation }, spec.target);
    this.user = null;
    this.schedule = null;
    this.started = null;
    this.recorder = null;
    this.timer = null;
    this.running = false;
    /**
     * Failures per code: the first at once, the rest of the interval counted into one report at its
     * end (flushErrors), with when they happened
     */
    this.errorReports = new WindowReporter({
      merge: (held, next) => ({ err: next.err, firstAt: held.firstAt, lastAt: next.lastAt }),
      emit: (_code, r, held) => this.emit('job-error', held === 0 ? r.err : repeatedReport(r, held))
    });
    /** @type {import('../tags/reader').TagReader|null} a tag job's reader, made at start() */
    this.reader = null;
    if (spec.kind === 'tags') {
      const { tagComparer } = require('../tags/values');
      const cmp = tagComparer(spec.tags, spec.values.deadband);
      let last;
      // a tag job's values carry their read time and quality, and name the tags that changed
      this.values = new ValueGate({
        ...spec.values,
        compare: cmp.compare,
        emit: (r, info) => {
          const changed = cmp.changedNames(last, r);
          last = r;
          this.emit('values', { values: r.values, quality: r.quality, ts: r.ts, changed, polls: info.polls });
        }
      });
    } else {
      this.values = new ValueGate({ ...spec.values, emit: (values, info) => this.emit('values', { values, ...info }) });
    }
    this.decode = spec.decode ? makeDecoder(spec.decode) : null;
    this.resumeFromMs = resumeFromMs;
  }

  /**
   * Starts polling once the device's first connection attempts have settled (connected or failed: a
   * device that is down at start is polled anyway, and its failures are counted). Measuring from
   * before a connection exists would charge the handshake to the first requests.
   * Each job runs at a fixed phase within its period, from a hash of its name, so that hundreds of
   * jobs started together do not all send at the same instants.
   */
  start () {
    if (this.running) return;
    const { Recorder } = require('../latency');
    const s = this.spec;
    this.running = true;
    this.recorder = new Recorder({ policy: s.policy });
    if (this.resumeFromMs !== undefined) this.recorder.coverFrom(this.resumeFromMs);
    // at most one request per lane is waiting, so a queue of `connections` is never full; a poll of
    // tags has all its reads waiting at once, at most one per tag after every split (tags/reader.js)
    const perLane = s.kind === 'tags' ? s.tags.length : 1;
    this.user = this.device.user(s.name, { queueMax: Math.min(MAX_USER_QUEUE, s.connections * perLane) });
    const lanes = s.kind === 'tags' ? this.tagLanes() : Array.from({ length: s.connections }, () => this.user);
    // intervals end at the job's own phase too: a thread running a thousand jobs would otherwise
    // encode all their histograms at the same instant and stall its polling for that long
    const phase = phaseOf(s.name);
    this.timer = setTimeout(() => {
      this.timer = setInterval(() => this.flushInterval(), s.intervalMs);
      this.flushInterval();
    }, Math.max(1, Math.round(phase * s.intervalMs)));
    const opts = s.timeoutMs === undefined ? undefined : { timeoutMs: s.timeoutMs };
    const startDelayMs = s.ratePerSec === Infinity ? 0 : phase * 1000 / s.ratePerSec;
    this.started = Promise.resolve(this.device.open()).then(() => {
      if (!this.running) return;
      // up to the first slot the new schedule intends: the device's reconnect and the job's phase
      // are part of the gap too, so no slot falls between the two grids uncounted
      if (this.resumeFromMs !== undefined) this.coverGap(this.resumeFromMs, Date.now() + startDelayMs);
      this.schedule = startSchedule({
        // one lane per allowed request in flight; the device picks the connection
        clients: lanes,
        nextOp: this.source.nextOp,
        ratePerSec: s.ratePerSec,
        count: s.count,
        durationMs: s.durationMs,
        policy: s.policy === 'closed' ? 'capped' : s.policy,
        precision: s.precision,
        timeoutMs: opts && opts.timeoutMs,
        recorder: this.recorder,
        startDelayMs,
        // without a value gate nothing reads a reply's values: the driver then decodes none (issue 11)
        onReply: this.reader !== null || this.values.mode !== 'off' ? (reply) => this.onReply(reply) : undefined,
        onError: (err) => this.onError(err)
      });
      this.schedule.done.then(() => {
        if (!this.running) return;
        this.finish().then(() => this.emit('end'));
      });
    });
  }

  /**
   * After a worker died (or the gateway restarted with a spool): this interval starts where the
   * last summary ended (recorder.coverFrom), and every slot intended from then until the new
   * schedule's first slot, which nobody served, is counted as skipped with what it had waited by
   * now (a lower bound, as the skip policy records), so the gap is neither hidden by `seq` nor
   * uncounted.
   * @param {number} fromMs epoch ms, the end of the last summary
   * @param {number} [untilMs=Date.now()] epoch ms of the new schedule's first intended slot
   */
  coverGap (fromMs, untilMs = Date.now()) {
    const r = this.recorder;
    const rate = this.spec.ratePerSec;
    const nowMs = Date.now();
    if (rate === Infinity || untilMs <= fromMs) return;
    // bounded: past an hour every wait is clamped to the histogram's top anyway
    const slots = Math.min(Math.round((untilMs - fromMs) * rate / 1000), Math.ceil(rate * 3600));
    for (let i = 0; i < slots; i++) r.recordSkipped(Math.max(0, Math.round((nowMs - fromMs - i * 1000 / rate) * 1e6)));
  }

  /**
   * A tag job's lanes: each request of the schedule is one poll of every tag (tags/reader.js).
   * @returns {Array<{request: Function}>}
   */
  tagLanes () {
    const { TagReader } = require('../tags/reader');
    const { NinesError } = require('../base/errors');
    const s = this.spec;
    this.reader = new TagReader({
      tags: s.tags,
      blocks: s.plan,
      // every read names its unit: the job's (on a line), else the target's
      unitId: s.target.unitId,
      request: (op, opts) => this.user.request(op, opts),
      // a read the device refused names the tags it held; reports are coalesced per code
      onTagError: (err, names) => this.reportError(new NinesError(err.code, `tags ${names.join(', ')} not read: ${err.message}`, { ...err.details, tags: names }))
    });
    const lane = { request: (op, opts) => this.reader.poll(opts) };
    return Array.from({ length: s.connections }, () => lane);
  }

  onReply (reply) {
    if (this.values.mode === 'off') return;
    if (this.reader !== null) { this.values.offer(reply); return; }
    let values = replyValues(reply);
    if (this.decode !== null) {
      try {
        values = this.decode(values);
      } catch (err) {
        this.reportError(err);
        return;
      }
    }
    this.values.offer(values);
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
    const s = this.spec;
    return {
      job: s.label,
      device: s.device,
      unit: s.unit,
      target: s.target.url,
      op: this.source.label,
      policy: s.policy,
      ratePerSec: s.ratePerSec === Infinity ? null : s.ratePerSec,
      connections: s.connections,
      // a tag job: how many tags one poll reads, and in how many requests (splits add to them)
      tags: s.kind === 'tags' ? { count: s.tags.length, reads: this.reader === null ? s.plan.length : this.reader.readsPerPoll } : undefined
    };
  }

  /**
   * Starts a new interval, discarding what the current one has recorded, and a fresh value gate.
   * The histograms are emptied in place (recorder.discard): a snapshot left to the collector made
   * three new histograms per job, and resetting 1,000 jobs one by one (bench question 7) brought a
   * full mark-compact of their thread (3 ms, --trace-gc) and, over 3 interleaved rounds of its
   * child, dispatch-lag p99 0.85-1.40 ms against 0.37-0.82 ms and RSS 182-184 against 171-175 MB.
   */
  reset () {
    if (this.recorder) this.recorder.discard();
    this.errorReports.clear();
    this.values.forget();
  }

  /** A failed request; a tag poll's failure still carries the tags it read, with their quality. */
  onError (err) {
    if (this.reader !== null && err && err.poll && this.values.mode !== 'off') this.values.offer(err.poll);
    this.reportError(err);
  }

  /** A failure, reported per code: at once if its code is quiet, else counted into the interval's report. */
  reportError (err) {
    const e = toNinesError(err);
    const at = Date.now();
    this.errorReports.offer(e.code, { err: e, firstAt: at, lastAt: at });
  }

  /**
   * At the end of an interval: for each code that failed again after its first report, one more
   * report (repeatedReport); a code that stayed quiet all interval is reported at once next time.
   */
  flushErrors () {
    this.errorReports.flush();
  }

  async finish () {
    this.running = false;
    if (this.timer) { clearTimeout(this.timer); clearInterval(this.timer); this.timer = null; }
    if (this.started) await this.started;
    if (this.schedule) { this.schedule.stop(); await this.schedule.done; }
    this.values.close();
    this.flushInterval();
    if (this.user) this.user.close();
  }

  /** Stops polling, lets in-flight requests complete, emits the last interval, leaves the device. */
  async stop () {
    if (!this.running) return;
    await this.finish();
  }
}

/**
 * The report of a code's failures held over an interval: its newest error with details.repeated =
 * how many errors it stands for (the first was reported on its own), and details.firstAt / lastAt
 * (ISO times) = when they happened: it comes at the end of the interval, maybe long after the device
 * came back, so it says it is past.
 * @param {{err: import('../base/errors').NinesError, firstAt: number, lastAt: number}} r epoch ms
 * @param {number} held
 * @returns {import('../base/errors').NinesError}
 */
function repeatedReport (r, held) {
  const e = r.err;
  e.details = { ...(e.details || {}), repeated: held, firstAt: new Date(r.firstAt).toISOString(), lastAt: new Date(r.lastAt).toISOString() };
  return e;
}

/** Registers → engineering values, in the worker, so the deadband is applied once, to what users see. */
function makeDecoder (decode) {
  const { decodeRegisters } = require('../values/registers');
  return (words) => decodeRegisters(words, decode);
}

/**
 * A fixed phase in [0, 1) from a name (FNV-1a, then murmur3's finalizer), the same on every start of
 * the same job. The finalizer spreads names that differ only in their last characters (u1, u2, …)
 * over the whole period: plain FNV-1a left such names within a few percent of one another, so the
 * jobs of ten units on one line sent their polls at once, in a burst the line served one by one.
 * @param {string} name
 * @returns {number}
 */
function phaseOf (name) {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return (h >>> 0) / 0x100000000;
}

module.exports = { Job, phaseOf };
