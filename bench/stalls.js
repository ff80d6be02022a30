'use strict';

/**
 * Where does a fixed-rate run's tail come from? (issue 20) A gateway job (the real Host, Job,
 * scheduler and driver, in a worker thread, posting its interval's copy every --interval) polls
 * the C libmodbus server at --rate for --duration with the wait asked for (--precision), and every
 * request slower than --threshold is kept with its times. Each such excursion (overlapping ones,
 * a stall and the requests queued behind it, are one) is then put down to what happened in its
 * window: the candidate that took the most of that window, if it took a quarter of the worst
 * response or more, else "unexplained":
 *   - the job's thread waited for a CPU (its run delay in /proc/thread-self/schedstat): descheduled
 *     by the machine;
 *   - the server process waited for a CPU (/proc/<pid>/schedstat): descheduled by the machine;
 *   - garbage collection of the job's thread (perf_hooks 'gc' entries);
 *   - summary work on the job's thread (the interval's copy, Host#postSnapshot, timed: the
 *     percentiles and encodings are made on the pool's thread, workers/summaries.js);
 *   - the send itself was late (dispatch lag): the wait woke late (timer fallback, wake slack);
 *   - the reply took it (service time): the server or the wire.
 * Not a question of `npm run bench` (a diagnosis, not a comparison); about --duration plus 5 s.
 *
 *   node bench/stalls.js [--rate 2000] [--duration 60s] [--precision spin|sleep] [--interval 1s]
 *                        [--threshold 1ms] [--cpu 0|1] [--policy capped|skip|burst] [--json]
 */

const fs = require('node:fs');
const path = require('node:path');
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads');

const ROOT = path.join(__dirname, '..');

const statBuf = Buffer.alloc(128);

/**
 * A schedstat file's run delay (ns spent runnable, waiting for a CPU), read again from position 0 of
 * a descriptor kept open: about 2 µs, where opening the file each time cost about 10 (twice per
 * request, that was a fifth of a core at 10,000/s, and it took the CPU it was there to measure).
 * @param {number} fd
 * @returns {number}
 */
function runDelayNs (fd) {
  try {
    const n = fs.readSync(fd, statBuf, 0, statBuf.length, 0);
    const text = statBuf.toString('latin1', 0, n);
    const a = text.indexOf(' ');
    return Number(text.slice(a + 1, text.indexOf(' ', a + 1)));
  } catch {
    return NaN;
  }
}

/** The worker: one device, one job, everything kept. */
function workerMain () {
  const { PerformanceObserver, performance } = require('node:perf_hooks');
  const { Host } = require(path.join(ROOT, 'gateway/workers/host'));
  const { buildDeviceSpec, buildJobSpec } = require(ROOT);
  const o = workerData;
  const hr = () => Number(process.hrtime.bigint());
  // perf_hooks times (ms since this thread's timeOrigin) on the hrtime scale
  const perfToHr = hr() - performance.now() * 1e6;
  const gcs = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcs.push({ start: perfToHr + e.startTime * 1e6, end: perfToHr + (e.startTime + e.duration) * 1e6, kind: e.detail ? e.detail.kind : e.kind });
  }).observe({ entryTypes: ['gc'] });
  // the summary work left on the job's thread, timed: each interval's copy
  const pieces = [];
  const postSnapshot = Host.prototype.postSnapshot;
  Host.prototype.postSnapshot = function (...args) {
    const t = hr();
    postSnapshot.apply(this, args);
    pieces.push({ start: t, end: hr() });
  };
  const host = new Host({ post: () => {} });
  const device = buildDeviceSpec({ name: 'srv', target: `modbus+tcp://127.0.0.1:${o.port}?unitId=1`, timeoutMs: 1000 });
  const spec = buildJobSpec({ name: 'job', read: { fc: 3, address: 0, quantity: 10 }, ratePerSec: o.rate, precision: o.precision, policy: o.policy, intervalMs: o.intervalMs }, { device, purpose: 'poll' });
  host.handle({ type: 'device', spec: device });
  host.handle({ type: 'job', spec });
  const job = host.jobs.get('job');
  const selfStat = fs.openSync('/proc/thread-self/schedstat', 'r');
  const srvStat = fs.openSync(`/proc/${o.serverPid}/schedstat`, 'r');
  let lastSelf = runDelayNs(selfStat);
  let lastSrv = runDelayNs(srvStat);
  let n = 0;
  let sumLag = 0;
  const slow = [];
  const warmUntil = hr() + 3e9; // the first 3 s are warm-up (connect, compile)
  const endAt = warmUntil + o.durationMs * 1e6;
  const rec = job.recorder;
  const recordOk = rec.recordOk.bind(rec);
  rec.recordOk = (responseNs, serviceNs, lagNs) => {
    recordOk(responseNs, serviceNs, lagNs);
    const now = hr();
    const self = runDelayNs(selfStat);
    const srv = runDelayNs(srvStat);
    if (now > warmUntil) {
      n++;
      sumLag += lagNs || 0;
      if (responseNs >= o.thresholdNs) slow.push({ start: now - responseNs, end: now, responseNs, serviceNs, lagNs, selfDelay: self - lastSelf, srvDelay: srv - lastSrv });
    }
    lastSelf = self;
    lastSrv = srv;
    if (now > endAt && !job.stopping) {
      job.stopping = true;
      host.handle({ type: 'stop-job', name: 'job' });
      setTimeout(() => parentPort.postMessage({ n, meanLagNs: n ? sumLag / n : 0, slow, gcs: gcs.filter((g) => g.start > warmUntil), pieces: pieces.filter((p) => p.start > warmUntil), warmUntil, endAt }), 200);
    }
  };
}

