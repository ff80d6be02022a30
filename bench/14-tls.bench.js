'use strict';

/**
 * Question 14: what does Modbus/TCP Security cost a round trip? The nines client over TLS
 * (modbus+tls://, mutual authentication: the simulator requires a client certificate) vs in clear
 * (modbus+tcp://), against the same nines simulator model, one connection, FC3 ×10 registers, unit 1,
 * closed loop with 1 and with 8 requests in flight (pipelined), in both CPU placements (question 12's
 * reasoning, lib/placement.js): server on CPU 0, client on CPU 0 (one core: the encryption of both ends
 * shares it) or CPU 1 (two cores). Rounds interleave every variant, and every ratio is TLS ÷ TCP from
 * the same round and placement, reported as the median with the min–max over rounds.
 *
 * The simulators run in their own processes (lib/sim-process.js), the TCP one and the TLS one side by
 * side; the certificates are made for the run with openssl (test/helpers/tls-certs.js, EC P-256, TLS 1.3
 * as Node negotiates by default). Also the connect time, handshake included: each client process's
 * first connect, so its code is cold in both cases.
 */

const path = require('node:path');
const { options, Row, interleave, run } = require('./lib/question');
const { startServer, runJson } = require('./lib/procs');
const { decode } = require('./lib/hist');
const { placements: allPlacements, pinned } = require('./lib/placement');
const { procCpuNs } = require('./lib/proc-cpu');

const CHILD = path.join(__dirname, 'lib', 'pipeline-child.js');
const SIM = path.join(__dirname, 'lib', 'sim-process.js');
const INFLIGHT = [1, 8];
const TRANSPORTS = [{ id: 'tcp', label: 'Modbus TCP' }, { id: 'tls', label: 'Modbus/TCP Security (TLS)' }];

