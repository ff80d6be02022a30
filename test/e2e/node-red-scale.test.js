'use strict';

/**
 * End to end, at scale: a real Node-RED 4 with 100 nines-poll nodes over 5 simulated Modbus devices
 * (20 per device, each device with maxConnections 1). The devices own the connections and one
 * worker pool serves the runtime, so the flow costs 5 connections, at most cores − 1 pool threads
 * (each with its alarm thread, gateway/scheduler/alarm.js) and a bounded amount of memory, whatever
 * the number of poll nodes. Before devices owned connections,
 * each poll node had its own pool and connection: 40 nodes took 47 threads and +596 MB.
 *
 * Connections are counted twice: by the simulators, and by `ss` on the listening ports. Threads
 * from /proc/<pid>/task of the Node-RED process, RSS from /proc/<pid>/status, each against the same
 * Node-RED with the pack loaded and no flow.
 */

const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const { startNodeRed, debugTap } = require('./launch');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { until } = require('../helpers/wait');

const DEVICES = 5;
const POLLS_PER_DEVICE = 20;
const RSS_LIMIT_MB = 100;

/** @returns {boolean} whether `ss` (iproute2) runs here */
function haveSs () {
  try {
    execFileSync('ss', ['-V'], { stdio: 'ignore' });
    return true;
  } catch (err) {
    return false;
  }
}

/** Established TCP connections whose local port is `port` (the server's side of each connection). */
function establishedTo (port) {
  const out = execFileSync('ss', ['-Htn', 'state', 'established', `( sport = :${port} )`], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l.trim() !== '').length;
}

/** @returns {number} threads of a process */
function threadsOf (pid) {
  return fs.readdirSync(`/proc/${pid}/task`).length;
}

/** @returns {number} resident set size of a process, MB */
function rssMbOf (pid) {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m[1]) / 1024;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function scaleFlow (sims) {
  const tab = { id: 'scale-tab', type: 'tab', label: 'scale', disabled: false };
  const nodes = [tab];
  sims.forEach((sim, d) => {
    nodes.push({
      id: `scale-dev-${d}`, type: 'nines-modbus-device', name: `plc${d}`, transport: 'tcp', host: '127.0.0.1', port: sim.port, unitId: 1,
      timeout: 1000, maxConnections: 1, connectTimeout: 2000, backoffMin: 100, backoffMax: 1000, allowWrites: false
    });
    for (let i = 0; i < POLLS_PER_DEVICE; i++) {
      nodes.push({
        id: `scale-poll-${d}-${i}`, type: 'nines-poll', z: tab.id, name: `plc${d}-hr${i}`, protocol: 'modbus', asciiDevice: '', modbusDevice: `scale-dev-${d}`,
        command: '', fc: 3, address: i, quantity: 1, dataType: 'uint16', wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0,
        rate: '5/s', policy: 'skip', values: 'on-change', deadband: 0, every: 100, minInterval: 0, interval: 2, mode: 'worker', autostart: true,
        x: 200, y: 40 + 20 * (d * POLLS_PER_DEVICE + i), wires: [['scale-values'], []]
      });
    }
  });
  nodes.push({
    id: 'scale-values', type: 'debug', z: tab.id, name: 'scale values', active: true, tosidebar: true, console: false, tostatus: false,
    complete: 'payload', targetType: 'msg', statusVal: '', statusType: 'auto', x: 500, y: 40, wires: []
  });
  return nodes;
}

describe('Node-RED 4 at scale: 100 poll nodes over 5 devices', function () {
  this.timeout(60000);
  let nr;
  let tap;
  let sims = [];
  /** threads of Node-RED with the pack loaded and no flow */
  let threads0;

  before(async function () {
    // say what to install rather than skip: a skipped test proves nothing
    assert.ok(haveSs(), 'this test counts connections with ss: apt-get install iproute2');
    [nr, ...sims] = await Promise.all([startNodeRed(), ...Array.from({ length: DEVICES }, () => createModbusTcpSimulator({ port: 0 }))]);
    tap = await debugTap(nr.url);
  });

  after(async () => {
    if (tap) tap.close();
    await Promise.all([nr && nr.stop(), ...sims.map((s) => s.close())]);
  });

  async function deploy (flow) {
    const res = await nr.api('POST', '/flows', flow, { 'Node-RED-Deployment-Type': 'full' });
    assert.equal(res.status, 204, `deploy: ${JSON.stringify(res.body)}`);
  }

  it('makes exactly one connection per device, at most cores − 1 pool threads (and their alarm threads), and ≤ 100 MB more RSS', async () => {
    sims.forEach((sim, d) => { for (let i = 0; i < POLLS_PER_DEVICE; i++) sim.model.banks.holdingRegisters[i] = 1000 * d + i; });
    // the baseline: the same runtime, the pack loaded, no flow, settled
    await deploy([]);
    await sleep(1000);
    threads0 = threadsOf(nr.pid);
    const rss0 = rssMbOf(nr.pid);

    await deploy(scaleFlow(sims));
    const topics = () => new Set(tap.messages.filter((m) => m.name === 'scale values').map((m) => m.topic));
    await until(() => topics().size === DEVICES * POLLS_PER_DEVICE, 'values from all 100 poll nodes', 20000);
    const first = tap.messages.find((m) => m.name === 'scale values' && m.topic === 'plc3-hr7');
    assert.deepEqual(first.msg, [3007]);
    // every poll node has polled its device a few times at 5/s
    await until(() => sims.every((s) => s.stats.requests >= POLLS_PER_DEVICE * 5), 'a few polls per node', 20000);

    const perDevice = sims.map((s) => s.stats.connections);
    const perPortSs = sims.map((s) => establishedTo(s.port));
    const threads = threadsOf(nr.pid) - threads0;
    const rss = rssMbOf(nr.pid) - rss0;
    const cores = os.availableParallelism();
    process.stdout.write(`      100 poll nodes, 5 devices: connections ${perPortSs.reduce((a, b) => a + b, 0)} (ss) / ` +
      `${perDevice.reduce((a, b) => a + b, 0)} (simulators), threads +${threads} (cores ${cores}, ` +
      `${threads0} with no flow), RSS +${rss.toFixed(1)} MB (${rss0.toFixed(1)} MB with no flow)\n`);

    assert.deepEqual(perDevice, new Array(DEVICES).fill(1), 'connections accepted per simulator');
    assert.deepEqual(sims.map((s) => s.stats.open), new Array(DEVICES).fill(1), 'connections open per simulator');
    assert.deepEqual(perPortSs, new Array(DEVICES).fill(1), 'established connections per device port (ss)');
    // each pool thread may start one alarm thread, asleep nearly always (gateway/scheduler/alarm.js)
    assert.ok(threads <= 2 * Math.max(1, cores - 1), `threads beyond an empty Node-RED: ${threads}, cores − 1 = ${cores - 1} pool threads and their alarms`);
    assert.ok(rss <= RSS_LIMIT_MB, `RSS above an empty Node-RED: ${rss.toFixed(1)} MB`);
  });

  it('closes the connections and the pool\'s threads when the flow is removed', async () => {
    await deploy([]);
    await until(() => sims.every((s) => s.stats.open === 0), 'every device connection closed', 15000);
    assert.deepEqual(sims.map((s) => establishedTo(s.port)), new Array(DEVICES).fill(0));
    await until(() => threadsOf(nr.pid) <= threads0, `the pool's threads to end (${threadsOf(nr.pid)} threads, ${threads0} with no flow)`, 15000);
  });
});
