'use strict';

const { EventEmitter } = require('node:events');
const os = require('node:os');
const path = require('node:path');
const { Worker } = require('node:worker_threads');
const { NinesError, fromJSON, toNinesError } = require('../base/errors');
const { Steps } = require('./steps');
const { summarizeInPieces } = require('./summaries');
const { Backoff } = require('../base/backoff');
const { withPreciseSlack } = require('../scheduler/timer-slack');

/** A worker that stayed up this long has earned a quick restart again (a crash loop keeps growing its delay). */
const HEALTHY_AFTER_MS = 30000;

/**
 * The worker pool: a few threads (default cores − 1, at least 1) that host the devices and the jobs
 * polling them, off the caller's event loop. One pool serves a whole process: every gateway job and
 * every Node-RED poll node shares it (workers/shared.js), never a thread per job.
 *
 * A device lives in one thread, with its connections, and its jobs run beside it, so a device
 * never has more connections than its maxConnections, whoever polls it. On-demand requests (the
 * Node-RED read, write and ASCII nodes) go to the device's thread by message and come back.
 * Devices are spread evenly over the threads; a thread starts when its first device arrives.
 *
 * `inline` runs the same host code on the caller's thread (comparisons, tests).
 *
 * Serial devices (modbus+rtu) always live on the caller's thread, in a host of their own: the
 * serialport package's native module cannot run in a worker thread (it aborts the whole process,
 * serialport/node-serialport#1938). A serial line is slow next to an event loop's delays (a frame
 * takes milliseconds at 19200 baud), so its polling loses little there.
 *
 * A worker that dies is reported and restarted with its devices and jobs, with a backoff that grows
 * until a worker has stayed up for a while. `seq` is numbered here, so it stays contiguous across
 * restarts, and the first summary after a restart starts where the last one ended: the slots that
 * nobody served while the worker was away are counted as skipped.
 *
 * Events:
 * - 'summary' (job, payload, hlog, meta, hists): the design.md latency payload, seq numbered; hlog:
 *   encoded intervals when the pool was asked for them; hists: {service, lag} encoded (V2 base64,
 *   ns) when the pool was asked for all histograms, else null (response is the payload's `hist`);
 * - 'values' (job, {values, ts, polls}); 'job-error' (job|null, NinesError); 'end' (job);
 * - 'health' (device, health): devices/device.js health, on every change;
 * - 'worker-exit' ({worker, code, jobs, devices, restartInMs}).
 */
class WorkerPool extends EventEmitter {
  /**
   * @param {object} [opts]
   * @param {'worker'|'inline'} [opts.mode='worker']
   * @param {number|'auto'} [opts.workers='auto'] cores − 1, at least 1
   * @param {string} [opts.gateway='nines'] the `gateway` field of the summaries
   * @param {boolean} [opts.hlog=false] summaries carry encoded intervals for .hlog files
   * @param {boolean} [opts.allHistograms=false] summaries carry service and lag encoded too
   * @param {import('node:worker_threads').ResourceLimits} [opts.resourceLimits] heap limits of each worker
   *   thread (node:worker_threads), e.g. maxYoungGenerationSizeMb
   * @param {string[]} [opts.execArgv] Node options of each worker thread (default: the process's); the
   *   benches profile a worker's collections with `--require` here
   */
  constructor ({ mode = 'worker', workers = 'auto', gateway = 'nines', hlog = false, allHistograms = false, resourceLimits, execArgv } = {}) {
    super();
    this.setMaxListeners(0); // every poll node of a flow listens
    if (mode !== 'worker' && mode !== 'inline') throw new NinesError('NINES_ERR_INVALID_ARG', `mode must be worker or inline; got ${JSON.stringify(mode)}`, { field: 'mode', value: mode });
    this.mode = mode;
    this.workerCount = workers === 'auto' || workers === undefined ? Math.max(1, os.availableParallelism() - 1) : workers;
    if (!Number.isInteger(this.workerCount) || this.workerCount < 1) {
      throw new NinesError('NINES_ERR_INVALID_ARG', `workers must be "auto" or a whole number ≥ 1; got ${JSON.stringify(workers)}`, { field: 'workers', value: workers });
    }
    if (mode === 'inline') this.workerCount = 1;
    this.gateway = gateway;
    this.hlog = hlog;
    this.allHistograms = allHistograms;
    this.resourceLimits = resourceLimits;
    this.execArgv = execArgv;
    /** @type {Array<{index: number, host: object|null, worker: Worker|null, devices: Map, jobs: Map, backoff: Backoff, upSince: number}>} */
    this.slots = Array.from({ length: this.workerCount }, (_, index) => ({
      index, host: null, worker: null, devices: new Map(), jobs: new Map(), backoff: new Backoff({ initialMs: 500, maxMs: 30000 }), upSince: 0, restartTimer: null
    }));
    /** the caller's-thread host of the serial devices, made with the first of them */
    this.mainSlot = null;
    this.deviceSlot = new Map();
    this.deviceUsers = new Map();
    this.healthOf = new Map();
    this.seq = new Map();
    this.coveredUntil = new Map(); // job → end of its last summary (epoch ms), for restarts
    this.pending = new Map(); // request id → {resolve, reject, slot}
    this.stopWaiters = new Map(); // job → [resolve]
    this.nextId = 1;
    this.stopping = false;
    /** summaries in pieces on this thread (summaries.js), and what must follow them */
    this.steps = new Steps((err) => this.emit('job-error', null, toNinesError(err, 'NINES_ERR_WORKER')));
  }

