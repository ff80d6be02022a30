'use strict';

const { EventEmitter } = require('node:events');
const { NinesError } = require('../base/errors');
const { parseTarget } = require('../drivers/target');
const { createClient, openClients, closeClients } = require('../drivers');
const { createOpSource } = require('../jobs/op-source');
const { buildJobSpec } = require('../jobs/spec');
const DL = require('../devices/limits');
const { startSchedule } = require('../scheduler');
const latency = require('../latency');
const { fellBehind, ErrorTally } = require('../latency/outcome');
const { isMainThread } = require('node:worker_threads');
const { runInWorker } = require('./in-worker');
const { pacedWarmup } = require('./probe');
const { settleYoungGeneration } = require('../base/settle-heap');

/**
 * Offered-load sweep (latency-method.md, "Methods from the field"): steps of offered rate, each held
 * for `stepMs` on `workers` connections, measured from the intended send times so queueing shows.
 * Per step: offered and achieved rate, min/mean/p50/p99/p99.9/max, errors and timeouts (and per
 * error code, with a sample message: `errorsByCode`), and how many planned requests could not even
 * be sent before the step ended (`unsent`: an overloaded device falls behind its plan; those
 * requests are reported, not hidden).
 *
 * It runs in a worker thread of its own by default (measure/in-worker.js), as a fixed-rate probe
 * does: there a wait for a send blocks the thread to its deadline. On the main thread it may not:
 * a sleeping wait is a 1 ms timer and a spinning one turns the event loop, and the lateness counts
 * as the device's. `nines sweep` against the simulator, 200 and 1,000/s, 3 s steps, main thread ->
 * worker: precision sleep, own p99 1.11-1.12 -> 0.09-0.14 ms and p50 0.60-0.68 -> 0.09-0.16 ms;
 * precision spin (the default), own p99 0.14-0.20 -> 0.015-0.033 ms.
 *
 * `warmup` requests go first and are not recorded: a closed loop on every connection, then paced
 * steps of its own (warmUp below).
 *
 * The saturation point is the first step where the achieved rate is below 95 % of the offered rate,
 * or p99 rises more than 2× over the previous step's while the device is at least half busy (see
 * saturationIndex). The response-time histograms of the steps just below and just above it are kept
 * for the report.
 */

/**
 * @param {object} opts
 * @param {string|object} opts.target
 * @param {string} [opts.command] @param {string} [opts.generator] @param {object|string} [opts.read] @param {object|string} [opts.write]
 * @param {Array<number|string>} opts.rates offered rates, requests/s or as written ("500/s"), ascending
 * @param {number} [opts.stepMs=5000]
 * @param {number} [opts.workers=20] connections
 * @param {number|string} [opts.timeoutMs] ms or a duration; default and ceiling devices/limits.js
 * @param {'burst'|'capped'|'skip'} [opts.policy='burst'] burst: an overloaded device sees the full offered load
 * @param {'spin'|'sleep'} [opts.precision='spin'] how each send waits for its intended time (jobs/limits.js PURPOSE_PRECISION)
 * @param {number} [opts.settleMs=0] pause between steps
 * @param {number} [opts.warmup=0] requests sent first and not recorded (above)
 * @param {boolean} [opts.inWorker=true] run in a worker thread of its own
 * @returns {EventEmitter & {promise: Promise<{steps: object[], saturation: object|null, below: object|null, above: object|null}>, stop: () => void}}
 *   events: 'step' (step result: the figures in ms, `histogram` the response-time histogram (ns),
 *   `hist` the same encoded, HdrHistogram V2 compressed base64, `thread` where its scheduler ran)
 */
