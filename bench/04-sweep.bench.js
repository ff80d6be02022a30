'use strict';

/**
 * Question 4: does the poller hold an offered rate, and where does it saturate? Offered load from
 * 100 to 20,000 req/s in steps (plus one at 80 % of the measured closed-loop capacity), FC3 ×10 on one
 * connection against the reference server, for the nines scheduler (absolute deadlines, capped
 * catch-up) and for the naive `setInterval(poll, 1000 / rate)` loop most people write. Both are
 * measured from the intended send time t0 + k/rate, so coordinated omission shows; both use the
 * nines driver, so only the scheduling differs. Saturation (latency-method.md): the first step where
 * the achieved rate is below 95 % of the offered rate, or p99 more than doubles over the previous
 * step — counted only above 1 ms, so that microsecond noise on a shared machine is not called saturation.
 */

const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { Worker } = require('node:worker_threads');
const { withPreciseSlack } = require('../gateway/scheduler/timer-slack');
const { options, Row, interleave, run } = require('./lib/question');
const { closedLoop } = require('./lib/closed-loop');
const { ninesClient } = require('./lib/modbus-clients');
const { startReferenceModbusServer } = require('./lib/servers');
const { createHist, record, stats, decode } = require('./lib/hist');

const now = process.hrtime.bigint;
const RATES = [100, 500, 1000, 2000, 5000, 10000, 15000, 20000];
const QUICK_RATES = [100, 1000, 5000, 20000];

/**
 * The nines scheduler's steps, all in one worker thread (lib/sweep-worker.js).
 * @returns {Promise<object[]>} one run per rate: {rate, hist, lag, errors, count, reqPerSec}
 */
function ninesSteps (port, rates, stepMs, warmup) {
  // made as the gateway's pool makes its threads: their sleeps end when asked
  const worker = withPreciseSlack(() => new Worker(path.join(__dirname, 'lib', 'sweep-worker.js'), { workerData: { port, rates, stepMs, warmup } }));
  const steps = [];
  return new Promise((resolve, reject) => {
    worker.on('message', (m) => {
      if (m.type === 'step') steps.push({ ...m, hist: decode(m.hist), lag: decode(m.lag), count: 0 });
      else if (m.type === 'done') resolve(steps);
      else if (m.type === 'error') reject(new Error(m.message));
    });
    worker.on('error', reject);
    worker.on('exit', () => resolve(steps));
  }).then((s) => { for (const x of s) x.count = x.hist.totalCount; return s; });
}

/**
 * One step of the naive loop: setInterval, no deadline, no waiting for the previous reply. On its
 * own connection, closed at the end: past its capacity the loop leaves tens of thousands of requests
 * queued (900 answered a second of 20,000 asked), and on a shared connection they went on loading
 * the server, and this process, through the next round's nines steps (one round of three fell
 * behind at 5,000 and at 8,000/s). What is still queued 2 s after the step fails at the close and
 * counts as an error, with its latency so far.
 * @param {number} port
 * @param {number} rate
 * @param {number} stepMs
 */
async function naiveStep (port, rate, stepMs) {
  const client = await ninesClient(port);
  const h = createHist();
  const periodMs = 1000 / rate;
  let k = 0;
  let errors = 0;
  let pending = 0;
  let done = 0;
  const t0 = now();
  const timer = setInterval(() => {
    const intended = t0 + BigInt(Math.round(k * periodMs * 1e6));
    k++;
    pending++;
    client.read().then(() => record(h, now() - intended), () => { errors++; record(h, now() - intended); })
      .finally(() => { pending--; done++; });
  }, periodMs);
  await sleep(stepMs);
  clearInterval(timer);
  const sentFor = Number(now() - t0) / 1e9;
  for (let i = 0; i < 200 && pending > 0; i++) await sleep(10); // in-flight requests still count
  await client.close();
  for (let i = 0; i < 200 && pending > 0; i++) await sleep(10); // the close fails what was left
  return { hist: h, errors, count: done, reqPerSec: k / sentFor };
}

/**
 * The saturation point of one round's steps.
 * @param {Array<{rate: number, reqPerSec: number, p99: number}>} steps in rate order
 * @returns {{held: number, saturatedAt: number|null}} the last offered rate held, the first not held
 */
function saturation (steps) {
  let held = 0;
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i];
    const prev = i > 0 ? steps[i - 1].p99 : Infinity;
    if (s.reqPerSec < 0.95 * s.rate || (s.p99 > 2 * prev && s.p99 > 1e6)) return { held, saturatedAt: s.rate };
    held = s.rate;
  }
  return { held, saturatedAt: null };
}

