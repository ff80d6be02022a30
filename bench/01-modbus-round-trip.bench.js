'use strict';

/**
 * Question 1: what does one Modbus TCP round trip cost — FC3, 10 holding registers, unit 1, one
 * connection, closed loop — through nines and through what users pick today, against the same
 * server? Rows: the nines driver on the main thread; `nines probe` (scheduler, recorder and driver,
 * closed loop on the main thread); a nines gateway job in a worker thread; modbus-serial alone;
 * jsmodbus; node-red-contrib-modbus in a real Node-RED (queue off and on); the C libmodbus client.
 * Server: the C libmodbus server when built, else the nines simulator (own process). Last, the
 * servers compared: the nines simulator vs the C server, same clients.
 *
 * Placement (issue 11): every client runs in its own process, pinned with taskset (lib/placement.js)
 * beside the server on one core, where the client's CPU per request shows, and on the other core,
 * where a cross-core wake-up per request sets the floor. Both placements are in every round, and
 * rounds interleave every variant; each nines row is also compared with the C client of the same
 * round and placement (median and min–max of those ratios).
 *
 * Each run is `count` requests after `warmup` (50,000 after 20,000, as issue 11 measured; the
 * warm-up runs the measured loop itself so nothing is compiled while measuring), bounded in time.
 * The nines rows and the Node peers also report what their loop cost the garbage collector: bytes
 * allocated per request, collections and their pauses (lib/gc-profile.js); the allocation of the
 * nines rows is what the quick run's regression guard compares with bench/alloc-baseline.json.
 */

const path = require('node:path');
const { options, Row, interleave, run } = require('./lib/question');
const { startServer, runJson } = require('./lib/procs');
const { cPath, cSkipReason, runCClient } = require('./lib/c-peers');
const { decode } = require('./lib/hist');
const { peerSkip } = require('./lib/peers');
const { placements: allPlacements, pinned, describe } = require('./lib/placement');

const CHILD = path.join(__dirname, 'lib', 'closed-loop-child.js');
const NODE_RED_CHILD = path.join(__dirname, 'lib', 'node-red-child.js');
const SIM = path.join(__dirname, 'lib', 'sim-process.js');

/** The nines rows: their figures are judged against the C client of the same round and placement */
const NINES = [
  { kind: 'nines', id: 'nines-main', label: 'nines driver, main thread' },
  { kind: 'probe', id: 'nines-probe', label: 'nines probe (scheduler + recorder), main thread', note: 'service time taken by the driver (probe.js), closed loop' },
  { kind: 'worker', id: 'nines-worker', label: 'nines job in a worker thread', note: 'service time taken by the driver; gateway path: scheduler, device, driver, recorder; GC of the worker thread' }
];
const PEERS = [
  { kind: 'modbus-serial', id: 'modbus-serial', label: 'modbus-serial alone' },
  { kind: 'jsmodbus', id: 'jsmodbus', label: 'jsmodbus' }
];