  /** @returns {number} threads running now */
  get threads () {
    return this.slots.filter((s) => s.worker !== null).length;
  }

  /** @returns {object} the slot hosting serial devices on the caller's thread (see the class comment) */
  serialSlot () {
    if (this.mainSlot === null) {
      this.mainSlot = { index: 'main', main: true, host: null, worker: null, devices: new Map(), jobs: new Map(), backoff: null, upSince: 0, restartTimer: null };
      this.slots.push(this.mainSlot);
    }
    return this.mainSlot;
  }

  /**
   * Adds a device (built by devices/spec.js); its thread opens its connections. Devices are counted
   * by their users: adding one already there adds a user, and removeDevice() closes it when the
   * last user is gone.
   * @param {object} spec a built spec (raw input is built here, once: the worker takes what it is posted as built)
   */
  addDevice (spec) {
    if (this.stopping) throw this.stoppedError();
    spec = require('../devices/spec').buildDeviceSpec(spec);
    const users = this.deviceUsers.get(spec.name) || 0;
    this.deviceUsers.set(spec.name, users + 1);
    if (users > 0) return;
    const slot = this.mode === 'worker' && spec.target.protocol === 'modbus+rtu'
      ? this.serialSlot()
      : this.slots.filter((s) => !s.main).reduce((min, s) => (s.devices.size < min.devices.size ? s : min));
    slot.devices.set(spec.name, spec);
    this.deviceSlot.set(spec.name, slot);
    this.ensureHost(slot);
    this.post(slot, { type: 'device', spec });
  }

  /**
   * Removes a user of a device; the last one out closes its connections. Its jobs must have been
   * stopped first.
   * @param {string} name
   */
  removeDevice (name) {
    const slot = this.deviceSlot.get(name);
    if (!slot) return;
    const users = (this.deviceUsers.get(name) || 1) - 1;
    if (users > 0) { this.deviceUsers.set(name, users); return; }
    this.deviceUsers.delete(name);
    this.deviceSlot.delete(name);
    this.healthOf.delete(name);
    slot.devices.delete(name);
    this.post(slot, { type: 'drop-device', name });
  }