function runSweep (opts) {
  const o = { stepMs: 5000, workers: 20, policy: 'burst', settleMs: 0, warmup: 0, inWorker: true, ...opts };
  o.target = parseTarget(o.target);
  if (!Array.isArray(o.rates) || o.rates.length === 0) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `sweep rates must be a non-empty list of rates; got ${JSON.stringify(o.rates)}`, { field: 'rates' });
  }
  // the one job-spec module reads and checks each step's job (a sweep is a measurement: one rate per
  // step): the operation, policy, rate and timeout, with their defaults
  const specs = o.rates.map((rate) => buildJobSpec({ name: 'sweep', target: o.target, command: o.command, generator: o.generator, read: o.read, write: o.write, ratePerSec: rate, policy: o.policy, precision: o.precision, timeoutMs: o.timeoutMs }, { purpose: 'measure' }));
  if (specs.some((s) => s.ratePerSec === Infinity)) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `sweep rates must be fixed rates (a sweep offers each as a load; "max" is none); got ${JSON.stringify(o.rates)}`, { field: 'rates' });
  }
  o.rates = specs.map((s) => s.ratePerSec);
  o.precision = specs[0].precision;
  o.timeoutMs = specs[0].timeoutMs === undefined ? DL.TIMEOUT_MS : specs[0].timeoutMs;
  const source = createOpSource(o, o.target);
  if (!(Number.isInteger(o.workers) && o.workers >= 1 && o.workers <= 1024)) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `sweep workers must be a whole number 1-1024; got ${JSON.stringify(o.workers)}`, { field: 'workers' });
  }
  if (!(Number.isInteger(o.warmup) && o.warmup >= 0)) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `warmup must be a whole number ≥ 0 (requests); got ${JSON.stringify(o.warmup)}`, { field: 'warmup' });
  }
  if (typeof o.inWorker !== 'boolean') {
    throw new NinesError('NINES_ERR_INVALID_ARG', `sweep inWorker must be true or false; got ${JSON.stringify(o.inWorker)}`, { field: 'inWorker' });
  }
  const ee = new EventEmitter();
  if (o.inWorker) {
    // relayed (an internal option): the worker's sweep sends each step's histogram encoded only,
    // decoded once here
    const w = runInWorker('sweep', { ...o, inWorker: false, relayed: true }, ee, reviveSweep);
    ee.promise = w.promise;
    ee.stop = w.stop;
    return ee;
  }
  const control = { stopped: false, schedule: null, taken: null };
  ee.stop = () => { control.stopped = true; if (control.schedule) control.schedule.stop(); stepTaken(control); };
  // relayed: the caller says when it has taken a step (in-worker.js, after the step's listeners ran)
  if (o.relayed) ee.taken = () => stepTaken(control);
  ee.promise = sweep(o, source, ee, control);
  return ee;
}

/** The caller has taken the last step: the next may start. @param {{taken: Function|null}} control */
function stepTaken (control) {
  const go = control.taken;
  control.taken = null;
  if (go) go();
}

async function sweep (o, source, ee, control) {
  const steps = [];
  const clients = await openClients(o.workers, () => createClient(o.target, { timeoutMs: o.timeoutMs, queueMax: 4 }));
  try {
    if (o.warmup > 0) await warmUp(o, source, clients, control);
    for (const rate of o.rates) {
      if (control.stopped) break;
      const workers = Math.min(o.workers, Math.max(1, Math.ceil(rate / 10))); // ≥ 10 req/s per connection
      const step = await runStep(o, source, clients.slice(0, workers), rate, o.stepMs, control);
      steps.push(step);
      if (o.relayed) {
        // The next step starts once the caller has taken this one. The caller's thread often shares
        // the CPU with this one, and what it does with a step (decoding the histogram, printing a
        // row, writing a .hgrm file; the first time, with its code not yet compiled, and before
        // this module loaded the latency modules itself, loading them: 40 ms) would otherwise run
        // during the next step and count as the device's: the second step of a sweep
        // read p99 0.24-0.73 ms at 500/s where the same rate later in the same sweep read 0.13 ms
        // (one core, beside the C server).
        const taken = new Promise((resolve) => { control.taken = resolve; });
        ee.emit('step', relayForm(step));
        if (!control.stopped) await taken;
      } else {
        ee.emit('step', step);
      }
      if (o.settleMs > 0) await new Promise((resolve) => setTimeout(resolve, o.settleMs));
    }
  } finally {
    await closeClients(clients);
  }
  return o.relayed ? { steps: steps.map(relayForm) } : sweepResult(steps);
}

