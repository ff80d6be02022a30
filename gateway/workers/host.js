'use strict';

const { monitorEventLoopDelay } = require('node:perf_hooks');
const { Job, phaseOf } = require('../jobs/job');
const { summaryPayload } = require('../jobs/payload');
const { toNinesError } = require('../base/errors');
const { Steps } = require('./steps');

/** On-demand tag readers kept per thread (one per caller and device; the oldest goes past this) */
const MAX_READERS = 1000;

/**
 * What runs in one thread of the pool: devices (each owning its connections) and the jobs that poll
 * them. The same code runs in a worker thread (job-worker.js) and inline on the caller's thread; it
 * talks to the pool only through messages, plain data both ways, and never waits on the pool.
 *
 * Where the histograms live, the summary is made: percentiles are computed and the response
 * histogram is encoded here, once. The pool only numbers `seq`. When the pool asks for interval
 * logs or for every histogram (the gateway's metrics endpoint), service and lag are encoded here
 * too, once, and both uses share the encodings.
 *
 * In:  device {spec} · drop-device {name} · job {spec, resumeFromMs?} · stop-job {name} · reset {job} ·
 *      req {id, device, op, timeoutMs} · tags {id, device, key, tags, plan, user, timeoutMs} · stop
 * Out: health {device, health} · summary {job, payload, hlog, hists} · values {job, values} ·
 *      error {job, error} · end {job} · job-stopped {name} · res {id, reply | error} · stopped
 */
class Host {
  /**
   * @param {object} opts
   * @param {(msg: object) => void} opts.post sends a message to the pool
   * @param {string} [opts.gateway='nines'] the `gateway` field of the summaries
   * @param {boolean} [opts.hlog=false] also encode service and lag for interval logs
   * @param {boolean} [opts.allHistograms=false] also encode service and lag with every summary
   *   (`hists`), for whoever accumulates all three on the pool's side
   * @param {Function} [opts.createDevice] (spec) => Device (tests)
   */
  constructor ({ post, gateway = 'nines', hlog = false, allHistograms = false, createDevice }) {
    this.post = post;
    this.gateway = gateway;
    this.hlog = hlog;
    this.allHistograms = allHistograms;
    this.createDevice = createDevice || ((spec) => new (require('../devices').Device)(spec));
    this.devices = new Map();
    this.jobs = new Map();
    /** on-demand tag readers by device and caller key, so a read split around a hole stays split */
    this.readers = new Map();
    // the thread's own event-loop delay over each interval, so a subscriber can tell a slow device
    // from a busy poller
    this.loopDelay = monitorEventLoopDelay({ resolution: 10 });
    this.loopDelay.enable();
    /** summaries in pieces, and what must follow them (steps.js) */
    this.steps = new Steps((err) => this.post({ type: 'error', job: null, error: toNinesError(err, 'NINES_ERR_WORKER').toJSON() }));
  }

  /** @param {object} m a message from the pool */
  handle (m) {
    try {
      switch (m.type) {
        // the pool built it (pool.js addDevice): a posted copy is taken as built, not built again
        case 'device': this.addDevice(require('../devices/spec').trustDeviceSpec(m.spec)); break;
        case 'drop-device': this.dropDevice(m.name); break;
        case 'job': this.startJob(m.spec, m.resumeFromMs); break;
        case 'stop-job': this.stopJob(m.name); break;
        case 'reset': for (const [name, job] of this.jobs) if (!m.job || m.job === name) job.reset(); break;
        case 'req': this.request(m); break;
        case 'tags': this.readTags(m); break;
        case 'stop': this.stop(); break;
        default: break;
      }
    } catch (err) {
      this.post({ type: 'error', job: m.spec ? m.spec.name : (m.job || null), error: toNinesError(err, 'NINES_ERR_WORKER').toJSON() });
    }
  }

  addDevice (spec) {
    if (this.devices.has(spec.name)) return;
    const device = this.createDevice(spec);
    this.devices.set(spec.name, device);
    // a device being dropped may report its closing after another of the same name has replaced it
    device.on('health', (health) => { if (this.devices.get(spec.name) === device) this.post({ type: 'health', device: spec.name, health }); });
    device.open().catch(() => {}); // failures are health events; the device keeps retrying
    this.post({ type: 'health', device: spec.name, health: device.health });
  }