run(async () => {
  const o = options();
  const stepMs = o.quick ? 300 : 5000;
  const server = await startReferenceModbusServer();
  const client = await ninesClient(server.port);
  const capacity = await closedLoop(client.read, { count: 1e6, durationMs: o.quick ? 300 : 2000, warmup: o.warmup });
  const cap = capacity.reqPerSec;
  const cap80 = Math.round(cap * 0.8 / 100) * 100;
  // issue 20 asks for the rate held with p99 flat up to 90 % of the closed-loop capacity
  const cap90 = Math.round(cap * 0.9 / 100) * 100;
  const rates = [...(o.quick ? QUICK_RATES : RATES), cap80, cap90].filter((r, i, a) => r > 0 && a.indexOf(r) === i).sort((a, b) => a - b);
  const loops = { nines: 'nines scheduler (worker thread)', naive: 'naive setInterval loop (main thread)' };
  const rows = {};
  for (const [key, name] of Object.entries(loops)) rows[key] = rates.map((r) => new Row(`${key}-${r}`, `${name}, ${r.toLocaleString('en-US')}/s offered`, { rate: r }));
  const held = { nines: new Row('nines-held', loops.nines), naive: new Row('naive-held', loops.naive) };
  /** Records one round's steps of a loop and its saturation point. */
  const finishRound = (key, results) => {
    const steps = results.map((r, i) => {
      rows[key][i].addLatency(r, { offered: rates[i], ...(r.lag ? { lagP99: stats(r.lag).p99 } : {}) });
      return { rate: rates[i], reqPerSec: r.reqPerSec, p99: stats(r.hist).p99 };
    });
    const s = saturation(steps);
    held[key].add({ capacity: cap, heldRate: s.held, heldFraction: s.held / cap, saturatedAt: s.saturatedAt ?? NaN });
  };
  const variants = [
    { row: held.nines, run: async () => finishRound('nines', await ninesSteps(server.port, rates, stepMs, o.warmup)) },
    {
      row: held.naive,
      run: async () => {
        const results = [];
        for (const rate of rates) results.push(await naiveStep(server.port, rate, stepMs));
        finishRound('naive', results);
      }
    }
  ];
  await interleave(Math.min(o.rounds, 3), variants);
  await client.close();
  await server.stop();
  const stepColumns = [
    { key: 'offered', label: 'offered req/s', unit: 'int', spread: false }, { key: 'reqPerSec', label: 'achieved req/s', unit: 'int' },
    { key: 'p50', label: 'p50', unit: 'ns' }, { key: 'p99', label: 'p99', unit: 'ns' }, { key: 'p999', label: 'p99.9', unit: 'ns' },
    { key: 'max', label: 'max', unit: 'ns' }, { key: 'errors', label: 'errors', unit: 'int' }
  ];
  return {
    question: 4,
    name: 'sweep',
    title: 'Offered-load sweep, one connection: nines scheduler vs a naive setInterval loop',
    latency: true,
    plotRows: ['nines-1000', `nines-${cap80}`, 'nines-20000', 'naive-1000', 'naive-20000'],
    server: server.name,
    sections: [
      { title: 'Saturation (per round: last offered rate held, as a fraction of the closed-loop capacity)', kind: 'custom', rows: Object.values(held), columns: [{ key: 'capacity', label: 'closed-loop capacity req/s', unit: 'int' }, { key: 'heldRate', label: 'held up to req/s', unit: 'int' }, { key: 'heldFraction', label: 'of capacity', unit: 'ratio' }, { key: 'saturatedAt', label: 'saturated at req/s', unit: 'int' }] },
      ...Object.entries(loops).map(([key, name]) => ({ title: `${name}: response time from the intended send time`, kind: 'custom', rows: rows[key], columns: key === 'nines' ? [...stepColumns, { key: 'lagP99', label: 'dispatch lag p99', unit: 'ns' }] : stepColumns }))
    ],
    notes: [`${stepMs / 1000} s per step; offered rates ${rates.join(', ')} req/s (${cap80} and ${cap90} are 80 and 90 % of the closed-loop capacity measured first). The nines scheduler waits as \`nines sweep\` does (precision spin).`,
      'The naive loop cannot offer more than about 1,000 req/s: setInterval clamps periods below 1 ms to 1 ms; the slots it never sends are not in its histogram (that is coordinated omission), but its achieved rate shows them.'],
    cmdlines: [server.cmdline]
  };
});
