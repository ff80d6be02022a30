'use strict';

/**
 * Question 13's measurement of one line, in a fresh process: a line of units (lib/line-sim.js in a
 * process of its own: a Modbus TCP gateway, a serial server's RTU-over-TCP port, or a serial line
 * on a socat PTY pair), one device with `units` on it in a WorkerPool (the serial line on this
 * process's main thread, as the gateway runs it; the others in a worker), one poll job per unit at a
 * fixed rate (FC3 ×10, policy skip), and three phases:
 *
 *   healthy    every unit answers;
 *   silent     unit `silent` stops answering (the simulator is told "serve <id> off");
 *   restored   it answers again: the phase waits for the unit to be reported up, then measures.
 * The silent phase is also measured without its first timeout ("steady": the intervals that begin
 * once the unit is down and two timeouts have passed), where only the unit's probes cost the line.
 *
 * Each phase starts with pool.reset(), so its summaries cover it alone (the interval still open at
 * its end is discarded by the next reset). Per phase and unit: polls intended (slots), answered,
 * skipped, failed, and the response-time histogram (ns, from the intended send time, skipped slots
 * with what they waited, as the job records them). Also: the time from the silence to the unit's
 * `down` in the device health, from the restore to its `up`, and how many requests reached the
 * silent unit (the simulator's count of requests to a unit that does not answer).
 *
 *   node bus-child.js '<json>'   {kind, units, silent, ratePerSec, timeoutMs, intervalMs, warmupMs,
 *                                 healthyMs, silentMs, restoredMs, upLimitMs}
 *
 * Last stdout line: the JSON result.
 */

const path = require('node:path');
const { spawn } = require('node:child_process');
const { createHist, encode, decode, stats } = require('./hist');

const ROOT = path.join(__dirname, '..', '..');
const LINE_SIM = path.join(__dirname, 'line-sim.js');
const OP = Object.freeze({ fc: 3, address: 0, quantity: 10 });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts lib/line-sim.js and talks to it line by line.
 * @param {string[]} args
 * @returns {Promise<{port: number, ask: (line: string) => Promise<string>, stop: () => Promise<void>}>}
 *   ask sends a command and resolves with its answer line
 */
function startLineSim (args) {
  const child = spawn(process.execPath, [LINE_SIM, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.stdin.on('error', () => {});
  const waiters = [];
  let buf = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`line-sim ${args.join(' ')} did not start in 10 s`)); }, 10000);
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`line-sim ${args.join(' ')} exited (${code}) before it answered`)); });
    child.stdout.on('data', (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf('\n')) !== -1) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        const m = /^PORT (\d+)$/.exec(line);
        if (m) {
          clearTimeout(timer);
          resolve({
            port: Number(m[1]),
            ask: (cmd) => new Promise((resolveAnswer) => { waiters.push(resolveAnswer); child.stdin.write(cmd + '\n'); }),
            stop: async () => {
              child.stdin.end();
              const t = setTimeout(() => child.kill('SIGKILL'), 3000);
              await exited;
              clearTimeout(t);
            }
          });
        } else if (waiters.length) {
          waiters.shift()(line);
        }
      }
    });
  });
}

/** @returns {Promise<number>} requests the simulator left unanswered (to a unit that does not answer) so far */
async function ignored (sim) {
  const line = await sim.ask('stats');
  if (!line.startsWith('STATS ')) throw new Error(`line-sim: ${line}`);
  return JSON.parse(line.slice(6)).ignored;
}

/**
 * Waits until unit `name` of the device reports `state`.
 * @returns {Promise<number>} the epoch ms the health event arrived
 */
function unitState (pool, device, name, state, limitMs) {
  return new Promise((resolve, reject) => {
    const now = pool.health(device);
    if (now && now.units && now.units[name].state === state) { resolve(Date.now()); return; }
    const timer = setTimeout(() => { pool.off('health', on); reject(new Error(`unit ${name} not ${state} within ${limitMs} ms (${JSON.stringify(pool.health(device))})`)); }, limitMs);
    function on (d, h) {
      if (d !== device || !h.units || h.units[name].state !== state) return;
      clearTimeout(timer);
      pool.off('health', on);
      resolve(Date.now());
    }
    pool.on('health', on);
  });
}

/**
 * One phase's figures per unit, from the summaries that lie inside [fromMs, toMs].
 * @returns {Record<string, {slots: number, ok: number, skipped: number, failed: number, hist: object, spanMs: number}>}
 */
function phase (byJob, fromMs, toMs) {
  const out = {};
  for (const [job, list] of byJob) {
    const inside = list.filter((p) => p.start >= fromMs - 5 && p.end <= toMs + 5);
    const hist = createHist();
    let slots = 0;
    let ok = 0;
    let skipped = 0;
    let failed = 0;
    for (const p of inside) {
      hist.add(decode(p.hist));
      slots += p.count;
      ok += p.ok;
      skipped += p.skipped;
      failed += p.errors + p.timeouts;
    }
    const spanMs = inside.length ? inside[inside.length - 1].end - inside[0].start : 0;
    out[job] = { slots, ok, skipped, failed, hist, spanMs, intervals: inside.length };
  }
  return out;
}

