'use strict';

const { EventEmitter } = require('node:events');
const { WorkerPool } = require('../workers/pool');
const { NinesError, toNinesError } = require('../base/errors');

/**
 * One polling job with its own worker thread, for callers that live on a shared event loop (the
 * Node-RED poll node): the job's timing is not disturbed by that loop, and the loop only receives
 * the values that passed the job's value gate and one latency summary per interval.
 *
 * Events: 'values' ({values, ts, polls}); 'summary' (design.md latency payload, seq contiguous across
 * restarts of the worker); 'error' (NinesError, only when someone listens: failures are already
 * coalesced per interval by the job); 'end' (a bounded job finished).
 */
class PollJob extends EventEmitter {
  /**
   * @param {object} spec job spec (gateway/jobs/job.js): {name, target, command|generator|read|write,
   *   ratePerSec, connections, policy, count, durationMs, values, device}
   * @param {object} [opts]
   * @param {'worker'|'inline'} [opts.mode='worker']
   * @param {number} [opts.intervalMs=10000]
   * @param {string} [opts.gateway='node-red'] the `gateway` field of the summaries
   */
  constructor (spec, { mode = 'worker', intervalMs = 10000, gateway = 'node-red' } = {}) {
    super();
    this.spec = { name: 'poll', ...spec };
    this.mode = mode;
    this.intervalMs = intervalMs;
    this.gateway = gateway;
    this.pool = null;
    this.seq = 0;
    this.errors = 0;
  }

  /** @returns {boolean} */
  get running () {
    return this.pool !== null;
  }

  /** Starts polling (a second call while running does nothing). @returns {Promise<void>} */
  start () {
    if (this.pool) return Promise.resolve();
    const pool = new WorkerPool({ mode: this.mode, workers: 1, intervalMs: this.intervalMs });
    this.pool = pool;
    pool.on('values', (job, v) => this.emit('values', v));
    pool.on('snapshot', (job, snap, meta) => {
      const { summaryPayload } = require('./payload');
      let payload;
      try {
        payload = summaryPayload(snap, this.seq++, meta, { gateway: this.gateway, job: this.spec.name });
      } catch (err) {
        this.report(err);
        return;
      }
      this.emit('summary', payload);
    });
    pool.on('job-error', (job, err) => this.report(err));
    pool.on('worker-exit', (info) => this.report(new NinesError('NINES_ERR_WORKER', `poll worker exited with code ${info.code}; restarting in ${info.restartInMs} ms`, info)));
    pool.on('end', () => { this.emit('end'); });
    return pool.start([this.spec]).catch((err) => { this.report(err); });
  }

  report (err) {
    this.errors++;
    const e = toNinesError(err, 'NINES_ERR_WORKER');
    if (this.listenerCount('error') > 0) this.emit('error', e);
  }

  /** Starts a new interval, discarding what the current one recorded. */
  reset () {
    if (this.pool) this.pool.reset();
  }

  /** Stops polling; the last interval's summary is emitted first. @returns {Promise<void>} */
  async stop () {
    const pool = this.pool;
    if (!pool) return;
    this.pool = null;
    await pool.stop();
    pool.removeAllListeners();
  }
}

/**
 * @param {object} spec
 * @param {{mode?: 'worker'|'inline', intervalMs?: number, gateway?: string}} [opts]
 * @returns {PollJob}
 */
function createPollJob (spec, opts) {
  return new PollJob(spec, opts);
}

module.exports = { createPollJob, PollJob };