  dropDevice (name) {
    const device = this.devices.get(name);
    if (!device) return;
    this.devices.delete(name);
    for (const key of this.readers.keys()) if (key.startsWith(`${name}\0`)) this.readers.delete(key);
    device.close().catch(() => {});
  }

  startJob (spec, resumeFromMs) {
    const device = this.devices.get(spec.device);
    if (!device) throw new (require('../base/errors').NinesError)('NINES_ERR_INVALID_ARG', `job ${spec.name} names device ${JSON.stringify(spec.device)}, which this pool does not have`, { field: 'device', value: spec.device });
    const job = new Job(spec, { device, resumeFromMs });
    this.jobs.set(spec.name, job);
    // when the job began sending, so its first summary judges whether the rate held from then, not
    // from before its device was connected (jobs/payload.js); a resumed job's gap counts in full
    const sending = { sinceMs: resumeFromMs === undefined ? null : undefined };
    job.on('snapshot', (snap, meta) => {
      meta.sendingSinceMs = sending.sinceMs;
      // summarized, encoded and posted in pieces (steps.js); then its histograms record the next
      // interval but one, instead of three new ones per interval (allocation, and new objects the
      // recording code meets: issue 11)
      this.postSummary(spec.name, snap, meta, () => job.recorder.recycle(snap));
    });
    job.on('values', (v) => this.post({ type: 'values', job: spec.name, values: v }));
    job.on('job-error', (err) => this.post({ type: 'error', job: spec.name, error: toNinesError(err).toJSON() }));
    // after the job's last summary, which may still be in pieces
    job.on('end', () => this.steps.add(() => { this.jobs.delete(spec.name); this.post({ type: 'end', job: spec.name }); }));
    job.start();
    if (resumeFromMs === undefined && job.started) {
      const delayMs = spec.ratePerSec === Infinity ? 0 : phaseOf(spec.name) * 1000 / spec.ratePerSec; // the job's phase (jobs/job.js)
      job.started.then(() => { sending.sinceMs = Date.now() + delayMs; }, () => {});
    }
  }

  /**
   * Summarizes an interval and posts it, in pieces, one per turn (steps.js): each histogram's
   * statistics, the encodings, then the payload. Summaries and what follows them keep their order.
   * @param {string} name
   * @param {object} snap the interval's snapshot (the histograms stay untouched until done)
   * @param {object} meta
   * @param {() => void} [done] after the post (or the failure), e.g. giving the histograms back
   */
  postSummary (name, snap, meta, done) {
    const { summarize, encodeHistogram, encodeInterval } = require('../latency');
    const both = this.allHistograms || this.hlog;
    const w = { summaries: {}, encoded: {}, payload: null, failed: false };
    const piece = (fn) => this.steps.add(() => {
      if (w.failed) return;
      try {
        fn();
      } catch (err) {
        w.failed = true;
        this.post({ type: 'error', job: name, error: toNinesError(err, 'NINES_ERR_BAD_HISTOGRAM').toJSON() });
      }
    });
    piece(() => { w.summaries.response = summarize(snap.response); });
    piece(() => { w.summaries.service = summarize(snap.service); });
    piece(() => { w.summaries.lag = summarize(snap.lag); });
    piece(() => { w.encoded.response = encodeHistogram(snap.response); });
    if (both) {
      piece(() => { w.encoded.service = encodeHistogram(snap.service); });
      piece(() => { w.encoded.lag = encodeHistogram(snap.lag); });
    }
    piece(() => {
      const d = this.loopDelay;
      meta.loopDelayP99Ms = d.count ? Math.max(0, d.percentile(99) / 1e6 - 10) : 0;
      d.reset();
      w.payload = summaryPayload({ ...snap, summaries: w.summaries, encoded: w.encoded }, 0, meta, { gateway: this.gateway, job: meta.job });
    });
    // posting (a structured clone) is a piece of its own
    piece(() => {
      const payload = w.payload;
      const hists = both ? { service: w.encoded.service, lag: w.encoded.lag } : null;
      const hlog = this.hlog
        ? [
            encodeInterval('response', snap.response, snap.startMs, snap.endMs, payload.hist),
            encodeInterval('service', snap.service, snap.startMs, snap.endMs, hists.service),
            encodeInterval('lag', snap.lag, snap.startMs, snap.endMs, hists.lag)
          ]
        : null;
      this.post({ type: 'summary', job: name, payload, hlog, meta, hists: this.allHistograms ? hists : null });
    });
    // once, after the post or the piece that failed: outside the pieces' catch, so a done() that
    // throws is not called a second time from there (Steps reports it)
    if (done) this.steps.add(done);
  }

