'use strict';

const { EventEmitter } = require('node:events');
const os = require('node:os');
const path = require('node:path');
const { Worker } = require('node:worker_threads');
const { NinesError, fromJSON, toNinesError } = require('../base/errors');
const { Backoff } = require('../base/backoff');

/**
 * Runs jobs in worker threads (default: cores − 1 workers, at least 1), or inline on this thread
 * with the same Job code (for comparison and tests). Jobs are spread so each worker carries about
 * the same offered load. A worker that dies is reported and restarted with its jobs (with backoff,
 * so a job that kills its worker at once cannot spin).
 *
 * Events, the same in both modes:
 * - 'snapshot' (job, snapshot, meta): decoded interval snapshot (latency Recorder form);
 * - 'values' (job, {values, ts, polls}); 'job-error' (job|null, NinesError) — not 'error', which throws when unheard; 'state' (job, state); 'end' (job);
 * - 'worker-exit' ({worker, code, jobs, restartInMs}): a worker died.
 */
class WorkerPool extends EventEmitter {
  /**
   * @param {object} [opts]
   * @param {'worker'|'inline'} [opts.mode='worker']
   * @param {number|'auto'} [opts.workers='auto'] cores − 1, at least 1
   * @param {number} [opts.intervalMs=10000]
   */
  constructor ({ mode = 'worker', workers = 'auto', intervalMs = 10000 } = {}) {
    super();
    if (mode !== 'worker' && mode !== 'inline') throw new NinesError('NINES_ERR_INVALID_ARG', `mode must be worker or inline; got ${JSON.stringify(mode)}`);
    this.mode = mode;
    this.workerCount = workers === 'auto' || workers === undefined ? Math.max(1, os.availableParallelism() - 1) : workers;
    if (!Number.isInteger(this.workerCount) || this.workerCount < 1) {
      throw new NinesError('NINES_ERR_INVALID_ARG', `workers must be "auto" or a whole number ≥ 1; got ${JSON.stringify(workers)}`);
    }
    this.intervalMs = intervalMs;
    this.slots = []; // {worker, jobs: spec[], backoff, exiting}
    this.inline = new Map();
    this.stopping = false;
  }

  /**
   * Starts the jobs.
   * @param {object[]} specs normalized job specs (see Job)
   * @returns {Promise<void>} resolves when every job has started
   */
  async start (specs) {
    if (this.mode === 'inline') {
      const { Job } = require('../jobs/job');
      for (const spec of specs) {
        const job = new Job(spec, { intervalMs: this.intervalMs });
        this.inline.set(spec.name, job);
        job.on('snapshot', (snap, meta) => this.emit('snapshot', spec.name, snap, meta));
        job.on('values', (v) => this.emit('values', spec.name, v));
        job.on('job-error', (err) => this.emit('job-error', spec.name, err));
        job.on('state', (s) => this.emit('state', spec.name, s));
        job.on('end', () => { this.inline.delete(spec.name); this.emit('end', spec.name); });
        job.start();
      }
      return;
    }
    const n = Math.min(this.workerCount, Math.max(1, specs.length));
    const groups = Array.from({ length: n }, () => ({ jobs: [], load: 0 }));
    // heaviest first onto the least loaded worker; closed-loop jobs count as the heaviest
    const load = (s) => (s.ratePerSec === Infinity ? 1e9 : s.ratePerSec) * (s.connections || 1);
    for (const spec of [...specs].sort((a, b) => load(b) - load(a))) {
      const g = groups.reduce((min, x) => (x.load < min.load ? x : min));
      g.jobs.push(spec);
      g.load += load(spec);
    }
    await Promise.all(groups.map((g, i) => this.spawn(i, g.jobs)));
  }

  spawn (index, jobs) {
    const slot = this.slots[index] || { jobs, backoff: new Backoff({ initialMs: 500, maxMs: 30000 }), worker: null };
    this.slots[index] = slot;
    slot.jobs = jobs;
    const worker = new Worker(path.join(__dirname, 'job-worker.js'), { workerData: { intervalMs: this.intervalMs } });
    slot.worker = worker;
    let startedResolve;
    const started = new Promise((resolve) => { startedResolve = resolve; });
    worker.on('message', (m) => this.onMessage(slot, m, startedResolve));
    worker.on('error', (err) => {
      this.emit('job-error', null, new NinesError('NINES_ERR_WORKER', `worker ${index} failed: ${err.message}`, { worker: index, jobs: jobs.map((j) => j.name) }));
    });
    worker.on('exit', (code) => {
      startedResolve();
      if (slot.worker !== worker) return;
      slot.worker = null;
      if (this.stopping || slot.jobs.length === 0) return;
      const restartInMs = slot.backoff.next();
      this.emit('worker-exit', { worker: index, code, jobs: slot.jobs.map((j) => j.name), restartInMs });
      slot.restartTimer = setTimeout(() => { if (!this.stopping) this.spawn(index, slot.jobs); }, restartInMs);
    });
    worker.postMessage({ type: 'start', jobs });
    return started;
  }

  onMessage (slot, m, startedResolve) {
    switch (m.type) {
      case 'started': startedResolve(); break;
      case 'snapshot': {
        let snap;
        try {
          snap = require('../latency').decodeSnapshot(m.snapshot);
        } catch (err) {
          this.emit('job-error', m.job, toNinesError(err, 'NINES_ERR_BAD_HISTOGRAM'));
          return;
        }
        // a worker that keeps delivering intervals is healthy: the next death restarts quickly again
        slot.backoff.reset();
        this.emit('snapshot', m.job, snap, m.meta);
        break;
      }
      case 'values': this.emit('values', m.job, m.values); break;
      case 'error': this.emit('job-error', m.job, fromJSON(m.error)); break;
      case 'state': this.emit('state', m.job, m.state); break;
      case 'end':
        slot.jobs = slot.jobs.filter((j) => j.name !== m.job);
        this.emit('end', m.job);
        if (slot.jobs.length === 0 && slot.worker) slot.worker.postMessage({ type: 'stop' });
        break;
      default: break;
    }
  }

  /**
   * Starts a new interval for one job (or all), discarding what it recorded so far.
   * @param {string} [job]
   */
  reset (job) {
    if (this.mode === 'inline') {
      for (const [name, j] of this.inline) if (!job || job === name) j.reset();
      return;
    }
    for (const slot of this.slots) if (slot.worker) slot.worker.postMessage({ type: 'reset', job });
  }

  /** Terminates a worker abruptly (tests and fault drills): it is reported and restarted like a crash. */
  async killWorker (index) {
    const slot = this.slots[index];
    if (slot && slot.worker) await slot.worker.terminate();
  }

  /**
   * Stops every job: in-flight requests complete, each job's last interval is emitted, workers exit.
   * @param {number} [timeoutMs=10000] workers still running after this are terminated
   */
  async stop (timeoutMs = 10000) {
    this.stopping = true;
    if (this.mode === 'inline') {
      await Promise.allSettled([...this.inline.values()].map((j) => j.stop()));
      this.inline.clear();
      return;
    }
    await Promise.all(this.slots.map(async (slot) => {
      clearTimeout(slot.restartTimer);
      const w = slot.worker;
      if (!w) return;
      const exited = new Promise((resolve) => w.once('exit', resolve));
      w.postMessage({ type: 'stop' });
      const timer = setTimeout(() => w.terminate(), timeoutMs);
      await exited;
      clearTimeout(timer);
    }));
  }
}

module.exports = { WorkerPool };
