'use strict';

/**
 * One closed-loop client of question 1 in its own process, so the bench can pin it to a core
 * (`taskset -c`) beside the server or apart from it (issue 11): FC3 ×10 from address 0, unit 1, one
 * connection, one request at a time, `warmup` requests first, then `count` requests (or `durationMs`,
 * whichever ends first).
 *
 *   node closed-loop-child.js '<json>'   {kind, port, count, durationMs, warmup, resourceLimits?}
 *
 * kind:
 * - `nines`, `modbus-serial`, `jsmodbus`: the client on this thread, each request timed around its
 *   call (lib/closed-loop.js, the same for every Node client);
 * - `probe`: `nines probe` as its CLI runs a closed loop (gateway/measure/probe.js on this thread: the
 *   scheduler, the recorder and the driver); figures are the probe's own service times;
 * - `worker`: a gateway job in a WorkerPool worker thread (the gateway's path: scheduler, device,
 *   driver, recorder); a warm-up job of `warmup` requests, then the measured job of `count`, whose one
 *   summary gives the figures (service times taken by the driver). The worker thread's collections
 *   are profiled from inside it (gc-profile.js, loaded with --require).
 *
 * Every kind also reports what the measured loop cost besides the wire: CPU per request (the whole
 * process, user + system) and the garbage collector's share (gc-profile.js: bytes allocated per
 * request, collections, pause p99 and max, of the thread that runs the loop).
 * The last stdout line is the JSON result, its HDR histogram encoded.
 */

const path = require('node:path');
const { closedLoop } = require('./closed-loop');
const { encode, decode } = require('./hist');
const { startGcProfile, askWorkers, perRequest } = require('./gc-profile');

const ROOT = path.join(__dirname, '..', '..');
const OP = { fc: 3, address: 0, quantity: 10 };

/** @returns {number} ns of CPU this process used since `from` (process.cpuUsage) */
function cpuNs (from) {
  const c = process.cpuUsage(from);
  return (c.user + c.system) * 1000;
}

/** A client on this thread, timed around each call. */
async function onThread (o) {
  const clients = require('./modbus-clients');
  const open = { nines: clients.ninesClient, 'modbus-serial': clients.modbusSerialClient, jsmodbus: clients.jsmodbusClient }[o.kind];
  const c = await open(o.port);
  try {
    await closedLoop(c.read, { count: o.warmup, durationMs: 60000 });
    const cpu0 = process.cpuUsage();
    const stop = startGcProfile();
    const r = await closedLoop(c.read, { count: o.count, durationMs: o.durationMs });
    const gc = stop && stop();
    return { ...r, hist: encode(r.hist), cpuNsPerReq: Math.round(cpuNs(cpu0) / Math.max(1, r.count)), version: c.version, gc, ...perRequest(gc, r.count) };
  } finally {
    await c.close();
  }
}

/** `nines probe`, closed loop, on this thread (its CLI's default). */
async function probe (o) {
  const { runProbe } = require(path.join(ROOT, 'gateway/measure/probe'));
  const target = `modbus+tcp://127.0.0.1:${o.port}?unitId=1`;
  const opts = { target, read: OP, connections: [1], timeoutMs: 1000, inWorker: false };
  // the JIT warms on a run of its own: a probe's warm-up requests share the measured run's connection
  await runProbe({ ...opts, count: Math.max(1, o.warmup) }).promise;
  const cpu0 = process.cpuUsage();
  const stop = startGcProfile();
  const { runs } = await runProbe({ ...opts, count: o.count }).promise;
  const gc = stop && stop();
  const r = runs[0];
  const count = r.ok + r.errors + r.timeouts;
  return {
    hist: r.hist,
    count,
    errors: r.errors + r.timeouts,
    elapsedNs: Math.round(r.elapsedMs * 1e6),
    reqPerSec: r.ratePerSec,
    cpuNsPerReq: Math.round(cpuNs(cpu0) / Math.max(1, count)),
    gc,
    ...perRequest(gc, count)
  };
}

/** A gateway job in a worker thread. */
async function worker (o) {
  const { WorkerPool, buildDeviceSpec, buildJobSpec } = require(ROOT);
  const pool = new WorkerPool({
    mode: 'worker',
    workers: 1,
    execArgv: [...process.execArgv, '--require', require.resolve('./gc-profile')],
    ...(o.resourceLimits ? { resourceLimits: o.resourceLimits } : {})
  });
  const device = buildDeviceSpec({ name: 'bench-device', target: `modbus+tcp://127.0.0.1:${o.port}?unitId=1`, timeoutMs: 1000, maxConnections: 1 });
  const errors = [];
  pool.on('job-error', (name, err) => errors.push(err));
  pool.addDevice(device);
  /** runs one job to its end; resolves with its last summary */
  const job = (name, count) => new Promise((resolve) => {
    let last = null;
    const onSummary = (n, payload) => { if (n === name) last = payload; };
    const onEnd = (n) => {
      if (n !== name) return;
      pool.removeListener('summary', onSummary);
      pool.removeListener('end', onEnd);
      resolve(last);
    };
    pool.on('summary', onSummary);
    pool.on('end', onEnd);
    // one interval longer than the job: its one summary, flushed at its end, holds every request
    pool.startJob(buildJobSpec({ name, read: OP, ratePerSec: Infinity, count, intervalMs: 3600000, connections: 1, policy: 'capped' }, { device, purpose: 'measure' }));
  });
  try {
    await job('warm-up', Math.max(1, o.warmup));
    await askWorkers('start');
    const cpu0 = process.cpuUsage();
    const s = await job('bench', o.count);
    const cpu = cpuNs(cpu0);
    const [gc] = await askWorkers('stop');
    if (!s || !s.count) throw new Error(`the worker job recorded nothing${errors.length ? ': ' + errors[0].message : ''}`);
    const hist = decode(s.hist);
    const failed = (s.errors || 0) + (s.timeouts || 0);
    return {
      hist: encode(hist),
      count: s.count,
      errors: failed,
      elapsedNs: (s.end - s.start) * 1e6,
      reqPerSec: s.count / ((s.end - s.start) / 1000),
      cpuNsPerReq: Math.round(cpu / s.count),
      gc,
      ...perRequest(gc, s.count)
    };
  } finally {
    await pool.stop(5000);
  }
}

async function main () {
  const o = JSON.parse(process.argv[2]);
  const result = o.kind === 'probe' ? await probe(o) : o.kind === 'worker' ? await worker(o) : await onThread(o);
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
