'use strict';

/**
 * Question 4: does `nines sweep` hold an offered rate, and where does it saturate? Offered load from
 * 100/s up, in steps, to 80 and 90 % of nines' own closed-loop capacity in the same placement
 * (measured first, in a worker thread, as a sweep runs) and one step at 110 % that cannot be held,
 * FC3 ×10 on one connection against the C libmodbus server. Two loops, each in its own process:
 * - `nines sweep` as the command runs it (lib/sweep-child.js: a worker thread, precision spin,
 *   catch-up burst, a 10,000-request warm-up);
 * - the naive `setInterval(poll, 1000 / rate)` loop most people write, on the nines driver
 *   (lib/naive-sweep-child.js), at the rates it can offer at all.
 * - beside them, the C open-loop reference client (libmodbus; clock_nanosleep to just before the
 *   intended time, then a spin: c/modbus-client.c `rate=`) at the nines sweep's rates, one run per
 *   step, as question 15 runs it. A machine that stalls for milliseconds (this shared 2-core VM's
 *   kernel threads and hypervisor do) raises both clients' p99 at the same steps; nines' p99 ÷ the
 *   C client's, taken within each round, is what is nines' own.
 * All are measured from the intended send time t0 + k / rate, so coordinated omission shows.
 * Saturation (latency-method.md): the first step where the achieved rate is below 95 % of the
 * offered rate, or p99 more than doubles over the previous step's, counted only above 1 ms, so that
 * microsecond noise on a shared machine is not called saturation.
 *
 * Both CPU placements (lib/placement.js): server on CPU 0, the client on CPU 0 (one core) or CPU 1
 * (two cores). Rounds interleave the loops and placements.
 */

const path = require('node:path');
const { options, Row, interleave, run } = require('./lib/question');
const { startServer, runJson } = require('./lib/procs');
const { cPath, cSkipReason, runCClient } = require('./lib/c-peers');
const { stats, decode } = require('./lib/hist');
const { placements: allPlacements, pinned } = require('./lib/placement');