run(async () => {
  const o = options();
  const rounds = o.quick ? 1 : 3;
  // sizes per run: issue 11's 50,000 requests, after a warm-up long enough for the JIT; the quick
  // pass keeps the nines rows warm and long enough for a steady allocation figure (its guard)
  const size = (kind) => {
    const nines = NINES.some((n) => n.kind === kind) || kind === 'c';
    // (60,000 warm-up requests: V8 was still compiling the nines loops' code at 30,000; the worker job
    // also flushes a summary every 500 ms, several of them in its warm-up)
    if (o.quick) return nines ? { count: 20000, warmup: 30000, durationMs: 5000, allocCount: 20000, intervalMs: 500 } : { count: 2000, warmup: 200, durationMs: 300, allocCount: 0 };
    if (nines) return { count: 50000, warmup: 60000, durationMs: 8000, allocCount: 20000, intervalMs: 500 };
    // the peers run at a fifth of nines' rate: bounded by time, after a warm-up of their own
    return { count: 50000, warmup: 10000, durationMs: 3000, allocCount: 20000 };
  };
  const cmdlines = new Set();
  const { placements, notes } = allPlacements();
  const serverCore = placements[0].server;
  const servers = {};
  {
    const [cmd, args] = cPath('modbus-server') ? pinned(serverCore, cPath('modbus-server'), []) : pinned(serverCore, process.execPath, [SIM, 'modbus']);
    servers.ref = await startServer(cmd, args, { label: 'reference Modbus server' });
    servers.ref.name = cPath('modbus-server') ? 'C libmodbus server' : 'nines Modbus simulator (C server not built)';
    const [scmd, sargs] = pinned(serverCore, process.execPath, [SIM, 'modbus']);
    servers.sim = await startServer(scmd, sargs, { label: 'nines modbus simulator' });
  }
  for (const s of Object.values(servers)) cmdlines.add(s.cmdline);
  if (!cPath('modbus-server')) notes.push(`The C libmodbus server could not be built (${cSkipReason('modbus-server')}): the nines simulator serves every row.`);
  const nodeRedSkip = ['node-red', 'node-red-contrib-modbus'].map(peerSkip).filter((why) => why !== null).join('; ');

  /** One client run in its own pinned process. */
  const childRun = async (p, server, kind) => {
    const spec = { kind, port: server.port, ...size(kind) };
    const [cmd, args] = pinned(p.client, process.execPath, [CHILD, JSON.stringify(spec)]);
    cmdlines.add([cmd, ...args].join(' ').replace(/"port":\d+/, '"port":<port>'));
    const r = await runJson(cmd, args, { timeoutMs: spec.durationMs + 90000 });
    return { ...r, hist: decode(r.hist) };
  };
  const cRun = async (p, server) => {
    const { count, durationMs } = size('c');
    const warmup = 10000; // no JIT to warm: the sockets' and caches' warm-up
    const r = await runCClient('modbus-client', { port: server.port, count, durationMs, warmup, cpu: p.client });
    cmdlines.add(r.cmdline.replace(/ \/tmp\/\S+/, ' <samples>').replace(/ \d+ (\d+ \d+ \d+ <samples>)/, ' <port> $1'));
    return { hist: r.hist, count: r.json.count, errors: r.json.errors, reqPerSec: r.json.reqPerSec, cpuNsPerReq: r.json.cpuNsPerReq };
  };
  /** The per-run fields besides the latency figures: what the client's loop cost */
  const costs = (r) => {
    const out = {};
    for (const k of ['cpuNsPerReq', 'allocPerReq', 'scavenges', 'markCompacts', 'gcPauseP99Ns', 'gcPauseMaxNs']) if (typeof r[k] === 'number') out[k] = r[k];
    return out;
  };

  const byPlacement = {};
  const variants = [];
  for (const p of placements) {
    const rows = {};
    const ratios = {};
    const last = {}; // this round's C figures, per server
    const tag = (id) => `${id}-${p.id}`;
    rows.c = new Row(tag('c-libmodbus'), 'C libmodbus client', { placement: p.id });
    for (const n of NINES) {
      rows[n.id] = new Row(tag(n.id), n.label, { placement: p.id, note: n.note });
      ratios[n.id] = new Row(tag(`ratio-${n.id}`), `${p.label}: ${n.label} ÷ C client`, { placement: p.id });
    }
    for (const n of PEERS) rows[n.id] = new Row(tag(n.id), n.label, { placement: p.id });
    rows.nrcmOff = new Row(tag('nrcm-queue-off'), 'node-red-contrib-modbus in Node-RED, queue off', { placement: p.id });
    rows.nrcmOn = new Row(tag('nrcm-queue-on'), 'node-red-contrib-modbus in Node-RED, queue on (default)', { placement: p.id });
    const sim = {
      c: new Row(tag('sim-c-client'), 'nines simulator, C libmodbus client', { placement: p.id }),
      nines: new Row(tag('sim-nines-main'), 'nines simulator, nines driver', { placement: p.id })
    };
    if (!cPath('modbus-client')) { rows.c.skip(cSkipReason('modbus-client')); sim.c.skip(cSkipReason('modbus-client')); }
    if (nodeRedSkip) { rows.nrcmOff.skip(nodeRedSkip); rows.nrcmOn.skip(nodeRedSkip); }
    byPlacement[p.id] = { p, rows, ratios, sim };

    variants.push({ row: rows.c, run: async () => { const r = await cRun(p, servers.ref); last.ref = r; rows.c.addLatency(r, costs(r)); } });
    for (const n of NINES) {
      variants.push({
        row: rows[n.id],
        run: async () => {
          const r = await childRun(p, servers.ref, n.kind);
          rows[n.id].addLatency(r, costs(r));
          const mine = rows[n.id].runs[rows[n.id].runs.length - 1];
          const theirs = rows.c.runs[rows.c.runs.length - 1];
          if (!last.ref || !theirs) return;
          ratios[n.id].add({
            reqRatio: mine.reqPerSec / theirs.reqPerSec,
            p50Ratio: mine.p50 / theirs.p50,
            p99Ratio: mine.p99 / theirs.p99,
            p999Ratio: mine.p999 / theirs.p999,
            max: mine.max,
            cMax: theirs.max,
            reqPerSec: mine.reqPerSec,
            cReqPerSec: theirs.reqPerSec
          });
        }
      });
    }
    for (const n of PEERS) variants.push({ row: rows[n.id], run: async () => { const r = await childRun(p, servers.ref, n.kind); rows[n.id].addLatency(r, costs(r)); if (r.version) rows[n.id].version = r.version; } });
    const nodeRed = (row, buffer) => ({
      row,
      run: async () => {
        const nrCount = Math.min(o.count, 100000);
        const args = [NODE_RED_CHILD, String(servers.ref.port), String(nrCount), String(o.durationMs), String(Math.min(o.warmup, 300)), buffer];
        const [cmd, argv] = pinned(p.client, process.execPath, args);
        cmdlines.add([cmd, ...argv].join(' '));
        const r = await runJson(cmd, argv, { timeoutMs: o.durationMs + 60000 });
        row.addLatency({ ...r, hist: decode(r.hist) }, { notReadyRetries: r.notReadyRetries });
        row.versions = r.versions;
      }
    });
    variants.push(nodeRed(rows.nrcmOff, 'off'), nodeRed(rows.nrcmOn, 'on'));
    variants.push({ row: sim.c, run: async () => { const r = await cRun(p, servers.sim); sim.c.addLatency(r, costs(r)); } });
    variants.push({ row: sim.nines, run: async () => { const r = await childRun(p, servers.sim, 'nines'); sim.nines.addLatency(r, costs(r)); } });
  }
  await interleave(rounds, variants);
  await Promise.all(Object.values(servers).map((s) => s.stop()));

  const sections = [];
  for (const { p, rows } of Object.values(byPlacement)) {
    sections.push({
      title: `Clients, against the ${servers.ref.name}, ${describe(p)}`,
      kind: 'latency',
      placement: p.id,
      refs: { cClient: rows.c.id, floor: `floor-${p.id}` },
      rows: Object.values(rows)
    });
  }
  sections.push({
    title: 'nines ÷ the C libmodbus client, ratios taken within each round and placement (median, min–max over rounds)',
    kind: 'custom',
    columns: [{ key: 'reqRatio', label: 'req/s ×', unit: 'ratio' }, { key: 'p50Ratio', label: 'p50 ×', unit: 'ratio' },
      { key: 'p99Ratio', label: 'p99 ×', unit: 'ratio' }, { key: 'p999Ratio', label: 'p99.9 ×', unit: 'ratio' },
      { key: 'max', label: 'nines max', unit: 'ns' }, { key: 'cMax', label: 'C max', unit: 'ns' },
      { key: 'reqPerSec', label: 'nines req/s', unit: 'int' }, { key: 'cReqPerSec', label: 'C req/s', unit: 'int' }],
    rows: Object.values(byPlacement).flatMap((b) => Object.values(b.ratios))
  });
  sections.push({
    title: 'What each client\'s loop cost besides the wire: CPU and garbage collection per request (median, min–max over rounds)',
    kind: 'custom',
    columns: [{ key: 'cpuNsPerReq', label: 'CPU/req', unit: 'ns' }, { key: 'allocPerReq', label: 'allocated/req', unit: 'bytes' },
      { key: 'scavenges', label: 'scavenges', unit: 'int' }, { key: 'markCompacts', label: 'mark-compacts', unit: 'int' },
      { key: 'gcPauseP99Ns', label: 'GC pause p99', unit: 'ns' }, { key: 'gcPauseMaxNs', label: 'GC pause max', unit: 'ns' }],
    rows: Object.values(byPlacement).flatMap((b) => [b.rows.c, ...NINES.map((n) => b.rows[n.id]), ...PEERS.map((n) => b.rows[n.id])]
      .map((r) => ({ id: `cost-${r.id}`, label: `${b.p.label}: ${r.label}`, runs: r.runs, skipped: r.skipped })))
  });
  for (const { p, sim } of Object.values(byPlacement)) {
    sections.push({
      title: `Servers, ${describe(p)}: the nines simulator (own process) vs the C libmodbus server`,
      kind: 'latency',
      placement: p.id,
      refs: { cClient: byPlacement[p.id].rows.c.id, floor: `floor-${p.id}` },
      rows: Object.values(sim)
    });
  }
  notes.push(`Rounds: ${rounds}; every client in its own process, pinned. nines and C: ${size('nines').count.toLocaleString('en-US')} requests after ${size('nines').warmup.toLocaleString('en-US')} of warm-up (at most ${size('nines').durationMs / 1000} s; the worker job: whole 500 ms intervals of one long-running job, after its warm-up intervals, until they hold that many). The Node peers: at most ${size('peer').durationMs / 1000} s after ${size('peer').warmup.toLocaleString('en-US')} of warm-up.`,
    'CPU/req: the client process\'s CPU time (user + system) over its measured loop per request. Scavenges, mark-compacts and GC pauses: the collections perf_hooks reports over the measured loop, on the thread that runs it (the worker thread for the worker job). allocated/req: V8\'s GC profiler over a pass of 20,000 more requests after the measured loop (it lengthens every pause, so it stays out of the measured loop).',
    'p50 … max of a row are medians over rounds of each run\'s percentiles; the ratio table divides each nines run by the C client run of the same round and placement.');
  return {
    question: 1,
    name: 'modbus-round-trip',
    title: 'Modbus TCP round trip, FC3 ×10 registers, unit 1, one connection, closed loop, two CPU placements',
    latency: true,
    server: servers.ref.name,
    placements: placements.map((p) => p.id),
    plotRows: placements.flatMap((p) => ['c-libmodbus', 'nines-main', 'nines-worker', 'modbus-serial'].map((id) => `${id}-${p.id}`)),
    sections,
    notes,
    cmdlines: [...cmdlines]
  };
});