  stopJob (name) {
    const job = this.jobs.get(name);
    if (!job) { this.post({ type: 'job-stopped', name }); return; }
    this.jobs.delete(name);
    // after its last summary, which may still be in pieces
    job.stop().catch(() => {}).then(() => this.steps.add(() => this.post({ type: 'job-stopped', name })));
  }

  request (m) {
    const device = this.devices.get(m.device);
    if (!device) {
      this.post({ type: 'res', id: m.id, error: { code: 'NINES_ERR_INVALID_ARG', message: `no device ${JSON.stringify(m.device)} in this pool`, details: { device: m.device } } });
      return;
    }
    const opts = m.timeoutMs === undefined && m.notAfter === undefined ? undefined : { timeoutMs: m.timeoutMs, notAfter: m.notAfter };
    device.user(m.user || 'on-demand').request(m.op, opts).then(
      (reply) => this.post({ type: 'res', id: m.id, reply: plainReply(reply) }),
      (err) => {
        const e = toNinesError(err);
        this.post({ type: 'res', id: m.id, error: e.toJSON(), sentNs: err && err.sentNs });
      });
  }

  /**
   * One poll of a tag list on demand (the Node-RED read node): read and decoded here, beside the
   * device, so only named values cross back to the caller's thread.
   */
  readTags (m) {
    const device = this.devices.get(m.device);
    if (!device) {
      this.post({ type: 'res', id: m.id, error: { code: 'NINES_ERR_INVALID_ARG', message: `no device ${JSON.stringify(m.device)} in this pool`, details: { device: m.device } } });
      return;
    }
    const key = `${m.device}\0${m.key}`;
    let reader = this.readers.get(key);
    if (reader === undefined) {
      const { TagReader } = require('../tags/reader');
      // every read of a poll waits at once: the user's queue holds at least one per tag
      const user = device.user(m.user || 'on-demand', { queueMax: Math.max(device.spec.queueMax, Math.min(m.tags.length, 100000)) });
      reader = new TagReader({ tags: m.tags, blocks: m.plan, request: (op, o) => user.request(op, o) });
      if (this.readers.size >= MAX_READERS) this.readers.delete(this.readers.keys().next().value);
      this.readers.set(key, reader);
    }
    reader.poll(m.timeoutMs === undefined ? undefined : { timeoutMs: m.timeoutMs }).then(
      (result) => this.post({ type: 'res', id: m.id, reply: result }),
      (err) => {
        const e = toNinesError(err);
        this.post({ type: 'res', id: m.id, error: e.toJSON(), sentNs: err && err.sentNs, poll: err && err.poll });
      });
  }

  async stop () {
    await Promise.allSettled([...this.jobs.values()].map((j) => j.stop()));
    this.jobs.clear();
    await Promise.allSettled([...this.devices.values()].map((d) => d.close()));
    this.devices.clear();
    this.loopDelay.disable();
    // after the last summaries, when some are still in pieces
    if (this.steps.length === 0) this.post({ type: 'stopped' });
    else this.steps.add(() => this.post({ type: 'stopped' }));
  }
}

/** A reply as plain data: its own fields (class instances lose their prototype across threads anyway). */
function plainReply (reply) {
  const out = {};
  for (const k of Object.keys(reply)) if (typeof reply[k] !== 'function') out[k] = reply[k];
  return out;
}

module.exports = { Host };
