'use strict';

/**
 * Question 12: what does pipelining buy on one Modbus TCP connection? The nines client with 1, 4, 8
 * and 16 requests in flight (maxInflight), closed loop, FC3 ×10 registers, unit 1, beside the C
 * libmodbus client (which keeps one in flight), against the C libmodbus server and against the nines
 * simulator. Then a fixed offered rate that both reach (half the C client's closed-loop rate in this
 * run): the C client paced at it, and nines at 8 in flight run by its own probe; p99 compared.
 *
 * Placement: on a 2-core machine a closed loop is bimodal. With client and server on one core they
 * take turns (each wakes the other), on two cores they run at once; which one a run gets depends on
 * the scheduler and on the other load. So both are measured on purpose, pinned with `taskset`: the
 * server on CPU 0 always, the client on CPU 0 (one core) or CPU 1 (two cores). Rounds interleave
 * every variant of both placements, and every ratio is taken within one round (nines and the C
 * client against the same server, minutes apart at most), then reported as the median with the
 * min–max over rounds, so one lucky run cannot make the figure.
 */

const path = require('node:path');
const { options, Row, interleave, run } = require('./lib/question');
const { startServer, runJson } = require('./lib/procs');
const { cPath, cSkipReason, runCClient } = require('./lib/c-peers');
const { decode } = require('./lib/hist');
const { placements: allPlacements, pinned } = require('./lib/placement');
const { procCpuNs } = require('./lib/proc-cpu');

const CHILD = path.join(__dirname, 'lib', 'pipeline-child.js');
const SIM = path.join(__dirname, 'lib', 'sim-process.js');
const INFLIGHT = [1, 4, 8, 16];
/** The fixed-rate comparison runs nines at this many in flight (the issue's req/s target is at 8) */
const RATE_INFLIGHT = 8;
/** The fixed offered rate, as a share of the C client's closed-loop rate against the same server and placement
 * (at half, the paced C client on one core did not hold it in every round: not a rate both reach) */
const RATE_SHARE = 0.4;