run(async () => {
  const o = options();
  const rounds = o.quick ? 1 : 3;
  const durationMs = o.durationMs;
  const count = o.quick ? 50000 : 5000000; // time-bound: the count only caps a runaway
  const warmup = o.quick ? 2000 : 20000;
  const cmdlines = new Set();
  const notes = [];
  const { makeCerts } = require('../test/helpers/tls-certs');
  const certs = makeCerts();
  const clientFiles = { ca: certs.ca.file, cert: certs.client.file, key: certs.client.keyFile };

  const { placements, notes: placementNotes } = allPlacements();
  notes.push(...placementNotes);
  const serverCore = placements[0].server;
  const servers = {};
  {
    const [cmd, args] = pinned(serverCore, process.execPath, [SIM, 'modbus']);
    servers.tcp = await startServer(cmd, args, { label: 'nines modbus simulator' });
    const [tcmd, targs] = pinned(serverCore, process.execPath, [SIM, 'modbus-tls', JSON.stringify({ cert: certs.server.file, key: certs.server.keyFile, ca: certs.ca.file })]);
    servers.tls = await startServer(tcmd, targs, { label: 'nines modbus simulator over TLS' });
  }
  for (const s of Object.values(servers)) cmdlines.add(s.cmdline.replace(/\{"cert".*\}/, '<certificate files>'));

  /** One closed-loop run of the nines child, pinned, with the server's CPU per request (warm-up included). */
  const ninesRun = async (place, t, inflight) => {
    const server = servers[t];
    const spec = { port: server.port, inflight, count, durationMs, warmup, ...(t === 'tls' ? { tls: clientFiles } : {}) };
    const [cmd, args] = pinned(place.client, process.execPath, [CHILD, JSON.stringify(spec)]);
    cmdlines.add([cmd, ...args].join(' ').replace(/"port":\d+/, '"port":<port>').replace(/"tls":\{[^}]*\}/, '"tls":<certificate files>'));
    const before = procCpuNs(server.pid);
    const r = await runJson(cmd, args, { timeoutMs: durationMs + 60000 });
    const after = procCpuNs(server.pid);
    const served = r.count + warmup;
    return { ...r, hist: decode(r.hist), serverCpuNsPerReq: before === null || after === null ? undefined : Math.round((after - before) / served) };
  };

  const rows = {}; // placement → transport → inflight → Row
  const ratios = {}; // placement → inflight → Row
  const variants = [];
  for (const p of placements) {
    rows[p.id] = {};
    ratios[p.id] = {};
    for (const k of INFLIGHT) ratios[p.id][k] = new Row(`ratio-${k}-${p.id}`, `${p.label}, ${k} in flight: TLS ÷ TCP`, { placement: p.id, inflight: k });
    for (const t of TRANSPORTS) {
      rows[p.id][t.id] = {};
      for (const k of INFLIGHT) {
        const row = new Row(`${t.id}-${k}-${p.id}`, `${t.label}, ${k} in flight`, { placement: p.id, transport: t.id, inflight: k });
        rows[p.id][t.id][k] = row;
        variants.push({
          row,
          run: async () => {
            const r = await ninesRun(p, t.id, k);
            row.addLatency(r, { cpuNsPerReq: r.cpuNsPerReq, serverCpuNsPerReq: r.serverCpuNsPerReq, connectNs: r.connectNs, effectiveInflight: r.effectiveInflight });
            if (t.id !== 'tls') return;
            // TCP ran just before, in this round: the ratio of the two
            const plain = rows[p.id].tcp[k].runs[rows[p.id].tcp[k].runs.length - 1];
            const mine = row.runs[row.runs.length - 1];
            if (!plain) return;
            ratios[p.id][k].add({
              reqRatio: mine.reqPerSec / plain.reqPerSec,
              p50Ratio: mine.p50 / plain.p50,
              p99Ratio: mine.p99 / plain.p99,
              reqPerSec: mine.reqPerSec,
              tcpReqPerSec: plain.reqPerSec,
              cpuNsPerReq: mine.cpuNsPerReq,
              tcpCpuNsPerReq: plain.cpuNsPerReq,
              serverCpuNsPerReq: mine.serverCpuNsPerReq,
              tcpServerCpuNsPerReq: plain.serverCpuNsPerReq,
              connectNs: mine.connectNs,
              tcpConnectNs: plain.connectNs
            });
          }
        });
      }
    }
  }
  await interleave(rounds, variants);
  await Promise.all(Object.values(servers).map((s) => s.stop()));

  const sections = [];
  for (const p of placements) {
    sections.push({
      title: `Closed loop, one connection, ${p.label}${p.client === undefined ? '' : ` (server on CPU ${p.server}, client on CPU ${p.client})`}`,
      kind: 'latency',
      rows: INFLIGHT.flatMap((k) => TRANSPORTS.map((t) => rows[p.id][t.id][k]))
    });
  }
  sections.push({
    title: 'TLS ÷ TCP, taken within each round (median, min–max over rounds); CPU per request of the client and of the server; connect time with the handshake',
    kind: 'custom',
    columns: [{ key: 'reqRatio', label: 'req/s ×', unit: 'ratio' }, { key: 'p50Ratio', label: 'p50 ×', unit: 'ratio' }, { key: 'p99Ratio', label: 'p99 ×', unit: 'ratio' },
      { key: 'reqPerSec', label: 'TLS req/s', unit: 'int' }, { key: 'tcpReqPerSec', label: 'TCP req/s', unit: 'int' },
      { key: 'cpuNsPerReq', label: 'client CPU/req TLS', unit: 'ns' }, { key: 'tcpCpuNsPerReq', label: 'client CPU/req TCP', unit: 'ns' },
      { key: 'serverCpuNsPerReq', label: 'server CPU/req TLS', unit: 'ns' }, { key: 'tcpServerCpuNsPerReq', label: 'server CPU/req TCP', unit: 'ns' },
      { key: 'connectNs', label: 'connect TLS', unit: 'ns' }, { key: 'tcpConnectNs', label: 'connect TCP', unit: 'ns' }],
    rows: placements.flatMap((p) => INFLIGHT.map((k) => ratios[p.id][k]))
  });
  notes.push(`Each ratio is TLS ÷ TCP from the same round and placement; rounds: ${rounds}, ${durationMs} ms per run after ${warmup} warm-up requests.`,
    'Both servers are the nines simulator (the C libmodbus server has no TLS); over TLS it requires a client certificate signed by the run\'s CA, and the client verifies its certificate and name, as a Modbus/TCP Security deployment does.',
    'Figures are service times (each request timed around its call, lanes included). CPU/req: the client process\'s CPU (process.cpuUsage) over the measured loop per request; server CPU/req: the server process\'s (/proc/<pid>/stat) over the run, warm-up included. Connect: the client process\'s first connect() (TCP connect, plus the TLS handshake and, on TLS 1.3, the wait for the server\'s verdict on the client certificate).');
  return {
    question: 14,
    name: 'tls',
    title: 'Modbus/TCP Security: a round trip over TLS vs in clear, 1 and 8 in flight, two CPU placements',
    latency: true,
    plotRows: placements.flatMap((p) => [`tcp-1-${p.id}`, `tls-1-${p.id}`]),
    placements: placements.map((p) => p.id),
    sections,
    notes,
    cmdlines: [...cmdlines]
  };
});