/** perf_hooks' gc kinds (constants.NODE_PERFORMANCE_GC_*) */
const GC_KINDS = { 1: 'scavenge', 2: 'mark-compact', 4: 'incremental marking', 8: 'weak callbacks' };

/** Groups overlapping excursions and puts each group down to a cause. */
function analyse (r, thresholdNs) {
  const groups = [];
  for (const s of r.slow.sort((a, b) => a.start - b.start)) {
    const g = groups[groups.length - 1];
    if (g && s.start <= g.end) { g.members.push(s); g.end = Math.max(g.end, s.end); } else groups.push({ start: s.start, end: s.end, members: [s] });
  }
  const causes = {};
  const within = (list, g) => list.reduce((a, x) => a + Math.max(0, Math.min(x.end, g.end) - Math.max(x.start, g.start)), 0);
  for (const g of groups) {
    const worst = g.members.reduce((a, b) => (b.responseNs > a.responseNs ? b : a));
    const span = worst.responseNs;
    // what each candidate took in the group's window; the largest is its cause (the requests queued
    // behind a stall are part of its group, so sums of run delay cover the whole window)
    const sum = (k) => g.members.reduce((a, m) => a + (m[k] > 0 ? m[k] : 0), 0);
    const candidates = [
      ['the job\'s thread waited for a CPU (descheduled)', sum('selfDelay')],
      ['the server waited for a CPU (descheduled)', sum('srvDelay')],
      ['garbage collection', within(r.gcs, g)],
      ['summary work on the job\'s thread (the interval\'s copy)', within(r.pieces, g)],
      // a late send or a slow reply, less the CPU waits in the same request's window (the clock runs on while descheduled)
      ['the send woke late (timer fallback or wake slack)', Math.max(...g.members.map((m) => (m.lagNs || 0) - Math.max(0, m.selfDelay)))],
      ['the reply was slow (server or wire)', Math.max(...g.members.map((m) => (m.serviceNs || 0) - Math.max(0, m.selfDelay) - Math.max(0, m.srvDelay)))]
    ];
    const [top, took] = candidates.reduce((a, b) => (b[1] > a[1] ? b : a));
    const cause = took >= span / 4 ? top : 'unexplained';
    const c = causes[cause] || (causes[cause] = { events: 0, requests: 0, worstNs: 0, examples: [] });
    c.events++;
    c.requests += g.members.length;
    c.worstNs = Math.max(c.worstNs, span);
    if (c.examples.length < 3) {
      c.examples.push({ atS: Number(((g.start - r.warmUntil) / 1e9).toFixed(2)), ms: Number((span / 1e6).toFixed(2)), ...Object.fromEntries(candidates.map(([k, v], i) => [['selfWaitUs', 'serverWaitUs', 'gcUs', 'summaryUs', 'lagUs', 'serviceUs'][i], Math.round(v / 1e3)])) });
    }
  }
  /** p50, p99 and max of the durations, µs */
  const spread = (list) => {
    const d = list.map((x) => (x.end - x.start) / 1e3).sort((x, y) => x - y);
    const at = (q) => (d.length ? Math.round(d[Math.min(d.length - 1, Math.floor(q * d.length))]) : null);
    return { count: d.length, p50Us: at(0.5), p99Us: at(0.99), maxUs: d.length ? Math.round(d[d.length - 1]) : null };
  };
  return { requests: r.n, thresholdMs: thresholdNs / 1e6, excursions: groups.length, slowRequests: r.slow.length, meanLagUs: r.meanLagNs / 1e3, gc: spread(r.gcs), gcByKind: Object.fromEntries([...new Set(r.gcs.map((g) => g.kind))].map((k) => [GC_KINDS[k] || k, spread(r.gcs.filter((g) => g.kind === k))])), summaryPieces: spread(r.pieces), causes };
}

