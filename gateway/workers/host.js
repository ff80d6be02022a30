'use strict';

const { Job, phaseOf } = require('../jobs/job');
const { toNinesError } = require('../base/errors');
const { snapshotTransfer, transferList } = require('./summaries');
const { LoopDelay } = require('./loop-delay');

/** On-demand tag readers kept per thread (one per caller and device; the oldest goes past this) */
const MAX_READERS = 1000;

/**
 * What runs in one thread of the pool: devices (each owning its connections) and the jobs that poll
 * them. The same code runs in a worker thread (job-worker.js) and inline on the caller's thread; it
 * talks to the pool only through messages, plain data both ways, and never waits on the pool.
 *
 * Each interval goes to the pool as its counts and a copy of its histograms (summaries.js):
 * the percentiles and encodings are made on the pool's thread, so no summary work stands between
 * this thread's deadlines and its sends (issue 20).
 *
 * In:  device {spec} · drop-device {name} · job {spec, resumeFromMs?} · stop-job {name} · reset {job} ·
 *      req {id, device, op, timeoutMs} · tags {id, device, key, tags, plan, user, timeoutMs} · stop
 * Out: health {device, health} · snapshot {job, snap, meta, loop} · values {job, values} ·
 *      error {job, error} · end {job} · job-stopped {name} · res {id, reply | error} · stopped
 */
class Host {
  /**
   * @param {object} opts
   * @param {(msg: object, transfer?: ArrayBuffer[]) => void} opts.post sends a message to the pool;
   *   `transfer` lists buffers the message hands over (the receiver owns them after)
   * @param {Function} [opts.createDevice] (spec) => Device (tests)
   */
  constructor ({ post, createDevice }) {
    this.post = post;
    this.createDevice = createDevice || ((spec) => new (require('../devices').Device)(spec));
    this.devices = new Map();
    this.jobs = new Map();
    /** on-demand tag readers by device and caller key, so a read split around a hole stays split */
    this.readers = new Map();
    // the thread's own event-loop delay over each interval, so a subscriber can tell a slow device
    // from a busy poller
    this.loopDelay = new LoopDelay();
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
        case 'reset': this.reset(m.job); break;
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
      // posted as a copy (summarized on the pool's thread); then its histograms record the next
      // interval but one, instead of three new ones per interval (allocation, and new objects the
      // recording code meets: issue 11)
      try {
        this.postSnapshot(spec.name, snap, meta);
      } finally {
        job.recorder.recycle(snap);
      }
    });
    job.on('values', (v) => this.post({ type: 'values', job: spec.name, values: v }));
    job.on('job-error', (err) => this.post({ type: 'error', job: spec.name, error: toNinesError(err).toJSON() }));
    // after the job's last snapshot, posted as it was taken
    job.on('end', () => { this.jobs.delete(spec.name); this.loopDelay.forget(spec.name); this.post({ type: 'end', job: spec.name }); });
    this.loopDelay.begin(spec.name);
    job.start();
    if (resumeFromMs === undefined && job.started) {
      const delayMs = spec.ratePerSec === Infinity ? 0 : phaseOf(spec.name) * 1000 / spec.ratePerSec; // the job's phase (jobs/job.js)
      job.started.then(() => { sending.sinceMs = Date.now() + delayMs; }, () => {});
    }
  }

  /**
   * Posts an interval as its counts and a copy of its histograms; the pool's thread
   * summarizes and encodes it (summaries.js), so nothing of it delays this thread's sends.
   * @param {string} name
   * @param {object} snap the interval's snapshot (free to recycle once this returns)
   * @param {object} meta
   */
  postSnapshot (name, snap, meta) {
    const t = snapshotTransfer(snap);
    // the thread's loop delay over this job's interval (loop-delay.js): its p99 is taken there too
    const loop = this.loopDelay.since(name);
    const transfer = transferList(t);
    transfer.push(loop.buffer);
    // handed over, not cloned: the copies are this message's alone (a clone of them cost 40–110 µs)
    this.post({ type: 'snapshot', job: name, snap: t, meta, loop }, transfer);
  }

  /**
   * A new interval for one job, or for every job of this thread. One job is looked up, not found by
   * walking them all: each step of a walk over the Map allocates an [name, job] pair, and a reset
   * of 1,000 jobs one by one (1,000 messages) made a million of them, five scavenges of the thread
   * in 0.2 s (--trace-gc).
   * @param {string|undefined} name
   */
  reset (name) {
    if (name) {
      const job = this.jobs.get(name);
      if (job) job.reset();
      return;
    }
    for (const job of this.jobs.values()) job.reset();
  }

  stopJob (name) {
    const job = this.jobs.get(name);
    if (!job) { this.post({ type: 'job-stopped', name }); return; }
    this.jobs.delete(name);
    // after its last snapshot
    job.stop().catch(() => {}).then(() => { this.loopDelay.forget(name); this.post({ type: 'job-stopped', name }); });
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
    this.loopDelay.stop();
    this.post({ type: 'stopped' });
  }
}

/** A reply as plain data: its own fields (class instances lose their prototype across threads anyway). */
function plainReply (reply) {
  const out = {};
  for (const k of Object.keys(reply)) if (typeof reply[k] !== 'function') out[k] = reply[k];
  return out;
}

module.exports = { Host };
