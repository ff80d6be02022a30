'use strict';

/**
 * One closed-loop client of question 1 in its own process, so the bench can pin it to a core
 * (`taskset -c`) beside the server or apart from it (issue 11): FC3 ×10 from address 0, unit 1, one
 * connection, one request at a time, `warmup` requests first, then `count` requests (or `durationMs`,
 * whichever ends first).
 *
 *   node closed-loop-child.js '<json>'   {kind, port, count, durationMs, warmup, allocCount?, resourceLimits?}
 *
 * kind:
 * - `nines`, `modbus-serial`, `jsmodbus`: the client on this thread, each request timed around its
 *   call (lib/closed-loop.js, the same for every Node client);
 * - `probe`: `nines probe` as its CLI runs a closed loop (gateway/measure/probe.js on this thread: the
 *   scheduler, the recorder and the driver); figures are the probe's own service times;
 * - `worker`: a gateway job in a WorkerPool worker thread (the gateway's path: scheduler, device,
 *   driver, recorder), one long-running job, closed loop: its interval summaries during the first
 *   `warmup` requests are dropped, then whole intervals are taken until they hold `count` requests
 *   (service times taken by the driver). The worker thread's collections are profiled from inside
 *   it (gc-profile.js, loaded with --require).
 *
 * Every kind also reports what the measured loop cost besides the wire: CPU per request (the whole
 * process, user + system) and the garbage collector's share (gc-profile.js, on the thread that runs
 * the loop): its collections and their pauses over the measured run, and, from a pass of
 * `allocCount` more requests after it (V8's GC profiler lengthens every pause, so it stays out of
 * the measured run), the bytes allocated per request.
 * The last stdout line is the JSON result, its HDR histogram encoded.
 */

const path = require('node:path');
const { closedLoopOf, warmUp } = require('./closed-loop');
const { encode, decode } = require('./hist');
const { startGcWatch, startAllocProfile, askWorkers, perRequest } = require('./gc-profile');

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
    // the warm-up runs the measured loop itself, as closedLoop() does
    const loop = closedLoopOf(c.read);
    await warmUp(loop, o.warmup, o.durationMs);
    const watch = startGcWatch();
    const cpu0 = process.cpuUsage();
    watch.mark();
    const r = await loop.run(o.count, o.durationMs);
    const gc = watch();
    const cpu = cpuNs(cpu0);
    const { alloc, n } = await allocPass(o, async (count) => (await loop.run(count, 60000)).count);
    return { ...r, hist: encode(r.hist), cpuNsPerReq: Math.round(cpu / Math.max(1, r.count)), version: c.version, gc, alloc, ...perRequest(gc, r.count, alloc, n) };
  } finally {
    await c.close();
  }
}

/** `nines probe`, closed loop, on this thread (its CLI's default), with its own warm-up as its CLI runs it. */
async function probe (o) {
  const { runProbe } = require(path.join(ROOT, 'gateway/measure/probe'));
  const target = `modbus+tcp://127.0.0.1:${o.port}?unitId=1`;
  const opts = { target, read: OP, connections: [1], timeoutMs: 1000, inWorker: false };
  const watch = startGcWatch();
  let cpu0 = null;
  const probeRun = runProbe({ ...opts, count: o.count, warmup: o.warmup });
  // the measured run's first progress event comes as it starts, once the warm-up is done; what
  // runs here delays the run's first requests, so the watch was set up before and is only marked
  probeRun.once('progress', () => { cpu0 = process.cpuUsage(); watch.mark(); });
  const { runs } = await probeRun.promise;
  const gc = watch();
  const cpu = cpu0 ? cpuNs(cpu0) : NaN;
  const r = runs[0];
  const count = r.ok + r.errors + r.timeouts;
  const { alloc, n } = await allocPass(o, async (k) => { const x = (await runProbe({ ...opts, count: k }).promise).runs[0]; return x.ok + x.errors + x.timeouts; });
  return {
    hist: r.hist,
    count,
    errors: r.errors + r.timeouts,
    elapsedNs: Math.round(r.elapsedMs * 1e6),
    reqPerSec: r.ratePerSec,
    cpuNsPerReq: Math.round(cpu / Math.max(1, count)),
    gc,
    alloc,
    ...perRequest(gc, count, alloc, n)
  };
}

/**
 * A gateway job in a worker thread, measured as the gateway runs one: a single long-running job
 * whose interval summaries are the figures. Intervals that end within the warm-up are dropped;
 * then whole intervals are taken until they hold `count` requests (a new job would be new objects
 * for the code, compiled again while measured: issue 11).
 */
