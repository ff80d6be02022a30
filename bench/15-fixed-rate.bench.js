'use strict';

/**
 * Question 15 (issue 20): at a fixed rate, is the instrument's own error below what it measures?
 * nines' fixed-rate probe (a worker thread, one Modbus TCP connection, FC3 ×10) with each wait
 * (`precision: spin` and `sleep`) beside the C open-loop reference client (libmodbus;
 * clock_nanosleep to just before the intended time, then a spin: c/modbus-client.c `rate=`), all
 * against the C libmodbus server, latency from the intended send time. Rates from 100/s to 80 % of
 * the C client's closed-loop rate in the same placement, measured first. Then pipelined: nines at
 * 8 in flight (spin) at 40 % of that rate, against the C client paced at the same rate.
 *
 * Both CPU placements (lib/placement.js): server on CPU 0, client on CPU 0 (one core) or CPU 1
 * (two cores). Rounds interleave every variant; each ratio is nines ÷ C from the same round, rate
 * and placement, reported as the median and min–max over rounds. Per run also: nines' dispatch lag
 * (the probe's own lateness, its worker's lag histogram), and each client's CPU as % of one core
 * over the measured run (the C client's getrusage; the nines process's process.cpuUsage). The load
 * average is recorded with every round: this machine is shared.
 */

const os = require('node:os');
const path = require('node:path');
const { options, Row, interleave, run } = require('./lib/question');
const { startServer, runJson } = require('./lib/procs');
const { cPath, cSkipReason, runCClient } = require('./lib/c-peers');
const { decode } = require('./lib/hist');
const { placements: allPlacements, pinned } = require('./lib/placement');

const CHILD = path.join(__dirname, 'lib', 'fixed-rate-child.js');
/** Fixed rates, requests/s; the last step is 80 % of the C client's closed-loop rate (issue 20) */
const RATES = [100, 1000, 5000, 10000];
const TOP_SHARE = 0.8;
/** The pipelined comparison: nines at this many in flight at this share of the C closed-loop rate (issue 9's) */
const PIPE_INFLIGHT = 8;
const PIPE_SHARE = 0.4;
const MODES = ['spin', 'sleep'];

