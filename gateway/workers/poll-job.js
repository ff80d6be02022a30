'use strict';

const { EventEmitter } = require('node:events');
const { NinesError, toNinesError } = require('../base/errors');

/**
 * One polling job in the process's shared worker pool, for callers that live on a shared event
 * loop (the Node-RED poll node, scripts): the job's timing is not disturbed by that loop, and the
 * loop only receives the values that passed the job's value gate, one latency summary per interval
 * and the device's health. The job uses its device's connections; it opens none of its own.
 *
 * Events: 'values' ({values, ts, polls}); 'summary' (design.md latency payload, seq contiguous across
 * worker restarts); 'health' (device health, at once and on every change); 'error' (NinesError, only
 * when someone listens: failures are already coalesced per interval by the job); 'end' (a bounded
 * job finished).
 */
class PollJob extends EventEmitter {
  /**
   * @param {import('../jobs/spec').JobSpec} spec built by jobs/spec.js, naming its device
   * @param {object} opts
   * @param {object} opts.device the device spec (devices/spec.js): added to the pool for as long as the job runs
   * @param {'worker'|'inline'} [opts.mode='worker']
   * @param {number|'auto'} [opts.workers='auto'] threads of the shared pool, if this job starts it
   * @param {string} [opts.gateway='node-red'] the `gateway` field of the summaries
   */
  constructor (spec, { device, mode = 'worker', workers = 'auto', gateway = 'node-red' } = {}) {
    super();
    if (!device || device.name !== spec.device) {
      throw new NinesError('NINES_ERR_INVALID_ARG', `a poll job needs the spec of its device ${JSON.stringify(spec.device)}`, { field: 'device' });
    }
    this.spec = spec;
    this.device = device;
    this.mode = mode;
    this.workers = workers;
    this.gateway = gateway;
    this.handle = null;
    this.errors = 0;
    this.listeners = null;
  }

  /** @returns {boolean} */
  get running () {
    return this.handle !== null;
  }

  /** Starts polling (a second call while running does nothing). */
  start () {
    if (this.handle) return;
    const { sharedPool } = require('./shared');
    this.handle = sharedPool({ mode: this.mode, workers: this.workers, gateway: this.gateway });
    const pool = this.handle.pool;
    const name = this.spec.name;
    const device = this.device.name;
    this.listeners = {
      summary: (job, payload) => { if (job === name) this.emit('summary', payload); },
      values: (job, v) => { if (job === name) this.emit('values', v); },
      'job-error': (job, err) => { if (job === name) this.report(err); },
      end: (job) => { if (job === name) this.emit('end'); },
      health: (d, h) => { if (d === device) this.emit('health', h); },
      'worker-exit': (info) => {
        if (info.jobs.includes(name)) this.report(new NinesError('NINES_ERR_WORKER', `poll worker exited with code ${info.code}; restarting in ${info.restartInMs} ms`, info));
      }
    };
    for (const [event, fn] of Object.entries(this.listeners)) pool.on(event, fn);
    try {
      pool.addDevice(this.device);
      pool.startJob(this.spec);
    } catch (err) {
      this.report(err);
    }
    const h = pool.health(device);
    if (h) this.emit('health', h);
  }

  report (err) {
    this.errors++;
    const e = toNinesError(err, 'NINES_ERR_WORKER');
    if (this.listenerCount('error') > 0) this.emit('error', e);
  }

  /** Starts a new interval and a fresh value gate, discarding what the current interval recorded. */
  reset () {
    if (this.handle) this.handle.pool.reset(this.spec.name);
  }

  /** Stops polling; the last interval's summary is emitted first. @returns {Promise<void>} */
  async stop () {
    const handle = this.handle;
    if (!handle) return;
    this.handle = null;
    // this run's listeners: a start() while this stop is under way installs its own
    const listeners = this.listeners;
    const pool = handle.pool;
    await pool.stopJob(this.spec.name);
    pool.removeDevice(this.device.name);
    for (const [event, fn] of Object.entries(listeners)) pool.removeListener(event, fn);
    await handle.release();
  }
}

/**
 * @param {import('../jobs/spec').JobSpec} spec
 * @param {{device: object, mode?: 'worker'|'inline', workers?: number|'auto', gateway?: string}} opts
 * @returns {PollJob}
 */
function createPollJob (spec, opts) {
  return new PollJob(spec, opts);
}

module.exports = { createPollJob, PollJob };