  /**
   * Starts a job (built by jobs/spec.js) in the thread of its device.
   * @param {import('../jobs/spec').JobSpec} spec
   * @param {{seq: number, end: number}} [resume] where the job's stream stood when the gateway last
   *   ran (its last summary, from the disk spool): numbering goes on at seq + 1 and the first
   *   interval starts at end, its unserved slots counted as skipped, as after a worker restart
   */
  startJob (spec, resume) {
    if (this.stopping) throw this.stoppedError();
    const slot = this.deviceSlot.get(spec.device);
    if (!slot) throw new NinesError('NINES_ERR_INVALID_ARG', `job ${spec.name} names device ${JSON.stringify(spec.device)}, which is not in the pool`, { field: 'device', value: spec.device });
    slot.jobs.set(spec.name, spec);
    const numbered = resume && Number.isInteger(resume.seq) && resume.seq >= 0;
    if (numbered) this.seq.set(spec.name, resume.seq + 1);
    // an end in the future (the clock was set back) covers no gap, but the numbering still goes on
    const fromMs = numbered && Number.isFinite(resume.end) && resume.end <= Date.now() ? resume.end : undefined;
    this.coveredUntil.set(spec.name, fromMs === undefined ? Date.now() : fromMs);
    this.post(slot, fromMs === undefined ? { type: 'job', spec } : { type: 'job', spec, resumeFromMs: fromMs });
  }

  /**
   * Stops a job: in-flight requests complete and its last interval's summary is emitted first.
   * @param {string} name
   * @returns {Promise<void>}
   */
  stopJob (name) {
    const slot = this.slots.find((s) => s.jobs.has(name));
    if (!slot) return Promise.resolve();
    slot.jobs.delete(name);
    const done = new Promise((resolve) => {
      const list = this.stopWaiters.get(name) || [];
      list.push(resolve);
      this.stopWaiters.set(name, list);
    });
    this.post(slot, { type: 'stop-job', name });
    return done;
  }

  /**
   * Ends a stopped job's stream: forgets its numbering and covered time, so a job started later
   * under the same name begins a new stream at `seq` 0 (its first summary says `first: true`).
   * @param {string} name
   * @returns {{seq: number, end: number}|undefined} where the stream stood (its last summary's seq
   *   and end), for startJob() when the same job goes on with new settings (a config reload);
   *   undefined when it never published a summary
   */
  endStream (name) {
    const next = this.seq.get(name);
    const end = this.coveredUntil.get(name);
    this.seq.delete(name);
    this.coveredUntil.delete(name);
    return next === undefined ? undefined : { seq: next - 1, end };
  }

  /** Starts a new interval for one job (or all), discarding what it recorded so far. @param {string} [job] */
  reset (job) {
    for (const slot of this.slots) if (slot.jobs.size > 0 && (!job || slot.jobs.has(job))) this.post(slot, { type: 'reset', job });
  }