async function worker (o) {
  const { WorkerPool, buildDeviceSpec, buildJobSpec } = require(ROOT);
  const pool = new WorkerPool({
    mode: 'worker',
    workers: 1,
    // V8 flags given to this process (--trace-gc, …) apply to its threads anyway, and a worker refuses them
    execArgv: ['--require', require.resolve('./gc-profile')],
    ...(o.resourceLimits ? { resourceLimits: o.resourceLimits } : {})
  });
  const device = buildDeviceSpec({ name: 'bench-device', target: `modbus+tcp://127.0.0.1:${o.port}?unitId=1`, timeoutMs: 1000, maxConnections: 1 });
  const errors = [];
  pool.on('job-error', (name, err) => errors.push(err));
  pool.addDevice(device);
  const intervalMs = o.intervalMs || 250;
  const measured = [];
  let warm = Math.max(0, o.warmup || 0);
  let cpu0 = null;
  let allocDone = null;
  const allocCount = o.allocCount || 0;
  let allocSeen = 0;
  // the job's interval summaries move it through its phases: warm → measure → (the watch stops) →
  // armed → alloc → done
  let phase = 'warm';
  const phases = new Promise((resolve) => {
    pool.on('summary', (name, payload) => {
      if (name !== 'bench') return;
      if (phase === 'warm') {
        // whole intervals until that many requests have gone (at least the first, which holds the
        // job's start); the watch, set up at the start, counts from here
        warm -= payload.count;
        if (warm <= 0) { askWorkers('mark', 'watch'); cpu0 = process.cpuUsage(); phase = 'measure'; }
      } else if (phase === 'measure') {
        measured.push(payload);
        if (measured.reduce((a, s) => a + s.count, 0) < o.count) return;
        allocDone = { cpu: cpuNs(cpu0) };
        phase = 'stopping';
        askWorkers('stop', 'watch').then(([gc]) => {
          allocDone.gc = gc;
          if (allocCount === 0) { phase = 'done'; resolve(); } else phase = 'armed';
        });
      } else if (phase === 'armed') {
        // the allocation profile starts as an interval ends, so the intervals counted below are the
        // ones it saw whole (started mid-interval, it would be divided by requests it never saw)
        askWorkers('start', 'alloc');
        phase = 'alloc';
      } else if (phase === 'alloc') {
        allocSeen += payload.count;
        if (allocSeen < allocCount) return;
        phase = 'done';
        askWorkers('stop', 'alloc').then(([alloc]) => { allocDone.alloc = alloc; resolve(); });
      }
    });
  });
  // the worker thread starts with its device: its collections are watched from then on
  await new Promise((resolve) => pool.once('health', resolve));
  await askWorkers('start', 'watch');
  pool.startJob(buildJobSpec({ name: 'bench', read: OP, ratePerSec: Infinity, intervalMs, connections: 1, policy: 'capped' }, { device, purpose: 'measure' }));
  const limit = new Promise((resolve, reject) => setTimeout(() => reject(new Error(`the worker job did not finish in time${errors.length ? ': ' + errors[0].message : ''}`)), o.durationMs + 60000).unref());
  try {
    await Promise.race([phases, limit]);
    const hist = decode(measured[0].hist);
    for (const s of measured.slice(1)) hist.add(decode(s.hist));
    const sum = (k) => measured.reduce((a, s) => a + (s[k] || 0), 0);
    const count = sum('count');
    const spanMs = measured[measured.length - 1].end - measured[0].start;
    const gc = allocDone.gc || null;
    return {
      hist: encode(hist),
      count,
      errors: sum('errors') + sum('timeouts'),
      elapsedNs: spanMs * 1e6,
      reqPerSec: count / (spanMs / 1000),
      cpuNsPerReq: Math.round(allocDone.cpu / count),
      gc,
      alloc: allocDone.alloc || null,
      ...perRequest(gc, count, allocDone.alloc || null, allocSeen)
    };
  } finally {
    await pool.stop(5000);
  }
}

/**
 * The allocation pass: `allocCount` more requests with V8's GC profiler on (none when 0).
 * @param {{allocCount?: number}} o
 * @param {(count: number) => Promise<number>} runN runs that many requests, resolves with how many ran
 * @returns {Promise<{alloc: object|null, n: number}>}
 */
async function allocPass (o, runN) {
  if (!o.allocCount) return { alloc: null, n: 0 };
  const stop = startAllocProfile();
  if (stop === null) return { alloc: null, n: 0 };
  const n = await runN(o.allocCount);
  return { alloc: stop(), n };
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