run(async () => {
  const o = options();
  const rounds = o.quick ? 1 : 3;
  const durationMs = o.quick ? 500 : 3000;
  const warmup = o.quick ? 1000 : 5000;
  // nines' warm-up is longer: the probe runs it as a closed loop, then part of it paced
  // (measure/probe.js pacedWarmup), and V8 compiles the paced code (the waits, the pacing) only
  // after several thousand paced requests. With 5,000 (half a second paced at 10,000/s) the
  // compiler was still at work in the measured run, and on one core its thread took the CPU from
  // the probe's for 1-5 ms at a time: p99.9 1.6-1.8 ms, max 3.9-4.1 ms, against 0.23-0.29 ms and
  // 0.5-1.6 ms with 30,000 (3 interleaved runs each, 2026-11-26; --trace-opt showed no compilation
  // in the measured run then; 10,000 is as many paced, pacedWarmup's own count). Near capacity
  // 10,000 was too few: the paced part is at most the warm-up asked for, 0.28 s at 35,500/s, and
  // the spin's code, first run after it, was compiled in the measured run (15-18 functions, 44-62
  // ms of a helper thread, --trace-opt); with 40,000 (the paced part a second there) none was,
  // in 2 runs of 3. So a second's worth where that is more than 10,000 (a warm-up of 40,000 at
  // every rate took the question past its time limit). The C client has nothing to compile: its
  // warm-up stays a closed loop
  const ninesWarmup = (rate) => (o.quick ? 1000 : Math.max(10000, Math.ceil(rate)));
  const count = 50000000; // time-bound: the count only caps a runaway
  const cmdlines = new Set();
  const notes = [];
  const loads = [];

  const { placements, notes: placementNotes } = allPlacements();
  notes.push(...placementNotes);
  if (!cPath('modbus-server') || !cPath('modbus-client')) {
    const why = cSkipReason('modbus-server') || cSkipReason('modbus-client');
    return { question: 15, name: 'fixed-rate', title: 'Fixed rate: nines vs the C open-loop reference client', sections: [], notes: [`not measured: ${why}`] };
  }
  const [scmd, sargs] = pinned(placements[0].server, cPath('modbus-server'), []);
  const server = await startServer(scmd, sargs, { label: 'modbus-server' });
  cmdlines.add(server.cmdline);

  const cRun = async (place, ratePerSec) => {
    const r = await runCClient('modbus-client', { port: server.port, count, durationMs, warmup, ratePerSec, cpu: place.client });
    cmdlines.add(r.cmdline.replace(/ \/tmp\/\S+/, ' <samples>').replace(/ \d+ (\d+ \d+ \d+ <samples>)/, ' <port> $1'));
    const j = r.json;
    return { hist: r.hist, count: j.count, errors: j.errors, reqPerSec: j.reqPerSec, lagP99Ns: j.lagP99Ns, cpuPct: j.elapsedNs ? 100 * j.cpuNsPerReq * j.count / j.elapsedNs : null };
  };
  const ninesRun = async (place, ratePerSec, precision, inflight = 1) => {
    const spec = { port: server.port, ratePerSec, precision, inflight, durationMs, warmup: ninesWarmup(ratePerSec) };
    const [cmd, args] = pinned(place.client, process.execPath, [CHILD, JSON.stringify(spec)]);
    cmdlines.add([cmd, ...args].join(' ').replace(/"port":\d+/, '"port":<port>'));
    const r = await runJson(cmd, args, { timeoutMs: durationMs + 60000 });
    return { ...r, hist: decode(r.hist) };
  };

  // the closed-loop capacity per placement, from the C client: the top rate and the pipelined rate
  const capacity = {};
  for (const p of placements) {
    const r = await cRun(p);
    capacity[p.id] = r.reqPerSec;
  }
  const ratesOf = (p) => [...RATES.filter((x) => x < TOP_SHARE * capacity[p.id]), Math.round(TOP_SHARE * capacity[p.id] / 100) * 100];

  const rows = {}; // placement → rate → {c, spin, sleep, ratio: {spin, sleep}}
  const variants = [];
  const last = {};
  for (const p of placements) {
    rows[p.id] = {};
    for (const rate of ratesOf(p)) {
      const key = `${p.id}/${rate}`;
      const c = new Row(`c-${rate}-${p.id}`, `C reference at ${rate}/s`, { placement: p.id, offered: rate });
      const set = { c, ratio: {} };
      variants.push({
        row: c,
        run: async () => {
          const r = await cRun(p, rate);
          last[key] = r;
          c.addLatency(r, { offered: rate, held: r.reqPerSec >= 0.95 * rate ? 1 : 0, lagP99: r.lagP99Ns, cpuPct: r.cpuPct, load1: os.loadavg()[0] });
        }
      });
      for (const mode of MODES) {
        const n = new Row(`n-${mode}-${rate}-${p.id}`, `nines, precision ${mode}, at ${rate}/s`, { placement: p.id, offered: rate, precision: mode });
        const ratio = new Row(`ratio-${mode}-${rate}-${p.id}`, `${rate}/s, precision ${mode}`, { placement: p.id, offered: rate, precision: mode });
        set[mode] = n;
        set.ratio[mode] = ratio;
        variants.push({
          row: n,
          run: async () => {
            const r = await ninesRun(p, rate, mode);
            n.addLatency(r, { offered: rate, held: r.fellBehind ? 0 : 1, lagP99: r.lagP99Ns, lagMax: r.lagMaxNs, cpuPct: r.cpuPct, load1: os.loadavg()[0] });
            const ref = last[key];
            if (!ref) return;
            const mine = n.runs[n.runs.length - 1];
            const theirs = c.runs[c.runs.length - 1];
            ratio.add({
              p50Diff: mine.p50 - theirs.p50,
              p99Ratio: mine.p99 / theirs.p99,
              p999Ratio: mine.p999 / theirs.p999,
              max: mine.max,
              cMax: theirs.max,
              lagP99: mine.lagP99,
              cLagP99: theirs.lagP99,
              cpuPct: mine.cpuPct,
              cCpuPct: theirs.cpuPct,
              load1: os.loadavg()[0]
            });
          }
        });
      }
      rows[p.id][rate] = set;
    }
  }
  // pipelined at a fixed rate: the C client keeps one in flight, nines 8
  const pipe = {};
  for (const p of placements) {
    const rate = Math.max(100, Math.round(PIPE_SHARE * capacity[p.id] / 100) * 100);
    const key = `${p.id}/pipe`;
    const c = new Row(`pipe-c-${p.id}`, `C reference at ${rate}/s (1 in flight)`, { placement: p.id, offered: rate });
    const n = new Row(`pipe-n-${p.id}`, `nines, precision spin, ${PIPE_INFLIGHT} in flight, at ${rate}/s`, { placement: p.id, offered: rate });
    const ratio = new Row(`pipe-ratio-${p.id}`, `${rate}/s, ${PIPE_INFLIGHT} in flight`, { placement: p.id, offered: rate });
    pipe[p.id] = { c, n, ratio };
    variants.push({ row: c, run: async () => { const r = await cRun(p, rate); last[key] = r; c.addLatency(r, { offered: rate, held: r.reqPerSec >= 0.95 * rate ? 1 : 0, cpuPct: r.cpuPct }); } });
    variants.push({
      row: n,
      run: async () => {
        const r = await ninesRun(p, rate, 'spin', PIPE_INFLIGHT);
        n.addLatency(r, { offered: rate, held: r.fellBehind ? 0 : 1, lagP99: r.lagP99Ns, cpuPct: r.cpuPct });
        if (!last[key]) return;
        const mine = n.runs[n.runs.length - 1];
        const theirs = c.runs[c.runs.length - 1];
        ratio.add({ p50Diff: mine.p50 - theirs.p50, p99Ratio: mine.p99 / theirs.p99, p999Ratio: mine.p999 / theirs.p999, max: mine.max, cMax: theirs.max, lagP99: mine.lagP99 });
      }
    });
  }
  // the load average with each round, as it starts
  const withLoad = variants.map((v, i) => (i === 0 ? { row: v.row, run: async (r) => { loads.push(os.loadavg().map((x) => Number(x.toFixed(2)))); await v.run(r); } } : v));
  await interleave(rounds, withLoad);
  await server.stop();

  const sections = [];
  const ratioColumns = [
    { key: 'p50Diff', label: 'p50 − C p50', unit: 'ns' }, { key: 'p99Ratio', label: 'p99 ×', unit: 'ratio' }, { key: 'p999Ratio', label: 'p99.9 ×', unit: 'ratio' },
    { key: 'max', label: 'nines max', unit: 'ns' }, { key: 'cMax', label: 'C max', unit: 'ns' }, { key: 'lagP99', label: 'dispatch lag p99', unit: 'ns' }, { key: 'cLagP99', label: 'C dispatch lag p99', unit: 'ns' },
    { key: 'cpuPct', label: 'nines CPU % of a core', unit: 'pct' }, { key: 'cCpuPct', label: 'C CPU %', unit: 'pct' }, { key: 'load1', label: 'load (1 min)', unit: 'num' }
  ];
  for (const p of placements) {
    const where = `${p.label}${p.client === undefined ? '' : ` (server on CPU ${p.server}, client on CPU ${p.client})`}`;
    const rates = Object.keys(rows[p.id]).map(Number).sort((a, b) => a - b);
    sections.push({
      title: `Fixed rate, one connection, ${where}: response time from the intended send time (C closed loop here: ${Math.round(capacity[p.id])} req/s)`,
      kind: 'latency',
      rows: rates.flatMap((rate) => [rows[p.id][rate].c, ...MODES.map((m) => rows[p.id][rate][m])])
    });
    sections.push({
      title: `Fixed rate, ${where}: nines ÷ the C reference, taken within each round (median, min–max over rounds)`,
      kind: 'custom',
      columns: ratioColumns,
      rows: rates.flatMap((rate) => MODES.map((m) => rows[p.id][rate].ratio[m]))
    });
  }
  sections.push({
    title: `Pipelined at a fixed rate (${PIPE_SHARE * 100} % of the C closed-loop rate): nines at ${PIPE_INFLIGHT} in flight vs the C reference (1 in flight)`,
    kind: 'latency',
    rows: placements.flatMap((p) => [pipe[p.id].c, pipe[p.id].n])
  });
  sections.push({
    title: 'Pipelined at a fixed rate: nines ÷ C within each round',
    kind: 'custom',
    columns: ratioColumns.slice(0, 6),
    rows: placements.map((p) => Object.assign(pipe[p.id].ratio, { label: `${p.label}, ${pipe[p.id].ratio.label}` }))
  });
  notes.push(`Rounds: ${rounds}, ${durationMs} ms per run after warm-up requests (nines: ${o.quick ? 1000 : '10,000 or a second\'s worth, whichever is more'}, a closed loop, then up to as many paced: a second at least, 10,000 if they take at most 5 s, so that V8 has compiled the paced code before the run; C: ${warmup}, a closed loop). At 100/s a run holds ${Math.round(durationMs / 10)} requests: its p99.9 and max are the same few samples.`,
    'Latency counts from the intended send time for both clients; catch-up `burst` (a request whose time has passed goes when the connection is free). Dispatch lag: the probe\'s own lateness, actual write − the later of the intended time and the moment the connection became free; the C reference\'s, counted the same way, beside it (a late wake-up that both show is the machine\'s).',
    'CPU: the C client\'s getrusage over its measured loop; the nines process\'s process.cpuUsage (main thread, probe worker, libuv) from the measured run\'s start to its result, as % of one core.',
    `Load average (1, 5, 15 min) as each round started: ${loads.map((l) => l.join(' / ')).join('; ')}. This machine is shared with other work: a descheduled process shows as a millisecond in either client's max.`);
  return {
    question: 15,
    name: 'fixed-rate',
    title: 'Fixed rate: nines (precision spin and sleep) vs the C open-loop reference client, one connection, two CPU placements',
    latency: true,
    plotRows: placements.map((p) => `n-spin-${ratesOf(p)[ratesOf(p).length - 1]}-${p.id}`),
    placements: placements.map((p) => p.id),
    capacity,
    loads,
    sections,
    notes,
    cmdlines: [...cmdlines]
  };
}, { limitMs: 780000 });