  /**
   * One request on a device's connections, served in turn with its jobs' requests.
   * @param {string} device
   * @param {string|object} op an ASCII command or a Modbus op
   * @param {{timeoutMs?: number, user?: string, notAfter?: number}} [opts] user: who asks (each user gets its
   *   own fair queue); notAfter: the latest start, epoch ms as performance.timeOrigin + performance.now()
   *   count (devices/device.js), past which it fails unsent with NINES_ERR_WRITE_EXPIRED
   * @returns {Promise<object>} the reply (plain data; Buffers restored); rejects with a NinesError
   */
  request (device, op, opts = {}) {
    const slot = this.deviceSlot.get(device);
    if (!slot) return Promise.reject(new NinesError('NINES_ERR_INVALID_ARG', `no device ${JSON.stringify(device)} in the pool`, { device }));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, slot });
      this.post(slot, { type: 'req', id, device, op, timeoutMs: opts.timeoutMs, notAfter: opts.notAfter, user: opts.user });
    });
  }

  /**
   * One poll of a tag list on the device's connections, decoded in the device's thread.
   * @param {string} device
   * @param {{tags: object[], plan: object[]}} read checked tags and their plan (tags/spec.js, tags/plan.js)
   * @param {{user?: string, key?: string, timeoutMs?: number}} [opts] key: the caller's, so a read split
   *   around a hole in the device's map stays split for the caller's later reads
   * @returns {Promise<import('../tags/reader').PollResult>} rejects with the poll's error; `err.poll`
   *   holds the tags read and the quality of the others
   */
  readTags (device, read, opts = {}) {
    const slot = this.deviceSlot.get(device);
    if (!slot) return Promise.reject(new NinesError('NINES_ERR_INVALID_ARG', `no device ${JSON.stringify(device)} in the pool`, { device }));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, slot });
      this.post(slot, { type: 'tags', id, device, key: opts.key || opts.user || 'on-demand', tags: read.tags, plan: read.plan, timeoutMs: opts.timeoutMs, user: opts.user });
    });
  }

  /** @param {string} device @returns {object|null} the device's last health (devices/device.js) */
  health (device) {
    return this.healthOf.get(device) || null;
  }

  /** Terminates a worker abruptly (tests and fault drills): it is reported and restarted like a crash. */
  async killWorker (index) {
    const slot = this.slots[index];
    if (slot && slot.worker) await slot.worker.terminate();
  }

  /**
   * Stops every job (each emits its last interval), closes every device, ends the threads.
   * @param {number} [timeoutMs=10000] workers still running after this are terminated
   * @returns {Promise<void>}
   */
  async stop (timeoutMs = 10000) {
    this.stopping = true;
    await Promise.all(this.slots.map(async (slot) => {
      clearTimeout(slot.restartTimer);
      if (slot.host) {
        const host = slot.host;
        await new Promise((resolve) => { slot.onStopped = resolve; host.handle({ type: 'stop' }); });
        return;
      }
      const w = slot.worker;
      if (!w) return;
      const exited = new Promise((resolve) => w.once('exit', resolve));
      w.postMessage({ type: 'stop' });
      const timer = setTimeout(() => w.terminate(), timeoutMs);
      await exited;
      clearTimeout(timer);
    }));
    // the last summaries, posted before the threads ended and maybe still in pieces
    await new Promise((resolve) => this.steps.add(resolve));
    for (const [, p] of this.pending) p.reject(this.stoppedError());
    this.pending.clear();
    for (const [, list] of this.stopWaiters) for (const resolve of list) resolve();
    this.stopWaiters.clear();
  }

  // --- threads -----------------------------------------------------------------------------------

  ensureHost (slot) {
    if (slot.host || slot.worker || slot.restartTimer) return;
    if (this.mode === 'inline' || slot.main) {
      const { Host } = require('./host');
      slot.host = new Host({ post: (m) => this.onMessage(slot, m) });
      return;
    }
    this.spawn(slot);
  }

  spawn (slot) {
    slot.restartTimer = null;
    // its sleeps end when asked (timer-slack.js)
    const worker = withPreciseSlack(() => new Worker(path.join(__dirname, 'job-worker.js'), {
      ...(this.resourceLimits === undefined ? {} : { resourceLimits: this.resourceLimits }),
      ...(this.execArgv === undefined ? {} : { execArgv: this.execArgv })
    }));
    slot.worker = worker;
    slot.upSince = Date.now();
    worker.on('message', (m) => this.onMessage(slot, m));
    worker.on('error', (err) => {
      this.emit('job-error', null, new NinesError('NINES_ERR_WORKER', `worker ${slot.index} failed: ${err.message}`, { worker: slot.index, jobs: [...slot.jobs.keys()] }));
    });
    worker.on('exit', (code) => this.onExit(slot, worker, code));
    // a restarted worker gets its devices back first, then their jobs
    for (const spec of slot.devices.values()) worker.postMessage({ type: 'device', spec });
    // each job's first summary after a restart starts where its last one ended, covering the gap
    for (const spec of slot.jobs.values()) worker.postMessage({ type: 'job', spec, resumeFromMs: this.coveredUntil.get(spec.name) });
  }

  onExit (slot, worker, code) {
    if (slot.worker !== worker) return;
    slot.worker = null;
    for (const [id, p] of this.pending) {
      if (p.slot !== slot) continue;
      this.pending.delete(id);
      p.reject(new NinesError('NINES_ERR_WORKER', `the worker serving this device exited (code ${code}) before the reply came`, { worker: slot.index, code }));
    }
    if (this.stopping || (slot.devices.size === 0 && slot.jobs.size === 0)) return;
    if (Date.now() - slot.upSince >= HEALTHY_AFTER_MS) slot.backoff.reset();
    const restartInMs = slot.backoff.next();
    this.emit('worker-exit', { worker: slot.index, code, jobs: [...slot.jobs.keys()], devices: [...slot.devices.keys()], restartInMs });
    slot.restartTimer = setTimeout(() => { if (!this.stopping) this.spawn(slot); }, restartInMs);
  }

  post (slot, msg) {
    if (slot.host) slot.host.handle(msg);
    else if (slot.worker) slot.worker.postMessage(msg);
    // else: a worker is being restarted; it gets its devices and jobs from the slot when it starts
    // never handed to a device: not sent (queued), which a write's outcome depends on (tags/write.js)
    else if (msg.type === 'req' || msg.type === 'tags') this.onMessage(slot, { type: 'res', id: msg.id, error: { code: 'NINES_ERR_WORKER', message: 'request not sent: the worker serving this device is restarting', details: { worker: slot.index, queued: true } } });
    else if (msg.type === 'stop-job') this.onMessage(slot, { type: 'job-stopped', name: msg.name });
  }

  onMessage (slot, m) {
    switch (m.type) {
      case 'snapshot': {
        summarizeInPieces(this.steps, m.snap, m.meta, { gateway: this.gateway, hlog: this.hlog, allHistograms: this.allHistograms, loop: m.loop },
          (s) => this.onSummary(m.job, s.payload, s.hlog, m.meta, s.hists),
          (err) => this.emit('job-error', m.job, err));
        break;
      }
      case 'values': this.emit('values', m.job, m.values); break;
      case 'error': this.emit('job-error', m.job, fromJSON(m.error)); break;
      case 'health':
        if (!this.deviceSlot.has(m.device)) break; // a device just removed
        this.healthOf.set(m.device, m.health);
        this.emit('health', m.device, m.health);
        break;
      // after the job's summaries, which may still be in pieces
      case 'end':
        this.steps.add(() => {
          slot.jobs.delete(m.job);
          this.emit('end', m.job);
        });
        break;
      case 'job-stopped':
        this.steps.add(() => {
          const list = this.stopWaiters.get(m.name);
          this.stopWaiters.delete(m.name);
          if (list) for (const resolve of list) resolve();
        });
        break;
      case 'res': this.onResponse(m); break;
      case 'stopped': this.steps.add(() => { if (slot.onStopped) slot.onStopped(); }); break;
      default: break;
    }
  }

  /** A summary made (summaries.js): `seq` numbered here, contiguous across worker restarts. */
  onSummary (job, payload, hlog, meta, hists) {
    const seq = this.seq.get(job) || 0;
    this.seq.set(job, seq + 1);
    payload.seq = seq;
    // a new stream (the job started, or was added by a reload): nothing before its start belongs to it
    if (seq === 0) payload.first = true;
    this.coveredUntil.set(job, payload.end);
    this.emit('summary', job, payload, hlog, meta, hists);
  }

  onResponse (m) {
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if (m.error) {
      const err = fromJSON(m.error);
      if (m.sentNs !== undefined) err.sentNs = m.sentNs;
      if (m.poll !== undefined) err.poll = m.poll;
      p.reject(err);
      return;
    }
    p.resolve(restoreBuffers(m.reply));
  }

  stoppedError () {
    return new NinesError('NINES_ERR_CLOSED', 'the worker pool is stopped', {});
  }
}

/** Buffers cross threads as Uint8Array: give the caller Buffers back. */
function restoreBuffers (reply) {
  for (const k of Object.keys(reply)) {
    const v = reply[k];
    if (v instanceof Uint8Array && !Buffer.isBuffer(v)) reply[k] = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  }
  return reply;
}

module.exports = { WorkerPool, HEALTHY_AFTER_MS };