/**
 * One step: `rate` on `clients` for `stepMs`, recorded and summed up. The warm-up's paced part runs
 * as steps too, so that every object a step makes (schedule, options, recorder, histograms,
 * summaries) has taken the shapes it will have, and the code compiled for them stays: an object of
 * another shape, or a field first set to another kind of value (a step's end sets some), makes V8
 * throw that code away (`--trace-deopt`: "wrong map" and "code dependencies" in the scheduler, the
 * recorder and the histogram at the first two steps' starts), and at a low rate it was compiled
 * again only a step or two later, inside them.
 * @returns {Promise<object>} the step's figures (ms), its histogram (`histogram`, and `hist` encoded)
 */
async function runStep (o, source, clients, rate, stepMs, control) {
  const recorder = new latency.Recorder({ policy: o.policy });
  const failures = new ErrorTally();
  const schedule = startSchedule({
    clients,
    nextOp: source.nextOp,
    ratePerSec: rate,
    durationMs: stepMs,
    policy: o.policy,
    precision: o.precision,
    timeoutMs: o.timeoutMs,
    recorder,
    onError: (err) => failures.add(err)
  });
  control.schedule = schedule;
  // nothing is sent after the step ends; what was planned but could not be sent is counted
  const cut = setTimeout(() => schedule.stop(), stepMs);
  const out = await schedule.done;
  clearTimeout(cut);
  const snap = recorder.snapshot();
  const offered = Math.floor(rate * stepMs / 1000);
  const completed = snap.ok + snap.errors + snap.timeouts;
  const elapsedS = Number(out.endNs - out.startNs) / 1e9;
  const s = latency.summarize(snap.response);
  return {
    label: source.label,
    offered: rate,
    workers: clients.length,
    precision: o.precision,
    thread: isMainThread ? 'main' : 'worker',
    achieved: completed / Math.max(elapsedS, stepMs / 1000),
    planned: offered,
    completed,
    unsent: Math.max(0, offered - completed - snap.skipped),
    ok: snap.ok,
    errors: snap.errors,
    timeouts: snap.timeouts,
    errorsByCode: failures.toJSON(),
    skipped: snap.skipped,
    min: s.min,
    mean: s.mean,
    p50: s.p50,
    p99: s.p99,
    p99_9: s.p99_9,
    max: s.max,
    service: latency.summarize(snap.service),
    lag: latency.summarize(snap.lag),
    hist: latency.encodeHistogram(snap.response),
    histogram: snap.response
  };
}

/**
 * The warm-up: `o.warmup` requests in a closed loop on every connection, then, paced and as steps
 * (runStep), a short slow one and up to as many requests again (pacedWarmup) at half the rate the
 * closed loop achieved, never above the sweep's top rate. None of it is recorded.
 *
 * V8 compiles the paced code (the waits, the pacing) only after thousands of paced requests, and
 * throws code away when it meets a path or an object shape it has not seen. Traced on one core
 * beside the C server (`--trace-opt --trace-deopt`, steps of 100 to 5,000/s, 10,000 requests of
 * warm-up): paced as one run at the first step's rate, 44-50 functions were compiled during the
 * 500/s step and 12-20 during the 1,000/s one, and the 500/s step's p99 was 1.39-1.85 ms; with
 * this warm-up, 0-2 in any step, and 0.19 ms. At half its closed-loop rate the device is never
 * pushed past half its capacity by the warm-up.
 */
async function warmUp (o, source, clients, control) {
  const closed = startSchedule({ clients, nextOp: source.nextOp, count: o.warmup, timeoutMs: o.timeoutMs, precision: o.precision, recorder: new latency.Recorder() });
  control.schedule = closed;
  const out = await closed.done;
  if (control.stopped) return;
  // nothing in flight, nothing late: start-up's survivors are promoted now, not in a step
  settleYoungGeneration();
  const closedRate = out.sent / (Number(out.endNs - out.startNs) / 1e9);
  const top = Math.max(...o.rates);
  const rate = closedRate > 0 && Number.isFinite(closedRate) ? Math.min(top, closedRate * WARMUP_SHARE) : o.rates[0];
  // first a short step slow enough that its sends wait on timers (gaps of WARMUP_SLOW_GAP_MS and
  // more: steps at low rates do), then two, each as long as half the paced requests take: the last
  // starts where a measured step starts, after another step's end (runStep)
  const slow = Math.min(rate, 1000 / WARMUP_SLOW_GAP_MS);
  if (!control.stopped) await runStep(o, source, clients, slow, WARMUP_SLOW_MS, control);
  const halfMs = pacedWarmup(o.warmup, rate) / 2 / rate * 1000;
  for (let i = 0; i < 2 && !control.stopped; i++) await runStep(o, source, clients, rate, halfMs, control);
}

