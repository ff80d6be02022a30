'use strict';

const { EventEmitter } = require('node:events');
const { isMainThread } = require('node:worker_threads');
const { NinesError } = require('../base/errors');
const { parseTarget, isMbap } = require('../drivers/target');
const { createClient, openClients, closeClients } = require('../drivers');
const { ReconnectEachClient } = require('../drivers/reconnect-each');
const { tlsAsText } = require('../drivers/tls-options');
const { createOpSource } = require('../jobs/op-source');
const { buildJobSpec } = require('../jobs/spec');
const DL = require('../devices/limits');
const { startSchedule } = require('../scheduler');
const { runInWorker } = require('./in-worker');
const { fellBehind, ErrorTally } = require('../latency/outcome');
const { settleYoungGeneration } = require('../base/settle-heap');
const { MAX_INFLIGHT } = require('../drivers/modbus/client-options');
const { parseDuration } = require('../base/quantities');

/**
 * The paced part of a fixed-rate warm-up (at most the warm-up asked for): at least a second of
 * the schedule, and at least PACED_WARMUP_MIN requests while that takes at most
 * PACED_WARMUP_MAX_S. V8 compiles the paced code (the waits, the pacing, the reply path as the
 * pacing calls it) only after several thousand paced requests, on a thread of its own that, with
 * one core, takes it from the probe's for 1-5 ms at a time. One core, the C server beside it,
 * --trace-opt: at 10,000/s the pacing compiled 7,500 paced requests in (6.8 ms); at 1,000/s, after
 * a second paced, a dozen functions (30 ms) compiled in the measured run's first two seconds, and
 * p99 came out 4.3x the C client's
 */
const PACED_WARMUP_MIN = 10000;
const PACED_WARMUP_MAX_S = 5;

/**
 * The least time between progress reports while a run is measured, when the caller asks for them
 * (progressMs). Each report wakes the caller's thread, which on one core takes the CPU from the
 * probe's: at 10,000/s on one core, beside the C server, p99.9 read 253-274 us with a report every
 * 250 ms, 146-223 us every second and 89-102 us with none (the C client's own 56-67 us; 3
 * interleaved rounds of 5 s, 2026-11-26). So a run reports only as it starts and ends unless asked.
 */
const PROGRESS_MIN_MS = 100;

/**
 * Reads a progressMs option.
 * @param {number|string} value ms or a duration ("1s")
 * @param {string} [field='progressMs'] the name the error gives it
 * @returns {number} ms: 0 (as each run starts and ends only) or at least PROGRESS_MIN_MS
 * @throws {NinesError} NINES_ERR_INVALID_ARG
 */
function progressInterval (value, field = 'progressMs') {
  const ms = parseDuration(value, field);
  if (ms !== 0 && ms < PROGRESS_MIN_MS) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `${field} must be 0 (a report as each run starts and ends only) or at least ${PROGRESS_MIN_MS} ms; got ${JSON.stringify(value)}`, { field, value });
  }
  return ms;
}

/**
 * @param {number} warmup the warm-up asked for, requests
 * @param {number} ratePerSec the fixed rate
 * @returns {number} how many of them go at the paced rate (the rest go first, in a closed loop)
 */
function pacedWarmup (warmup, ratePerSec) {
  const paced = Math.max(Math.ceil(ratePerSec), Math.min(PACED_WARMUP_MIN, Math.ceil(ratePerSec * PACED_WARMUP_MAX_S)));
  return Math.min(warmup, paced);
}

/**
 * The Brainboxes latency test as a function: for each connection count (1, 2, 4, 8…) open that many
 * connections to the device, run `count` requests split over them (or run for `durationMs`), each
 * connection strictly one request at a time, and return per run the percentile summary, the `.hgrm`
 * text and the encoded histogram. Closed loop by default, as the vendor's tests; `ratePerSec` makes
 * it a fixed-rate test measured from the intended send times.
 *
 * `inWorker: true` runs the whole probe in a worker thread, so a Node-RED flow or anything else on
 * the caller's event loop neither disturbs the measurement nor is disturbed by it. A fixed rate runs
 * there by default: on the main thread the scheduler waits with 1 ms timers (it must not block the
 * caller's loop), which holds only about 800 requests/s per connection, where a worker holds
 * thousands.
 *
 * Pipelining (Modbus TCP): `inflight: [k…]` runs each connection count again with k requests in
 * flight per connection: each connection is opened with maxInflight k and carries k lanes, each lane
 * still one request at a time, so n connections at k in flight keep n × k requests outstanding. A
 * device that turns out to take one request at a time makes its client fall back to one in flight
 * (drivers/modbus/pipeline-guard.js); the run then says so (`inflightEffective` below `inflight`).
 *
 * A fixed rate that was not held is said, never hidden: a run whose achieved rate is below 95 % of
 * the offered rate is marked `fellBehind` (the sweep's saturation rule). Every run carries its
 * failures per error code with a sample message (`errorsByCode`). An ASCII generator sent to a
 * model it is not for (the device's `$AAM` name) is refused before the run.
 */

