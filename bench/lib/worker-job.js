'use strict';

/**
 * A nines gateway job run by a WorkerPool (in a worker thread, or inline on this thread) for a
 * bounded time, with its interval snapshots merged. The first interval is dropped as warm-up
 * (connecting, JIT); the rest give the figures. In closed loop the job's response time is its
 * service time, taken by the driver from just before the write to the complete reply.
 */

const path = require('node:path');
const { decode } = require('./hist');

const ROOT = path.join(__dirname, '..', '..');

/**
 * @param {object} o
 * @param {'worker'|'inline'} o.mode
 * @param {string} o.target e.g. modbus+tcp://127.0.0.1:5020?unitId=1
 * @param {object} o.job the op and rate: {read} or {command}, ratePerSec (Infinity = closed loop), connections
 * @param {number} o.durationMs measured time (after the warm-up interval)
 * @param {number} o.intervalMs snapshot interval; the first one is the warm-up
 * @param {() => void} [o.onStarted] called once the job runs (question 5 starts its load here)
 * @returns {Promise<{hist: object, lag: object, count: number, errors: number, timeouts: number, reqPerSec: number}>}
 */
async function runPoolJob ({ mode, target, job, durationMs, intervalMs, onStarted }) {
  const { WorkerPool, buildDeviceSpec, buildJobSpec } = require(ROOT);
  // hlog: the summaries carry the encoded service and lag histograms too, encoded in the worker
  const pool = new WorkerPool({ mode, workers: 1, hlog: true });
  const summaries = [];
  const errors = [];
  const device = buildDeviceSpec({ name: 'bench-device', target, timeoutMs: 1000, maxConnections: job.connections || 1 });
  const spec = buildJobSpec({
    name: 'bench',
    connections: 1,
    policy: 'capped',
    ...job,
    intervalMs,
    durationMs: durationMs + intervalMs
  }, { device, purpose: 'measure' });
  const ended = new Promise((resolve) => pool.on('end', resolve));
  pool.on('summary', (name, payload, hlog) => summaries.push({ payload, hlog }));
  pool.on('job-error', (name, err) => errors.push(err));
  // bounded in time: a job that cannot keep its rate plans past its duration; stop it after a grace period
  let hardStop;
  const limit = new Promise((resolve) => { hardStop = setTimeout(resolve, durationMs + intervalMs + 15000); });
  pool.addDevice(device);
  pool.startJob(spec);
  if (onStarted) onStarted();
  await Promise.race([ended, limit, new Promise((resolve) => pool.once('worker-exit', resolve))]);
  clearTimeout(hardStop);
  await pool.stop(5000);
  const measured = summaries.slice(1).filter((s) => s.payload.count > 0);
  if (measured.length === 0) {
    throw new Error(`the ${mode} job recorded nothing after its warm-up interval${errors.length ? ': ' + errors[0].message : ''}`);
  }
  const tagged = (s, tag) => decode(s.hlog.find((i) => i.tag === tag).encoded);
  const hist = decode(measured[0].payload.hist);
  const lag = tagged(measured[0], 'lag');
  for (const s of measured.slice(1)) {
    hist.add(decode(s.payload.hist));
    lag.add(tagged(s, 'lag'));
  }
  const sum = (k) => measured.reduce((a, s) => a + (s.payload[k] || 0), 0);
  const spanMs = measured[measured.length - 1].payload.end - measured[0].payload.start;
  return { hist, lag, count: sum('count'), errors: sum('errors') + sum('timeouts'), timeouts: sum('timeouts'), reqPerSec: sum('count') / (spanMs / 1000) };
}

module.exports = { runPoolJob };