async function main () {
  const { parseArgs } = require('node:util');
  const { values } = parseArgs({
    options: {
      rate: { type: 'string', default: '2000' },
      duration: { type: 'string', default: '60s' },
      precision: { type: 'string', default: 'spin' },
      interval: { type: 'string', default: '1s' },
      threshold: { type: 'string', default: '1ms' },
      cpu: { type: 'string', default: '1' },
      policy: { type: 'string', default: 'capped' },
      child: { type: 'string' },
      json: { type: 'boolean', default: false }
    }
  });
  const { parseDuration } = require(path.join(ROOT, 'gateway/base/quantities'));
  if (values.child) {
    const o = JSON.parse(values.child);
    // made as the gateway's pool makes its threads: their sleeps end when asked
    const { withPreciseSlack } = require(path.join(ROOT, 'gateway/scheduler/timer-slack'));
    const w = withPreciseSlack(() => new Worker(__filename, { workerData: o }));
    const r = await new Promise((resolve, reject) => { w.once('message', resolve); w.once('error', reject); });
    await w.terminate();
    process.stdout.write(JSON.stringify(analyse(r, o.thresholdNs)) + '\n');
    return;
  }
  const { startServer, runJson } = require('./lib/procs');
  const { cPath, cSkipReason } = require('./lib/c-peers');
  const { pinned } = require('./lib/placement');
  if (!cPath('modbus-server')) throw new Error(cSkipReason('modbus-server'));
  const [scmd, sargs] = pinned('0', cPath('modbus-server'), []);
  const server = await startServer(scmd, sargs, { label: 'modbus-server' });
  const o = { port: server.port, serverPid: server.pid, rate: Number(values.rate), precision: values.precision, policy: values.policy, intervalMs: parseDuration(values.interval, '--interval'), durationMs: parseDuration(values.duration, '--duration'), thresholdNs: parseDuration(values.threshold, '--threshold') * 1e6 };
  const load0 = require('node:os').loadavg();
  const [cmd, args] = pinned(values.cpu, process.execPath, [__filename, '--child', JSON.stringify(o)]);
  try {
    const r = await runJson(cmd, args, { timeoutMs: o.durationMs + 60000 });
    r.settings = { rate: o.rate, precision: o.precision, policy: o.policy, intervalMs: o.intervalMs, durationMs: o.durationMs, cpu: values.cpu, serverCpu: '0', loadBefore: load0, loadAfter: require('node:os').loadavg() };
    process.stdout.write((values.json ? JSON.stringify(r) : JSON.stringify(r, null, 2)) + '\n');
  } finally {
    await server.stop();
  }
}

if (isMainThread) {
  main().catch((err) => { console.error(err); process.exitCode = 1; });
} else {
  workerMain();
}