/** The paced warm-up's rate, as a share of the rate the closed-loop warm-up achieved */
const WARMUP_SHARE = 0.5;
/** The warm-up's slow step: gaps long enough for a timer (scheduler/wait.js waits 2 ms and more on one), for this long */
const WARMUP_SLOW_GAP_MS = 5;
const WARMUP_SLOW_MS = 300;

/** The sweep's result from its steps: the saturation point and the steps either side of it. */
function sweepResult (steps) {
  const idx = saturationIndex(steps);
  return {
    steps,
    saturation: idx < 0 ? null : steps[idx],
    below: idx > 0 ? steps[idx - 1] : null,
    above: idx < 0 ? null : steps[idx]
  };
}

/** A step leaves its worker without its histogram object: `hist` carries it, in a tenth of the bytes. */
function relayForm (step) {
  return { ...step, histogram: undefined };
}

/** The caller's side of relayForm (in-worker.js revive): each step gets its histogram back. */
function reviveSweep (name, payload) {
  const revive = (step) => ({ ...step, histogram: latency.decodeHistogram(step.hist) });
  return name === 'step' ? revive(payload) : sweepResult(payload.steps.map(revive));
}

/**
 * Utilisation below which a p99 rise is not taken for saturation: half the capacity the step's own
 * median service time allows.
 */
const P99_RULE_MIN_UTILISATION = 0.5;

/**
 * How busy a step kept its connections, from its own measurements: offered rate × median service
 * time / connections. A device serving one request at a time for S ms can take at most 1000 / S
 * requests per second on each connection.
 * @param {{offered: number, workers?: number, service?: {p50?: number|null}}} step
 * @returns {number|null} 0…, or null when the step carries no service time
 */
function utilisation (step) {
  const serviceMs = step.service && step.service.p50;
  if (!(serviceMs > 0) || !(step.workers > 0)) return null;
  return step.offered * serviceMs / 1000 / step.workers;
}

/**
 * The first step where achieved < 95 % of offered, or p99 > 2× the previous step's p99; −1 if none.
 *
 * Two kinds of p99 rise are noise, not saturation:
 * - a rise below `minRiseMs`: on a fast local device p99s of tens of microseconds double from
 *   scheduling noise alone;
 * - a rise at a step that kept its connections less than half busy (utilisation(), from the step's
 *   median service time). Requests at a fixed rate arrive at least two median service times apart
 *   on each connection, so the device is idle when most of them arrive and cannot queue them; a p99
 *   rise there comes from the measuring machine (a loaded CPU, a GC pause, a late timer), as on a
 *   shared CI host, where it once made a 5 ms device look saturated at 60/s. Such a step is still
 *   saturated if it fails to hold its rate.
 * Steps without service times (older results) get the p99 rule at every utilisation.
 * @param {Array<{offered: number, achieved: number, p99: number|null, workers?: number, service?: {p50?: number|null}}>} steps
 * @param {number} [minRiseMs=0.5]
 * @returns {number}
 */
function saturationIndex (steps, minRiseMs = 0.5) {
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i];
    if (fellBehind(s.achieved, s.offered)) return i;
    const prev = i > 0 ? steps[i - 1].p99 : null;
    const rho = utilisation(s);
    const busy = rho === null || rho >= P99_RULE_MIN_UTILISATION;
    if (busy && prev > 0 && s.p99 > 2 * prev && s.p99 - prev > minRiseMs) return i;
  }
  return -1;
}

module.exports = { runSweep, saturationIndex, utilisation, P99_RULE_MIN_UTILISATION };