/** @param {number[]} xs @returns {number} the median */
function median (xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

run(async () => {
  const o = options();
  const rounds = o.quick ? 1 : 3;
  const durationMs = o.durationMs;
  const count = o.quick ? 50000 : 5000000; // time-bound: the count only caps a runaway
  // a JIT-warm client: at tens of thousands of requests per second, 2,000 leave nines on its cold path
  const warmup = o.quick ? 2000 : 20000;
  const cmdlines = new Set();
  const notes = [];

  const { placements, notes: placementNotes } = allPlacements();
  notes.push(...placementNotes);
  const serverCore = placements[0].server;

  const servers = [];
  if (cPath('modbus-server')) {
    const [cmd, args] = pinned(serverCore, cPath('modbus-server'), []);
    servers.push({ id: 'csrv', label: 'C libmodbus server', proc: await startServer(cmd, args, { label: 'modbus-server' }) });
  } else {
    notes.push(`The C libmodbus server could not be built (${cSkipReason('modbus-server')}): only the nines simulator is measured.`);
  }
  {
    const [cmd, args] = pinned(serverCore, process.execPath, [SIM, 'modbus']);
    servers.push({ id: 'sim', label: 'nines simulator', proc: await startServer(cmd, args, { label: 'nines modbus simulator' }) });
  }
  for (const s of servers) cmdlines.add(s.proc.cmdline);
  const cClient = cPath('modbus-client');
  if (!cClient) notes.push(`The C libmodbus client could not be built (${cSkipReason('modbus-client')}): no ratios.`);

  /** The server's CPU per request over a client run (warm-up included: the server served those too). */
  const withServerCpu = async (server, fn) => {
    const before = procCpuNs(server.proc.pid);
    const r = await fn();
    const after = procCpuNs(server.proc.pid);
    const served = r.count + warmup;
    return { ...r, serverCpuNsPerReq: before === null || after === null || served === 0 ? undefined : Math.round((after - before) / served) };
  };
  /** One closed-loop or fixed-rate run of the nines child, pinned. */
  const ninesRun = (place, server, inflight, ratePerSec) => withServerCpu(server, async () => {
    const spec = { port: server.proc.port, inflight, count, durationMs, warmup, ratePerSec };
    const [cmd, args] = pinned(place.client, process.execPath, [CHILD, JSON.stringify(spec)]);
    cmdlines.add([cmd, ...args].join(' ').replace(/"port":\d+/, '"port":<port>'));
    const r = await runJson(cmd, args, { timeoutMs: durationMs + 60000 });
    return { ...r, hist: decode(r.hist) };
  });
  const cRun = (place, server, ratePerSec) => withServerCpu(server, async () => {
    const r = await runCClient('modbus-client', { port: server.proc.port, count, durationMs, warmup, ratePerSec, cpu: place.client });
    cmdlines.add(r.cmdline.replace(/ \/tmp\/\S+/, ' <samples>').replace(/ \d+ (\d+ \d+ \d+ <samples>)/, ' <port> $1'));
    return { hist: r.hist, count: r.json.count, errors: r.json.errors, reqPerSec: r.json.reqPerSec, offered: ratePerSec, cpuNsPerReq: r.json.cpuNsPerReq };
  });

  // --- closed loop ---------------------------------------------------------------------------------
  const closed = {}; // placement → server → {c: Row, n: {k: Row}, ratio: {k: Row}}
  const lastC = {}; // `${placement}/${server}` → this round's C result
  const variants = [];
  for (const p of placements) {
    closed[p.id] = {};
    for (const s of servers) {
      const key = `${p.id}/${s.id}`;
      const c = new Row(`c-${s.id}-${p.id}`, `${s.label}: C libmodbus client, 1 in flight`, { placement: p.id, server: s.id });
      const n = {};
      const ratio = {};
      for (const k of INFLIGHT) {
        n[k] = new Row(`n${k}-${s.id}-${p.id}`, `${s.label}: nines, ${k} in flight`, { placement: p.id, server: s.id, inflight: k });
        ratio[k] = new Row(`ratio-n${k}-${s.id}-${p.id}`, `${s.label}: nines ${k} in flight ÷ C client`, { placement: p.id, server: s.id, inflight: k });
      }
      closed[p.id][s.id] = { c, n, ratio };
      if (!cClient) c.skip(cSkipReason('modbus-client'));
      variants.push({ row: c, run: async () => { const r = await cRun(p, s); lastC[key] = r; c.addLatency(r, { cpuNsPerReq: r.cpuNsPerReq, serverCpuNsPerReq: r.serverCpuNsPerReq }); } });
      for (const k of INFLIGHT) {
        variants.push({
          row: n[k],
          run: async () => {
            const r = await ninesRun(p, s, k);
            n[k].addLatency(r, { effectiveInflight: r.effectiveInflight, cpuNsPerReq: r.cpuNsPerReq, serverCpuNsPerReq: r.serverCpuNsPerReq });
            if (r.effectiveInflight < k) notes.push(`${p.label}, ${s.label}, ${k} in flight: the client fell back to ${r.effectiveInflight} (NINES_ERR_PIPELINE_UNSUPPORTED)`);
            const ref = lastC[key];
            if (!ref) return;
            const mine = n[k].runs[n[k].runs.length - 1];
            const theirs = c.runs[c.runs.length - 1];
            ratio[k].add({
              reqRatio: mine.reqPerSec / theirs.reqPerSec,
              p50Ratio: mine.p50 / theirs.p50,
              p99Ratio: mine.p99 / theirs.p99,
              reqPerSec: mine.reqPerSec,
              cReqPerSec: theirs.reqPerSec,
              cpuNsPerReq: mine.cpuNsPerReq,
              cCpuNsPerReq: theirs.cpuNsPerReq,
              serverCpuNsPerReq: mine.serverCpuNsPerReq,
              cServerCpuNsPerReq: theirs.serverCpuNsPerReq
            });
          }
        });
      }
    }
  }
  await interleave(rounds, variants);

  // --- a fixed offered rate both reach ------------------------------------------------------------
  const fixed = {};
  const rateVariants = [];
  for (const p of placements) {
    fixed[p.id] = {};
    for (const s of servers) {
      const cRows = closed[p.id][s.id].c;
      const cRate = cRows.runs.length ? median(cRows.runs.map((r) => r.reqPerSec)) : 0;
      const rate = Math.max(100, Math.round(cRate * RATE_SHARE / 100) * 100);
      const key = `${p.id}/${s.id}`;
      const c = new Row(`rate-c-${s.id}-${p.id}`, `${s.label}: C libmodbus client at ${rate}/s`, { placement: p.id, server: s.id, offered: rate });
      const n = new Row(`rate-n${RATE_INFLIGHT}-${s.id}-${p.id}`, `${s.label}: nines probe, ${RATE_INFLIGHT} in flight, at ${rate}/s`, { placement: p.id, server: s.id, offered: rate });
      const ratio = new Row(`rate-ratio-${s.id}-${p.id}`, `${s.label}: p99 nines ÷ C at ${rate}/s`, { placement: p.id, server: s.id, offered: rate });
      fixed[p.id][s.id] = { c, n, ratio };
      if (!cClient || !cRows.runs.length) {
        c.skip('no closed-loop C client figure to set the rate from');
        n.skip('no closed-loop C client figure to set the rate from');
        continue;
      }
      rateVariants.push({ row: c, run: async () => { const r = await cRun(p, s, rate); lastC[key] = r; c.addLatency(r, { offered: rate, held: r.reqPerSec >= 0.95 * rate ? 1 : 0 }); } });
      rateVariants.push({
        row: n,
        run: async () => {
          const r = await ninesRun(p, s, RATE_INFLIGHT, rate);
          n.addLatency(r, { offered: rate, held: r.fellBehind ? 0 : 1, effectiveInflight: r.effectiveInflight });
          const theirs = c.runs[c.runs.length - 1];
          const mine = n.runs[n.runs.length - 1];
          if (!theirs) return;
          ratio.add({ p99Ratio: mine.p99 / theirs.p99, p999Ratio: mine.p999 / theirs.p999, p99: mine.p99, cP99: theirs.p99, achieved: mine.reqPerSec, cAchieved: theirs.reqPerSec });
        }
      });
    }
  }
  await interleave(rounds, rateVariants);
  await Promise.all(servers.map((s) => s.proc.stop()));

  const byPlacement = (fn) => placements.flatMap((p) => servers.map((s) => fn(p, s)));
  const sections = [];
  for (const p of placements) {
    sections.push({
      title: `Closed loop, one connection, ${p.label}${p.client === undefined ? '' : ` (server on CPU ${p.server}, client on CPU ${p.client})`}`,
      kind: 'latency',
      rows: servers.flatMap((s) => [closed[p.id][s.id].c, ...INFLIGHT.map((k) => closed[p.id][s.id].n[k])])
    });
  }
  sections.push({
    title: 'Closed loop, ratios taken within each round: nines ÷ the C client against the same server (median, min–max over rounds)',
    kind: 'custom',
    columns: [{ key: 'reqRatio', label: 'req/s ×', unit: 'ratio' }, { key: 'p50Ratio', label: 'p50 ×', unit: 'ratio' }, { key: 'p99Ratio', label: 'p99 ×', unit: 'ratio' },
      { key: 'reqPerSec', label: 'nines req/s', unit: 'int' }, { key: 'cReqPerSec', label: 'C req/s', unit: 'int' },
      { key: 'cpuNsPerReq', label: 'nines CPU/req', unit: 'ns' }, { key: 'cCpuNsPerReq', label: 'C CPU/req', unit: 'ns' },
      { key: 'serverCpuNsPerReq', label: 'server CPU/req (nines)', unit: 'ns' }, { key: 'cServerCpuNsPerReq', label: 'server CPU/req (C)', unit: 'ns' }],
    rows: byPlacement((p, s) => INFLIGHT.map((k) => Object.assign(closed[p.id][s.id].ratio[k], { label: `${p.label}, ${closed[p.id][s.id].ratio[k].label}` }))).flat()
  });
  for (const p of placements) {
    sections.push({
      title: `Fixed rate, ${RATE_SHARE * 100} % of the C client's closed-loop rate, ${p.label}: response time from the intended send time`,
      kind: 'latency',
      rows: servers.flatMap((s) => [fixed[p.id][s.id].c, fixed[p.id][s.id].n])
    });
  }
  sections.push({
    title: `Fixed rate: p99 of nines (${RATE_INFLIGHT} in flight) ÷ p99 of the C client at the same offered rate, per round`,
    kind: 'custom',
    columns: [{ key: 'p99Ratio', label: 'p99 ×', unit: 'ratio' }, { key: 'p999Ratio', label: 'p99.9 ×', unit: 'ratio' }, { key: 'p99', label: 'nines p99', unit: 'ns' },
      { key: 'cP99', label: 'C p99', unit: 'ns' }, { key: 'achieved', label: 'nines req/s', unit: 'int' }, { key: 'cAchieved', label: 'C req/s', unit: 'int' }],
    rows: byPlacement((p, s) => Object.assign(fixed[p.id][s.id].ratio, { label: `${p.label}, ${fixed[p.id][s.id].ratio.label}` }))
  });
  notes.push(`Each ratio is nines ÷ C from the same round, same server and placement; rounds: ${rounds}, ${durationMs} ms per run after ${warmup} warm-up requests.`,
    'Closed-loop figures are service times (each request timed around its call, lanes included); fixed-rate figures count from the intended send time (C: `rate=` mode of c/modbus-client.c, one in flight; nines: `nines probe --inflight 8 --rate`, policy burst, in a worker thread).',
    'CPU/req: the client process\'s own CPU time (user + system, getrusage / process.cpuUsage) over the measured loop, divided by its requests: what a request costs the client besides waiting. Server CPU/req: the server process\'s CPU time (/proc/<pid>/stat) over the client\'s run, warm-up included, per request served. On one core the two share one CPU, so client + server CPU per request bounds the rate.');
  return {
    question: 12,
    name: 'pipelining',
    title: `Pipelined Modbus TCP on one connection: nines at ${INFLIGHT.join(', ')} in flight vs the C libmodbus client (1 in flight), two CPU placements`,
    latency: true,
    plotRows: placements.map((p) => `n8-${servers[0].id}-${p.id}`).concat(placements.map((p) => `c-${servers[0].id}-${p.id}`)),
    placements: placements.map((p) => p.id),
    servers: servers.map((s) => s.id),
    sections,
    notes,
    cmdlines: [...cmdlines]
  };
});
