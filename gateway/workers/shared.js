'use strict';

const { WorkerPool } = require('./pool');

/**
 * The one worker pool of a process, for callers that come and go (Node-RED's device and poll nodes,
 * which are created and closed on every deploy). It starts on first use and stops when its last
 * user releases it. Measured before it existed: each poll node started its own pool, one thread
 * and about 15 MB per node (40 nodes: 47 threads, +596 MB).
 *
 * The settings of the first user win (a running pool cannot change its thread count); later users
 * get the running pool, and `settings` on the handle says what it runs with.
 */

/**
 * One pool per mode: `inline` exists for comparisons (the same poll on the main loop), and its
 * devices are its own.
 * @type {Record<'worker'|'inline', {pool: WorkerPool, users: number, settings: object}|null>}
 */
const current = { worker: null, inline: null };

/**
 * Acquires the process's pool.
 * @param {object} [opts]
 * @param {number|'auto'} [opts.workers='auto'] threads (cores − 1 by default)
 * @param {string} [opts.gateway='node-red'] the `gateway` field of summaries
 * @param {'worker'|'inline'} [opts.mode='worker']
 * @returns {{pool: WorkerPool, settings: {workers: number}, release: () => Promise<void>}}
 */
function sharedPool ({ workers = 'auto', gateway = 'node-red', mode = 'worker' } = {}) {
  if (current[mode] === null) {
    const pool = new WorkerPool({ mode, workers, gateway });
    current[mode] = { pool, users: 0, settings: { workers: pool.workerCount, mode } };
  }
  const entry = current[mode];
  entry.users++;
  let released = false;
  return {
    pool: entry.pool,
    settings: entry.settings,
    release () {
      if (released) return Promise.resolve();
      released = true;
      entry.users--;
      if (entry.users > 0) return Promise.resolve();
      if (current[mode] === entry) current[mode] = null; // a user arriving now gets a new pool
      return entry.pool.stop();
    }
  };
}

module.exports = { sharedPool };