/**
 * @typedef {object} ProbeOptions
 * @property {string|object} target URL (ascii://, modbus+tcp://, modbus+rtu://, modbus+rtutcp://) or parsed target
 * @property {string} [command] ASCII command
 * @property {string} [generator] ASCII generator name (`@AA`, `@AA(Data)`, `#AAN`, `#AA1N0F`, `#AA1NVVData`)
 * @property {object|string} [read] Modbus read op or "fc:address:quantity"
 * @property {object|string} [write] Modbus write op
 * @property {number[]} [connections=[1]] connection counts, one run each
 * @property {number[]} [inflight=[1]] requests in flight per connection (Modbus TCP only above 1), one run
 *   per connection count and value
 * @property {number} [count] requests per run (split over its connections)
 * @property {number} [durationMs] run length when no count is given
 * @property {number} [warmup=0] requests per run sent first and not recorded
 * @property {number|string} [ratePerSec] Infinity or "max" (closed loop, the job-spec default), or a rate
 *   ("1000/s"), read by jobs/spec.js
 * @property {'burst'|'capped'|'skip'} [policy='capped']
 * @property {'spin'|'sleep'} [precision='spin'] how each send waits for its intended time (a measurement
 *   spins the last stretch: jobs/limits.js PURPOSE_PRECISION)
 * @property {number|string} [timeoutMs] ms or a duration ("500ms"); default and ceiling devices/limits.js
 * @property {number} [connectTimeoutMs] default devices/limits.js
 * @property {number|string} [progressMs=0] ms or a duration ("1s") between 'progress' events while a run is
 *   measured, at least PROGRESS_MIN_MS; 0 (the default): only as each run starts and ends, since each
 *   report takes the caller's thread, and on one core the probe's CPU
 * @property {boolean} [inWorker] run in a worker thread; default: yes for a fixed rate, no for closed loop
 * @property {boolean} [reconnectEach=false] open a new connection for every request (its cost shows in service time)
 * @property {{ca?: string|Buffer, cert?: string|Buffer, key?: string|Buffer, servername?: string}} [tls] modbus+tls: the
 *   PEM texts (drivers/tls-options.js)
 */

/**
 * @typedef {object} ProbeRunResult
 * @property {number} connections
 * @property {number} inflight requests in flight per connection asked for (lanes = connections × inflight)
 * @property {number} inflightEffective the least any connection carried at the end: below inflight when the
 *   device did not serve pipelined requests and the client fell back
 * @property {string} label operation label (`@AA`, `fc3-0x10`…)
 * @property {string} model device model for file names (`ED-588`, `modbus`)
 * @property {string} name file-name stem, e.g. `ED-588-@AA-1x`
 * @property {string} policy `closed-loop`, `capped`, `burst` or `skip`
 * @property {'spin'|'sleep'} precision how the sends waited for their intended times
 * @property {number} count planned requests
 * @property {number} ok
 * @property {number} errors
 * @property {number} timeouts
 * @property {number} skipped
 * @property {number} elapsedMs
 * @property {number} ratePerSec achieved requests per second: (ok + errors + timeouts) / elapsed; skipped slots were not sent
 * @property {number|null} offered the fixed rate asked for, requests/s; null for closed loop
 * @property {boolean} fellBehind achieved < 95 % of offered: the device (or the machine) could not keep the rate
 * @property {Record<string, {count: number, sample: string}>} errorsByCode failures (errors and timeouts) per
 *   error code, most frequent first, with the first message of each
 * @property {'main'|'worker'} thread where the run's scheduler ran
 * @property {number|null} cpuPct the CPU the whole process used over the measured run (every thread:
 *   the probe's, the caller's, Node's own), % of one core: what the run's waits cost (precision spin
 *   spins); null for a run that never started measuring
 * @property {object} summary response-time summary in ms (count, min, mean, stddev, p50, p90, p99, p99_9, p99_99, max)
 * @property {object} service service-time summary in ms
 * @property {object} lag dispatch-lag summary in ms
 * @property {string} hgrm percentile distribution text (ms)
 * @property {string} hist HdrHistogram V2 compressed base64 of response time (ns)
 * @property {number} startMs
 * @property {number} endMs
 */

