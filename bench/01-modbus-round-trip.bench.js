'use strict';

/**
 * Question 1: what does one Modbus TCP round trip cost — FC3, 10 holding registers, unit 1, one
 * connection, closed loop — through nines and through what users pick today, against the same
 * server? Rows: the nines driver on the main thread; a nines gateway job in a worker thread;
 * modbus-serial alone; jsmodbus; node-red-contrib-modbus in a real Node-RED (queue off and on); the C
 * libmodbus client. Server: the C libmodbus server when built, else the nines simulator (own process).
 * Second section: the servers compared, the nines simulator vs the C server, same clients.
 */

const path = require('node:path');
const { options, Row, interleave, run } = require('./lib/question');
const { closedLoop } = require('./lib/closed-loop');
const { ninesClient, modbusSerialClient, jsmodbusClient } = require('./lib/modbus-clients');
const { startReferenceModbusServer, startSimProcess } = require('./lib/servers');
const { cPath, cSkipReason, runCClient } = require('./lib/c-peers');
const { runJson } = require('./lib/procs');
const { decode } = require('./lib/hist');
const { runPoolJob } = require('./lib/worker-job');

const NODE_RED_CHILD = path.join(__dirname, 'lib', 'node-red-child.js');

/**
 * A variant that opens a Node client, runs the closed loop and closes it.
 * @param {Row} row
 * @param {(port: number) => Promise<{read: Function, close: Function, version?: string}>} open
 * @param {() => number} port
 * @param {object} o options()
 */
function nodeClient (row, open, port, o) {
  return {
    row,
    run: async () => {
      const c = await open(port());
      try {
        row.addLatency(await closedLoop(c.read, o));
        if (c.version) row.version = c.version;
      } finally {
        await c.close();
      }
    }
  };
}

/** @returns {object} a variant running the C libmodbus client */
function cClient (row, port, o, cmdlines) {
  return {
    row,
    run: async () => {
      const r = await runCClient('modbus-client', { port: port(), count: o.count, durationMs: o.durationMs, warmup: o.warmup });
      cmdlines.add(r.cmdline.replace(/ \/tmp\/\S+/, ' <samples>'));
      row.addLatency({ hist: r.hist, count: r.json.count, errors: r.json.errors, reqPerSec: r.json.reqPerSec });
    }
  };
}

run(async () => {
  const o = options();
  const cmdlines = new Set();
  const server = await startReferenceModbusServer();
  const sim = await startSimProcess('modbus');
  cmdlines.add(server.cmdline);
  cmdlines.add(sim.cmdline);
  const ref = () => server.port;
  const target = () => `modbus+tcp://127.0.0.1:${server.port}?unitId=1`;
  const rows = {
    ninesMain: new Row('nines-main', 'nines driver, main thread'),
    ninesWorker: new Row('nines-worker', 'nines job in a worker thread', { note: 'service time taken by the driver; first interval dropped as warm-up' }),
    modbusSerial: new Row('modbus-serial', 'modbus-serial alone'),
    jsmodbus: new Row('jsmodbus', 'jsmodbus'),
    nrcmOff: new Row('nrcm-queue-off', 'node-red-contrib-modbus in Node-RED, queue off'),
    nrcmOn: new Row('nrcm-queue-on', 'node-red-contrib-modbus in Node-RED, queue on (default)'),
    cClient: new Row('c-libmodbus', 'C libmodbus client')
  };
  const servers = {
    cOnSim: new Row('sim-c-client', 'nines simulator, C libmodbus client'),
    ninesOnSim: new Row('sim-nines-main', 'nines simulator, nines driver')
  };
  if (!cPath('modbus-client')) {
    rows.cClient.skip(cSkipReason('modbus-client'));
    servers.cOnSim.skip(cSkipReason('modbus-client'));
  }
  const nodeRed = (row, buffer) => ({
    row,
    run: async () => {
      const nrCount = Math.min(o.count, 100000);
      const args = [NODE_RED_CHILD, String(ref()), String(nrCount), String(o.durationMs), String(Math.min(o.warmup, 300)), buffer];
      cmdlines.add(['node', ...args].join(' '));
      const r = await runJson(process.execPath, args, { timeoutMs: o.durationMs + 60000 });
      row.addLatency({ ...r, hist: decode(r.hist) }, { notReadyRetries: r.notReadyRetries });
      row.versions = r.versions;
    }
  });
  await interleave(o.rounds, [
    cClient(rows.cClient, ref, o, cmdlines),
    nodeClient(rows.ninesMain, ninesClient, ref, o),
    {
      row: rows.ninesWorker,
      run: async () => {
        const intervalMs = o.quick ? 150 : 500;
        rows.ninesWorker.addLatency(await runPoolJob({
          mode: 'worker', target: target(), job: { read: { fc: 3, address: 0, quantity: 10 }, ratePerSec: Infinity }, durationMs: o.durationMs, intervalMs
        }));
      }
    },
    nodeClient(rows.modbusSerial, modbusSerialClient, ref, o),
    nodeClient(rows.jsmodbus, jsmodbusClient, ref, o),
    nodeRed(rows.nrcmOff, 'off'),
    nodeRed(rows.nrcmOn, 'on'),
    cClient(servers.cOnSim, () => sim.port, o, cmdlines),
    nodeClient(servers.ninesOnSim, ninesClient, () => sim.port, o)
  ]);
  await server.stop();
  await sim.stop();
  return {
    question: 1,
    name: 'modbus-round-trip',
    title: 'Modbus TCP round trip, FC3 ×10 registers, unit 1, one connection, closed loop',
    latency: true,
    server: server.name,
    sections: [
      { title: `Clients, against the ${server.name}`, kind: 'latency', rows: Object.values(rows) },
      { title: 'Servers: the nines simulator (own process) vs the C libmodbus server', kind: 'latency', rows: Object.values(servers) }
    ],
    cmdlines: [...cmdlines]
  };
});