/** The figures of a set of units in one phase: each unit's share of polls answered, and their pooled percentiles */
function figures (units, names) {
  const merged = createHist();
  for (const n of names) merged.add(units[n].hist);
  const share = (n) => (units[n].slots ? units[n].ok / units[n].slots : 0);
  return {
    answeredMinPct: 100 * Math.min(...names.map(share)),
    answeredMaxPct: 100 * Math.max(...names.map(share)),
    slots: names.reduce((a, n) => a + units[n].slots, 0),
    ok: names.reduce((a, n) => a + units[n].ok, 0),
    skipped: names.reduce((a, n) => a + units[n].skipped, 0),
    failed: names.reduce((a, n) => a + units[n].failed, 0),
    intervalsMin: Math.min(...names.map((n) => units[n].intervals)),
    spanMs: Math.max(...names.map((n) => units[n].spanMs)),
    ...stats(merged),
    hist: encode(merged),
    perUnitP99: Object.fromEntries(names.map((n) => [n, stats(units[n].hist).p99])),
    perUnit: Object.fromEntries(names.map((n) => [n, { slots: units[n].slots, ok: units[n].ok, skipped: units[n].skipped, failed: units[n].failed }]))
  };
}

async function main () {
  const o = JSON.parse(process.argv[2]);
  const { WorkerPool, buildDeviceSpec, buildJobSpec } = require(ROOT);
  const names = Array.from({ length: o.units }, (_, i) => `u${i + 1}`);
  const silentName = `u${o.silent}`;
  const others = names.filter((n) => n !== silentName);

  let pty = null;
  let sim = null;
  let pool = null;
  try {
    let url;
    if (o.kind === 'rtu') {
      // a serial line without hardware: two linked PTYs (no baud-rate timing on the wire)
      const { createPtyPair } = require(path.join(ROOT, 'test/helpers/pty'));
      pty = await createPtyPair();
      sim = await startLineSim(['rtu', String(o.units), pty.a]);
      url = `modbus+rtu://${pty.b}?baudRate=115200`;
    } else {
      sim = await startLineSim([o.kind, String(o.units)]);
      url = `modbus+${o.kind}://127.0.0.1:${sim.port}?unitId=1`;
    }

    pool = new WorkerPool({ mode: 'worker' });
    const byJob = new Map(names.map((n) => [n, []]));
    const jobErrors = {};
    pool.on('summary', (job, p) => { if (byJob.has(job)) byJob.get(job).push(p); });
    pool.on('job-error', (job, err) => { const k = `${job}: ${err.code}`; jobErrors[k] = (jobErrors[k] || 0) + 1; });
    const spec = buildDeviceSpec({
      name: 'bus', target: url, timeoutMs: o.timeoutMs,
      units: names.map((n, i) => ({ name: n, unitId: i + 1 }))
    });
    pool.addDevice(spec);
    for (const n of names) {
      pool.startJob(buildJobSpec({ name: n, unit: n, read: OP, ratePerSec: o.ratePerSec, intervalMs: o.intervalMs }, { device: spec, purpose: 'poll' }));
    }
    await sleep(o.warmupMs);
    for (const n of names) await unitState(pool, 'bus', n, 'up', 10000);

    // each phase: a reset, its length, and half an interval for the last summary to arrive
    const settle = o.intervalMs / 2;
    const tHealthy = Date.now();
    pool.reset();
    await sleep(o.healthyMs + settle);

    const ignoredBefore = await ignored(sim);
    const tSilent = Date.now();
    pool.reset();
    const silencedAt = Date.now();
    await sim.ask(`serve ${o.silent} off`);
    const downAt = await unitState(pool, 'bus', silentName, 'down', o.timeoutMs * 4 + 2000);
    await sleep(tSilent + o.silentMs + settle - Date.now());
    const reached = (await ignored(sim)) - ignoredBefore;

    const tRestore = Date.now();
    pool.reset();
    const restoredAt = Date.now();
    await sim.ask(`serve ${o.silent} on`);
    const upAt = await unitState(pool, 'bus', silentName, 'up', o.upLimitMs);
    const tAfter = Date.now();
    pool.reset();
    await sleep(o.restoredMs + settle);
    const tEnd = Date.now();
    await pool.stop(10000);
    pool = null;

    const healthy = phase(byJob, tHealthy, tSilent);
    const silent = phase(byJob, tSilent, tRestore);
    // the silence without its first timeout: the intervals that begin once the unit is down and the
    // line has had a timeout (and RTU's quiet period) to get over it, where only its probes cost the line
    const steady = phase(byJob, downAt + 2 * o.timeoutMs, tRestore);
    const restored = phase(byJob, tAfter, tEnd);
    const s = silent[silentName];
    process.stdout.write(JSON.stringify({
      url: url.replace(/\d{4,5}(?=\?)/, '<port>'),
      healthy: figures(healthy, others),
      silent: figures(silent, others),
      steady: figures(steady, others),
      restored: figures(restored, others),
      restoredUnit: { answeredPct: restored[silentName].slots ? 100 * restored[silentName].ok / restored[silentName].slots : 0 },
      silentUnit: { slots: s.slots, ok: s.ok, skipped: s.skipped, failed: s.failed },
      downNs: (downAt - silencedAt) * 1e6,
      upNs: (upAt - restoredAt) * 1e6,
      silentMs: tRestore - tSilent,
      reached,
      jobErrors
    }) + '\n');
  } finally {
    if (pool) await pool.stop(5000).catch(() => {});
    if (sim) await sim.stop();
    if (pty) await pty.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
}).finally(() => setTimeout(() => process.exit(), 200).unref()); // eslint-disable-line n/no-process-exit