/**
 * Starts a probe.
 * @param {ProbeOptions} opts
 * @returns {EventEmitter & {promise: Promise<{runs: ProbeRunResult[]}>, stop: () => void}}
 *   events: 'progress' ({connections, inflight, done, total, elapsedMs}: as each run starts (in a
 *   worker thread, before its warm-up; on the caller's thread, as its measured part starts) and
 *   ends, and every progressMs between when asked for), 'run' (ProbeRunResult)
 */
function runProbe (opts) {
  const o = checkProbeOptions(opts);
  const ee = new EventEmitter();
  if (o.inWorker) {
    const w = runInWorker('probe', { ...o, inWorker: false }, ee);
    ee.promise = w.promise;
    ee.stop = w.stop;
    return ee;
  }
  const control = { stopped: false, schedule: null };
  ee.stop = () => { control.stopped = true; if (control.schedule) control.schedule.stop(); };
  ee.promise = probeInline(o, ee, control);
  return ee;
}

function checkProbeOptions (opts) {
  const fail = (field, value, rule) => {
    throw new NinesError('NINES_ERR_INVALID_ARG', `probe ${field} ${rule}; got ${JSON.stringify(value)}`, { field, value });
  };
  if (!opts || typeof opts !== 'object') fail('options', opts, 'must be an object');
  const o = { connections: [1], inflight: [1], warmup: 0, policy: 'capped', connectTimeoutMs: DL.CONNECT_TIMEOUT_MS, ...opts };
  o.target = parseTarget(o.target);
  // the one job-spec module reads and checks the operation, rate, policy, timeout and bounds (with
  // their defaults), before any connection is opened
  const spec = buildJobSpec({
    name: 'probe', target: o.target, command: o.command, generator: o.generator, read: o.read, write: o.write,
    ratePerSec: o.ratePerSec, policy: o.policy, precision: o.precision, count: o.count, durationMs: o.count === undefined ? o.durationMs : undefined, timeoutMs: o.timeoutMs
  }, { purpose: 'measure' });
  o.policy = spec.policy === 'closed' ? o.policy : spec.policy;
  o.ratePerSec = spec.ratePerSec;
  o.precision = spec.precision;
  o.timeoutMs = spec.timeoutMs === undefined ? DL.TIMEOUT_MS : spec.timeoutMs;
  if (!Array.isArray(o.connections) || o.connections.length === 0 || o.connections.some((n) => !Number.isInteger(n) || n < 1 || n > 1024)) {
    fail('connections', o.connections, 'must be a non-empty list of whole numbers 1-1024');
  }
  if (!Array.isArray(o.inflight) || o.inflight.length === 0 || o.inflight.some((n) => !Number.isInteger(n) || n < 1 || n > MAX_INFLIGHT)) {
    fail('inflight', o.inflight, `must be a non-empty list of whole numbers 1-${MAX_INFLIGHT}`);
  }
  // One serial line, one master: a serial port opens once, and a serial server that takes several
  // clients on one port sends every reply to all of them (drivers/modbus/rtutcp-transport.js)
  if ((o.target.protocol === 'modbus+rtu' || o.target.protocol === 'modbus+rtutcp') && o.connections.some((n) => n > 1)) {
    fail('connections', o.connections, `must be 1 for a ${o.target.protocol}:// target (one serial line takes one master)`);
  }
  if (o.inflight.some((n) => n > 1)) {
    // pipelining needs replies matched by transaction id; a new connection per request has nothing to pipeline on
    if (!isMbap(o.target)) fail('inflight', o.inflight, 'must be 1 unless the target is modbus+tcp or modbus+tls (only Modbus TCP matches replies by transaction id)');
    if (o.reconnectEach) fail('inflight', o.inflight, 'must be 1 with reconnectEach (a connection per request carries one request)');
  }
  if (o.tls !== undefined) {
    if (o.target.protocol !== 'modbus+tls') fail('tls', '<tls>', 'applies to modbus+tls:// targets only');
    // text: the options cross to the probe's worker thread
    o.tls = tlsAsText(o.tls);
  }
  if (o.count === undefined && o.durationMs === undefined) fail('count', o.count, 'or durationMs must be given');
  if (o.count !== undefined && o.count < 1) fail('count', o.count, 'must be a whole number ≥ 1');
  if (o.durationMs !== undefined && !(o.durationMs > 0)) fail('durationMs', o.durationMs, 'must be a positive number of ms');
  if (!(Number.isInteger(o.warmup) && o.warmup >= 0)) fail('warmup', o.warmup, 'must be a whole number ≥ 0');
  o.progressMs = o.progressMs === undefined ? 0 : progressInterval(o.progressMs);
  // a fixed rate runs where it can be held; closed loop has no rate to hold
  if (o.inWorker === undefined) o.inWorker = o.ratePerSec !== Infinity;
  if (typeof o.inWorker !== 'boolean') fail('inWorker', o.inWorker, 'must be true or false');
  return o;
}

