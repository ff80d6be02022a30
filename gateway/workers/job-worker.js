'use strict';

/**
 * Worker-thread side of the pool: runs the jobs it is given with the very same Job code as inline
 * mode, and posts plain data to the main thread. Histograms cross encoded (latency/encodeSnapshot),
 * errors as {code, message, details}: a posted Error keeps only message and stack.
 * The worker never waits on the main thread: it only posts.
 */

const { parentPort, workerData } = require('node:worker_threads');
const { monitorEventLoopDelay } = require('node:perf_hooks');
const { Job } = require('../jobs/job');
const { toNinesError } = require('../base/errors');
const { encodeSnapshot } = require('../latency');

const jobs = new Map();
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();

function post (msg) {
  parentPort.postMessage(msg);
}

function startJob (spec) {
  const job = new Job(spec, { intervalMs: workerData.intervalMs });
  jobs.set(spec.name, job);
  job.on('snapshot', (snap, meta) => {
    // the worker's own event-loop delay over the interval, so a subscriber can tell a slow device from a busy poller
    meta.loopDelayP99Ms = loopDelay.count ? Math.max(0, loopDelay.percentile(99) / 1e6 - 10) : 0;
    loopDelay.reset();
    post({ type: 'snapshot', job: spec.name, snapshot: encodeSnapshot(snap), meta });
  });
  job.on('values', (v) => post({ type: 'values', job: spec.name, values: v }));
  job.on('job-error', (err) => post({ type: 'error', job: spec.name, error: toNinesError(err).toJSON() }));
  job.on('state', (s) => post({ type: 'state', job: spec.name, state: s }));
  job.on('end', () => { jobs.delete(spec.name); post({ type: 'end', job: spec.name }); });
  job.start();
}

parentPort.on('message', async (m) => {
  try {
    if (m.type === 'start') {
      for (const spec of m.jobs) startJob(spec);
      post({ type: 'started', jobs: m.jobs.map((j) => j.name) });
    } else if (m.type === 'reset') {
      for (const [name, job] of jobs) if (!m.job || m.job === name) job.reset();
    } else if (m.type === 'stop') {
      await Promise.allSettled([...jobs.values()].map((j) => j.stop()));
      jobs.clear();
      loopDelay.disable();
      post({ type: 'stopped' });
      parentPort.close();
    }
  } catch (err) {
    post({ type: 'error', job: m.job || null, error: toNinesError(err, 'NINES_ERR_WORKER').toJSON() });
  }
});
