'use strict';

const { EventEmitter } = require('node:events');
const { NinesError } = require('../base/errors');
const { parseTarget } = require('../drivers/target');
const { createClient, openClients, closeClients } = require('../drivers');
const { createOpSource } = require('../jobs/op-source');
const { buildJobSpec } = require('../jobs/spec');
const { startSchedule } = require('../scheduler');

/**
 * Offered-load sweep (latency-method.md, "Methods from the field"): steps of offered rate, each held
 * for `stepMs` on `workers` connections, measured from the intended send times so queueing shows.
 * Per step: offered and achieved rate, min/mean/p50/p99/p99.9/max, errors, timeouts, and how many
 * planned requests could not even be sent before the step ended (`unsent`: an overloaded device
 * falls behind its plan; those requests are reported, not hidden).
 *
 * The saturation point is the first step where the achieved rate is below 95 % of the offered rate,
 * or p99 rises more than 2× over the previous step's. The response-time histograms of the steps just
 * below and just above it are kept for the report.
 */

/**
 * @param {object} opts
 * @param {string|object} opts.target
 * @param {string} [opts.command] @param {string} [opts.generator] @param {object|string} [opts.read] @param {object|string} [opts.write]
 * @param {number[]} opts.rates offered rates, requests/s, ascending
 * @param {number} [opts.stepMs=5000]
 * @param {number} [opts.workers=20] connections
 * @param {number} [opts.timeoutMs=1000]
 * @param {'burst'|'capped'|'skip'} [opts.policy='burst'] burst: an overloaded device sees the full offered load
 * @param {number} [opts.settleMs=0] pause between steps
 * @returns {EventEmitter & {promise: Promise<{steps: object[], saturation: object|null, below: object|null, above: object|null}>, stop: () => void}}
 *   events: 'step' (step result)
 */
function runSweep (opts) {
  const o = { stepMs: 5000, workers: 20, timeoutMs: 1000, policy: 'burst', settleMs: 0, ...opts };
  o.target = parseTarget(o.target);
  // the one job-spec module checks the operation and policy (a sweep is a measurement: rates vary per step)
  buildJobSpec({ name: 'sweep', target: o.target, command: o.command, generator: o.generator, read: o.read, write: o.write, ratePerSec: 1, policy: o.policy, timeoutMs: o.timeoutMs }, { purpose: 'measure' });
  const source = createOpSource(o, o.target);
  if (!Array.isArray(o.rates) || o.rates.length === 0 || o.rates.some((r) => !(r > 0 && Number.isFinite(r)))) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `sweep rates must be a non-empty list of positive numbers; got ${JSON.stringify(o.rates)}`, { field: 'rates' });
  }
  if (!(Number.isInteger(o.workers) && o.workers >= 1 && o.workers <= 1024)) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `sweep workers must be a whole number 1-1024; got ${JSON.stringify(o.workers)}`, { field: 'workers' });
  }
  const ee = new EventEmitter();
  const control = { stopped: false, schedule: null };
  ee.stop = () => { control.stopped = true; if (control.schedule) control.schedule.stop(); };
  ee.promise = sweep(o, source, ee, control);
  return ee;
}

async function sweep (o, source, ee, control) {
  const latency = require('../latency');
  const steps = [];
  const clients = await openClients(o.workers, () => createClient(o.target, { timeoutMs: o.timeoutMs, queueMax: 4 }));
  try {
    for (const rate of o.rates) {
      if (control.stopped) break;
      const recorder = new latency.Recorder({ policy: o.policy });
      const workers = Math.min(o.workers, Math.max(1, Math.ceil(rate / 10))); // ≥ 10 req/s per connection
      const schedule = startSchedule({
        clients: clients.slice(0, workers),
        nextOp: source.nextOp,
        ratePerSec: rate,
        durationMs: o.stepMs,
        policy: o.policy,
        timeoutMs: o.timeoutMs,
        recorder
      });
      control.schedule = schedule;
      // nothing is sent after the step ends; what was planned but could not be sent is counted
      const cut = setTimeout(() => schedule.stop(), o.stepMs);
      const out = await schedule.done;
      clearTimeout(cut);
      const snap = recorder.snapshot();
      const offered = Math.floor(rate * o.stepMs / 1000);
      const completed = snap.ok + snap.errors + snap.timeouts;
      const elapsedS = Number(out.endNs - out.startNs) / 1e9;
      const s = latency.summarize(snap.response);
      const step = {
        offered: rate,
        workers,
        achieved: completed / Math.max(elapsedS, o.stepMs / 1000),
        planned: offered,
        completed,
        unsent: Math.max(0, offered - completed - snap.skipped),
        ok: snap.ok,
        errors: snap.errors,
        timeouts: snap.timeouts,
        skipped: snap.skipped,
        min: s.min,
        mean: s.mean,
        p50: s.p50,
        p99: s.p99,
        p99_9: s.p99_9,
        max: s.max,
        service: latency.summarize(snap.service),
        lag: latency.summarize(snap.lag),
        histogram: snap.response
      };
      steps.push(step);
      ee.emit('step', step);
      if (o.settleMs > 0) await new Promise((resolve) => setTimeout(resolve, o.settleMs));
    }
  } finally {
    await closeClients(clients);
  }
  const idx = saturationIndex(steps);
  return {
    steps,
    saturation: idx < 0 ? null : steps[idx],
    below: idx > 0 ? steps[idx - 1] : null,
    above: idx < 0 ? null : steps[idx]
  };
}

/**
 * The first step where achieved < 95 % of offered, or p99 > 2× the previous step's p99; −1 if none.
 * A p99 rise must also exceed `minRiseMs`: on a fast local device p99s of tens of microseconds double
 * from scheduling noise alone, which is not saturation.
 * @param {Array<{offered: number, achieved: number, p99: number|null}>} steps
 * @param {number} [minRiseMs=0.5]
 * @returns {number}
 */
function saturationIndex (steps, minRiseMs = 0.5) {
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i];
    if (s.achieved < 0.95 * s.offered) return i;
    const prev = i > 0 ? steps[i - 1].p99 : null;
    if (prev > 0 && s.p99 > 2 * prev && s.p99 - prev > minRiseMs) return i;
  }
  return -1;
}

module.exports = { runSweep, saturationIndex };