async function probeInline (o, ee, control) {
  const latency = require('../latency');
  const source = createOpSource(o, o.target);
  const model = await deviceModel(o);
  if (o.generator !== undefined) checkGeneratorModel(o.generator, model, o.target.url);
  const runs = [];
  for (const n of o.connections) for (const k of o.inflight) {
    if (control.stopped) break;
    const copts = { timeoutMs: o.timeoutMs, connectTimeoutMs: o.connectTimeoutMs, queueMax: 4 };
    if (k > 1) copts.maxInflight = k;
    if (o.tls !== undefined) copts.tls = o.tls;
    const conns = await openClients(n, () => (o.reconnectEach ? new ReconnectEachClient(o.target, copts, createClient) : createClient(o.target, copts)));
    // k lanes per connection: the scheduler keeps each lane to one request at a time
    const clients = k === 1 ? conns : conns.flatMap((c) => Array.from({ length: k }, () => c));
    try {
      // Closed loop, the warm-up is the first requests of the measured schedule itself (its lanes and
      // code, compiled before measuring: issue 11). At a fixed rate it is a closed loop of its own
      // first, so that it does not take warmup / rate seconds, and then part of the measured
      // schedule (pacedWarmup): its waits and pacing are code the closed loop never ran, and
      // compiled while measured they stalled its first requests by 4-9 ms (p99 2 ms at 15,300/s pinned)
      const closed = o.ratePerSec === Infinity;
      const inSchedule = closed ? o.warmup : pacedWarmup(o.warmup, o.ratePerSec);
      const total = o.count === undefined ? null : o.count;
      let startMs = Date.now();
      let schedule = null;
      // done: 0 until the measured schedule exists (its warm-up's requests are not counted)
      const progress = () => ee.emit('progress', { connections: n, inflight: k, done: schedule === null ? 0 : schedule.completed, total, elapsedMs: Date.now() - startMs });
      // The report that a run starts wakes the caller's thread: from a worker thread it goes before
      // the warm-up, so that the caller's work on it is done before the measured requests, not
      // among them (240-320 us of the main thread's, on one core, beside the first of them: a
      // scheduler trace at 10,000/s). On the caller's own thread it costs no wake, and comes as the
      // measured part starts, where a caller can mark that moment
      const early = !isMainThread && o.warmup > 0;
      if (early) progress();
      if (o.warmup > 0 && !closed) {
        const warm = startSchedule({ clients, nextOp: source.nextOp, count: o.warmup, timeoutMs: o.timeoutMs, precision: o.precision, recorder: new latency.Recorder() });
        control.schedule = warm;
        await warm.done;
        // nothing in flight, nothing late: start-up's survivors are promoted now, not while measured
        settleYoungGeneration();
      }
      const recorder = new latency.Recorder({ policy: closed ? 'closed' : o.policy });
      let failures = new ErrorTally();
      let timer = null;
      let cpu0 = null;
      // the measured run starts: a report (unless it went before the warm-up), then every progressMs when asked for
      const measure = () => {
        startMs = Date.now();
        cpu0 = process.cpuUsage();
        if (!early) progress();
        if (o.progressMs > 0) timer = setInterval(progress, o.progressMs);
      };
      schedule = startSchedule({
        clients,
        nextOp: source.nextOp,
        ratePerSec: o.ratePerSec,
        count: o.count,
        durationMs: o.count === undefined ? o.durationMs : undefined,
        policy: o.policy,
        precision: o.precision,
        timeoutMs: o.timeoutMs,
        recorder,
        onError: (err) => failures.add(err),
        ...(inSchedule > 0
          ? {
              warmup: inSchedule,
              // halfway and at the end: the same code both times (scheduler), measured from the end
              onWarm: (final) => {
                recorder.discard();
                failures = new ErrorTally();
                if (final) measure();
              }
            }
          : {})
      });
      control.schedule = schedule;
      if (inSchedule === 0) measure();
      let outcome;
      try { outcome = await schedule.done; } finally { if (timer !== null) clearInterval(timer); }
      const cpu = cpu0 === null ? null : process.cpuUsage(cpu0);
      progress();
      const snap = recorder.snapshot();
      const endMs = Date.now();
      const elapsedMs = Number(outcome.endNs - outcome.startNs) / 1e6;
      const done = snap.ok + snap.errors + snap.timeouts;
      const ratePerSec = elapsedMs > 0 ? done / (elapsedMs / 1000) : 0;
      const offered = o.ratePerSec === Infinity ? null : o.ratePerSec;
      const run = {
        connections: n,
        inflight: k,
        inflightEffective: Math.min(...conns.map((c) => (typeof c.effectiveInflight === 'number' ? c.effectiveInflight : 1))),
        label: source.label,
        model,
        name: fileStem(`${model}-${source.label}-${n}x${k > 1 ? `-${k}inflight` : ''}${o.reconnectEach ? '-reconnect' : ''}`),
        reconnectEach: o.reconnectEach === true,
        policy: o.ratePerSec === Infinity ? 'closed' : o.policy,
        precision: o.precision,
        count: outcome.planned,
        ok: snap.ok,
        errors: snap.errors,
        timeouts: snap.timeouts,
        skipped: snap.skipped,
        elapsedMs,
        ratePerSec,
        offered,
        fellBehind: fellBehind(ratePerSec, offered),
        errorsByCode: failures.toJSON(),
        thread: isMainThread ? 'main' : 'worker',
        cpuPct: cpu === null || !(elapsedMs > 0) ? null : (cpu.user + cpu.system) / 10 / elapsedMs,
        summary: latency.summarize(snap.response),
        service: latency.summarize(snap.service),
        lag: latency.summarize(snap.lag),
        hgrm: latency.toHgrm(snap.response),
        hist: latency.encodeHistogram(snap.response),
        startMs,
        endMs
      };
      runs.push(run);
      ee.emit('run', run);
    } finally {
      await closeClients(conns);
    }
  }
  return { runs };
}

/** An ASCII generator sent to a model it is not for gets only refusals: say so before the run. */
function checkGeneratorModel (generator, model, where) {
  require('../drivers/ascii/generators').checkGeneratorModel(generator, model, where);
}

/** The device's model name for file names, asked the way the vendor's tests do (`$AAM`). */
async function deviceModel (o) {
  if (o.target.protocol !== 'ascii') return 'modbus';
  const client = createClient(o.target, { timeoutMs: Math.min(o.timeoutMs, 1000), connectTimeoutMs: o.connectTimeoutMs, reconnect: false });
  try {
    const reply = await client.request(`$${o.target.address}M`);
    return reply.name || 'ascii';
  } catch (err) {
    if (err.code === 'NINES_ERR_CONNECT_FAILED' || err.code === 'NINES_ERR_CONNECT_TIMEOUT') throw err;
    return 'ascii';
  } finally {
    await client.close();
  }
}

/** keeps the vendor's file names (`ED-588-@AA(Data)-1x`) but nothing a file system would mind */
function fileStem (s) {
  return s.replace(/[^A-Za-z0-9@#$%~()+._-]/g, '_');
}

module.exports = { runProbe, pacedWarmup, fileStem, progressInterval, PROGRESS_MIN_MS };
