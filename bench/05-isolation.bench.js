'use strict';

/**
 * Question 5: does a busy Node-RED main thread hurt polling? The load is a function blocking the main
 * event loop in 20 ms slices, 50 % of the time. The same nines job (FC3 ×10 at a fixed 500/s, one
 * connection, response time from the intended send time) runs in a worker thread and inline on the
 * main thread; node-red-contrib-modbus runs its closed loop in a real Node-RED with the load in the
 * same process. Each is measured idle and loaded in the same round; the figures are ratios to idle.
 */

const path = require('node:path');
const { options, Row, interleave, run } = require('./lib/question');
const { startReferenceModbusServer } = require('./lib/servers');
const { runPoolJob } = require('./lib/worker-job');
const { runJson } = require('./lib/procs');
const { startLoad } = require('./lib/load');
const { peerSkip } = require('./lib/peers');
const { stats, decode, createHist, encode } = require('./lib/hist');

/** What all three sustain idle: the main-thread scheduler (1 ms timers) tops out near 900/s, node-red-contrib-modbus near 750/s */
const RATE = 500;

run(async () => {
  const o = options();
  const measureMs = o.quick ? 400 : 8000;
  const server = await startReferenceModbusServer();
  const target = `modbus+tcp://127.0.0.1:${server.port}?unitId=1`;
  const rows = {
    worker: new Row('worker', `nines job in a worker thread, ${RATE}/s`),
    inline: new Row('inline', `nines job inline on the main thread, ${RATE}/s`),
    nrcm: new Row('nrcm', 'node-red-contrib-modbus in Node-RED, closed loop (queue off)')
  };
  const cmdlines = [server.cmdline];
  /** every round's histograms per row and condition, merged, for the plot */
  const plot = new Map();
  const keep = (label, h) => { if (!plot.has(label)) plot.set(label, createHist()); plot.get(label).add(h); };
  /** Adds one round's idle and loaded figures to a row. */
  const addPair = (row, idle, loaded, blocked) => {
    keep(`${row.label}, idle`, idle.hist);
    keep(`${row.label}, loaded`, loaded.hist);
    const a = stats(idle.hist);
    const b = stats(loaded.hist);
    row.add({
      reqPerSecIdle: idle.reqPerSec, reqPerSecLoad: loaded.reqPerSec,
      p99Idle: a.p99, p99Load: b.p99,
      p999Idle: a.p999, p999Load: b.p999, ratioP999: b.p999 / a.p999,
      maxIdle: a.max, maxLoad: b.max, ratioMax: b.max / a.max,
      loadPct: blocked
    });
  };
  const poolVariant = (row, mode) => ({
    row,
    run: async () => {
      const job = { read: { fc: 3, address: 0, quantity: 10 }, ratePerSec: RATE };
      const intervalMs = o.quick ? 200 : 1000;
      const idle = await runPoolJob({ mode, target, job, durationMs: measureMs, intervalMs });
      let load = null;
      const t0 = Date.now();
      const loaded = await runPoolJob({ mode, target, job, durationMs: measureMs, intervalMs, onStarted: () => { load = startLoad(); } });
      load.stop();
      addPair(row, idle, loaded, load.blockedMs / (Date.now() - t0) * 100);
    }
  });
  const nrcm = {
    row: rows.nrcm,
    run: async () => {
      const child = path.join(__dirname, 'lib', 'node-red-child.js');
      const go = async (extra) => {
        const args = [child, String(server.port), '1000000', String(measureMs), '300', 'off', ...extra];
        if (cmdlines.length < 3) cmdlines.push(['node', ...args].join(' '));
        const r = await runJson(process.execPath, args, { timeoutMs: measureMs + 60000 });
        return { ...r, hist: decode(r.hist) };
      };
      const idle = await go([]);
      const loaded = await go(['load']);
      addPair(rows.nrcm, idle, loaded, 50);
    }
  };
  // node-red-contrib-modbus missing (or not for this Node): its row says why instead of failing
  const nrcmSkip = ['node-red', 'node-red-contrib-modbus'].map(peerSkip).filter((why) => why !== null).join('; ');
  if (nrcmSkip) rows.nrcm.skip(nrcmSkip);
  await interleave(Math.min(o.rounds, 3), [poolVariant(rows.worker, 'worker'), poolVariant(rows.inline, 'inline'), ...(nrcmSkip ? [] : [nrcm])]);
  await server.stop();
  return {
    question: 5,
    name: 'isolation',
    title: 'Isolation from a busy main thread (20 ms blocking slices, 50 % of the time)',
    latency: true,
    plotSeries: [...plot].map(([label, h]) => ({ label, hist: encode(h) })),
    server: server.name,
    sections: [{
      title: `p99.9 and max under load, as ratios to idle (${measureMs / 1000} s per condition)`,
      kind: 'custom',
      rows: Object.values(rows),
      columns: [
        { key: 'reqPerSecIdle', label: 'req/s idle', unit: 'int' }, { key: 'reqPerSecLoad', label: 'req/s loaded', unit: 'int' },
        { key: 'p999Idle', label: 'p99.9 idle', unit: 'ns' }, { key: 'p999Load', label: 'p99.9 loaded', unit: 'ns' }, { key: 'ratioP999', label: 'p99.9 ×idle', unit: 'ratio' },
        { key: 'maxIdle', label: 'max idle', unit: 'ns' }, { key: 'maxLoad', label: 'max loaded', unit: 'ns' }, { key: 'ratioMax', label: 'max ×idle', unit: 'ratio' }
      ]
    }],
    notes: ['nines jobs: response time from the intended send time (a stall shows in full); the first interval of each run is dropped as warm-up.',
      'node-red-contrib-modbus: closed loop (each request is sent when the previous reply is handled), so its figures are per-request service times as Node-RED sees them.'],
    cmdlines
  };
});