const SWEEP_CHILD = path.join(__dirname, 'lib', 'sweep-child.js');
const NAIVE_CHILD = path.join(__dirname, 'lib', 'naive-sweep-child.js');
const CAPACITY_CHILD = path.join(__dirname, 'lib', 'fixed-rate-child.js');
const RATES = [100, 500, 1000, 2000, 5000, 10000, 15000, 20000];
const QUICK_RATES = [100, 1000, 5000];
/** The steps near capacity: the target's 90 %, 80 % below it, and one that cannot be held */
const SHARES = [0.8, 0.9, 1.1];
/** The naive loop's steps: setInterval cannot offer more than about 1,000/s, so higher rates only repeat that */
const NAIVE_RATES = [100, 500, 1000, 2000];

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
  const stepMs = o.quick ? 300 : 3000;
  const rounds = Math.min(o.rounds, 3);
  const warmup = o.quick ? 1000 : 10000;
  if (!cPath('modbus-server')) {
    return { question: 4, name: 'sweep', title: 'Offered-load sweep', sections: [], notes: [`not measured: ${cSkipReason('modbus-server')}`] };
  }
  const { placements, notes } = allPlacements();
  const [scmd, sargs] = pinned(placements[0].server, cPath('modbus-server'), []);
  const server = await startServer(scmd, sargs, { label: 'modbus-server' });
  const cmdlines = new Set([server.cmdline]);
  const child = (place, file, spec, timeoutMs) => {
    const [cmd, args] = pinned(place.client, process.execPath, [file, JSON.stringify(spec)]);
    cmdlines.add([cmd, ...args].join(' ').replace(/"port":\d+/, '"port":<port>').replace(/"rates":\[[^\]]*\]/, '"rates":[…]'));
    return runJson(cmd, args, { timeoutMs });
  };

  // nines' closed-loop capacity per placement, in a worker thread as the sweep runs
  const capacity = {};
  for (const p of placements) {
    const r = await child(p, CAPACITY_CHILD, { port: server.port, ratePerSec: 'max', precision: 'spin', durationMs: o.quick ? 300 : 2000, warmup }, 60000);
    capacity[p.id] = r.reqPerSec;
  }
  const ratesOf = (p) => {
    const cap = capacity[p.id];
    const top = SHARES.map((x) => Math.round(x * cap / 100) * 100);
    return [...(o.quick ? QUICK_RATES : RATES).filter((r) => r < top[0]), ...top];
  };

  // the C reference first in each round: each nines step is divided by the C step just before it
  const loops = { c: 'C reference (open loop, libmodbus)', nines: 'nines sweep (worker thread)', naive: 'naive setInterval loop' };
  /** One C client run per step, at the nines sweep's rates (warm-up: a closed loop, as in question 15) */
  const cSweep = async (p, rates) => {
    const steps = [];
    for (const rate of rates) {
      const r = await runCClient('modbus-client', { port: server.port, count: 50000000, durationMs: stepMs, warmup: o.quick ? 1000 : 5000, ratePerSec: rate, cpu: p.client });
      cmdlines.add(r.cmdline.replace(/ \/tmp\/\S+/, ' <samples>').replace(/ \d+ (\d+ \d+ \d+ <samples>)/, ' <port> $1').replace(/rate=\d+/, 'rate=<rate>'));
      steps.push({ rate, hist: r.hist, reqPerSec: r.json.reqPerSec, errors: r.json.errors, lagP99Ns: r.json.lagP99Ns });
    }
    return { steps };
  };
  /** nines ÷ C per step, within each round: placement → rate → row */
  const ratios = {};
  const lastC = {};
  const rows = {}; // placement → loop → rows per rate
  const held = {}; // placement → loop → row
  const variants = [];
  for (const p of placements) {
    rows[p.id] = {};
    held[p.id] = {};
    for (const [key, name] of Object.entries(loops)) {
      const rates = key === 'naive' ? NAIVE_RATES.filter((r) => !o.quick || r <= 1000) : ratesOf(p);
      rows[p.id][key] = rates.map((r) => new Row(`${key}-${r}-${p.id}`, `${name}, ${r.toLocaleString('en-US')}/s offered`, { rate: r, placement: p.id }));
      held[p.id][key] = new Row(`${key}-held-${p.id}`, `${name}, ${p.label}`, { placement: p.id });
      const file = key === 'nines' ? SWEEP_CHILD : NAIVE_CHILD;
      const spec = { port: server.port, rates, stepMs, ...(key === 'nines' ? { warmup } : {}) };
      if (key === 'nines') {
        ratios[p.id] = rates.map((r) => new Row(`ratio-${r}-${p.id}`, `${r.toLocaleString('en-US')}/s offered`, { rate: r, placement: p.id }));
      }
      variants.push({
        row: held[p.id][key],
        run: async () => {
          const r = key === 'c' ? await cSweep(p, rates) : await child(p, file, spec, rates.length * (stepMs + 5000) + 60000);
          const steps = r.steps.map((s, i) => {
            const hist = key === 'c' ? s.hist : decode(s.hist);
            const st = stats(hist);
            if (key === 'c') lastC[`${p.id}/${s.rate}`] = st;
            const ref = lastC[`${p.id}/${s.rate}`];
            if (key === 'nines' && ref) ratios[p.id][i].add({ p99Ratio: st.p99 / ref.p99, p999Ratio: st.p999 / ref.p999, p99: st.p99, cP99: ref.p99, max: st.max, cMax: ref.max });
            rows[p.id][key][i].addLatency({ hist, count: hist.totalCount, errors: s.errors, reqPerSec: s.reqPerSec }, { offered: s.rate, ...(s.lagP99Ns === undefined ? {} : { lagP99: s.lagP99Ns }) });
            return { rate: s.rate, reqPerSec: s.reqPerSec, p99: st.p99 };
          });
          const sat = saturation(steps);
          // nines sweep's own verdict beside the bench's: its rule leaves out p99 rises while the device is under half busy (measure/sweep.js saturationIndex)
          const own = key === 'nines' ? { ownSaturatedAt: r.saturatedAt ?? NaN } : {};
          held[p.id][key].add({ capacity: capacity[p.id], heldRate: sat.held, heldFraction: sat.held / capacity[p.id], saturatedAt: sat.saturatedAt ?? NaN, ...own });
        }
      });
    }
  }
  await interleave(rounds, variants);
  await server.stop();

  const stepColumns = [
    { key: 'offered', label: 'offered req/s', unit: 'int', spread: false }, { key: 'reqPerSec', label: 'achieved req/s', unit: 'int' },
    { key: 'p50', label: 'p50', unit: 'ns' }, { key: 'p99', label: 'p99', unit: 'ns' }, { key: 'p999', label: 'p99.9', unit: 'ns' },
    { key: 'max', label: 'max', unit: 'ns' }, { key: 'errors', label: 'errors', unit: 'int' }
  ];
  const sections = [{
    title: 'Saturation (per round: last offered rate held, as a fraction of nines\' closed-loop capacity in that placement)',
    kind: 'custom',
    rows: placements.flatMap((p) => Object.values(held[p.id])),
    columns: [{ key: 'capacity', label: 'closed-loop capacity req/s', unit: 'int' }, { key: 'heldRate', label: 'held up to req/s', unit: 'int' }, { key: 'heldFraction', label: 'of capacity', unit: 'ratio' }, { key: 'saturatedAt', label: 'saturated at req/s', unit: 'int' }, { key: 'ownSaturatedAt', label: 'nines sweep\'s own verdict: saturated at req/s', unit: 'int' }]
  }];
  for (const p of placements) {
    const where = `${p.label}${p.client === undefined ? '' : ` (server on CPU ${p.server}, client on CPU ${p.client})`}`;
    for (const [key, name] of Object.entries(loops)) {
      sections.push({
        title: `${name}, ${where}: response time from the intended send time`,
        kind: 'custom',
        rows: rows[p.id][key],
        columns: key === 'naive' ? stepColumns : [...stepColumns, { key: 'lagP99', label: 'dispatch lag p99', unit: 'ns' }]
      });
    }
    sections.push({
      title: `nines sweep ÷ the C reference, ${where}, taken within each round (median, min–max over rounds)`,
      kind: 'custom',
      rows: ratios[p.id],
      columns: [{ key: 'p99Ratio', label: 'p99 ×', unit: 'ratio' }, { key: 'p999Ratio', label: 'p99.9 ×', unit: 'ratio' }, { key: 'p99', label: 'nines p99', unit: 'ns' }, { key: 'cP99', label: 'C p99', unit: 'ns' }, { key: 'max', label: 'nines max', unit: 'ns' }, { key: 'cMax', label: 'C max', unit: 'ns' }]
    });
  }
  const first = placements[0].id;
  return {
    question: 4,
    name: 'sweep',
    title: 'Offered-load sweep, one connection: nines sweep vs a naive setInterval loop',
    latency: true,
    plotRows: [`nines-1000-${first}`, `nines-${ratesOf(placements[0]).at(-2)}-${first}`, `naive-1000-${first}`],
    server: server.name,
    sections,
    notes: [...notes,
      `${rounds} rounds, ${stepMs / 1000} s per step. The steps near capacity are ${SHARES.map((x) => `${Math.round(x * 100)} %`).join(', ')} of nines' closed-loop rate in the same placement (a probe in a worker thread, measured first: ${placements.map((p) => `${p.label} ${Math.round(capacity[p.id])} req/s`).join(', ')}). nines sweep: ${warmup} warm-up requests (a closed loop, then paced at the first rate), precision spin, catch-up burst, as \`nines sweep --warmup ${warmup}\` runs.`,
      'The naive loop cannot offer more than about 1,000 req/s: setInterval clamps periods below 1 ms to 1 ms; the slots it never sends are not in its histogram (that is coordinated omission), but its achieved rate shows them.'],
    cmdlines: [...cmdlines]
  };
  // about 170 s a round: each placement's C, nines and naive sweeps, 3 s a step
}, { limitMs: 780000 });
