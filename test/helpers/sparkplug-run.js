'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const assert = require('node:assert/strict');
const { startMosquitto } = require('./mosquitto');
const { startSparkplugHost } = require('./sparkplug-host');
const { NINES_BIN } = require('./nines-cli');
const { sleep } = require('./wait');

/**
 * The parts of a Sparkplug fault run (test/integrations/sparkplug-restarts.test.js), all real: a
 * `nines run` process as the edge node (restartable, with its config in a file), a Modbus simulator
 * in this process whose counter register moves `ratePerSec` times a second and which logs every read
 * of it (what the register held when the gateway read it), and the independent Tahu-based host.
 */

const GROUP = 'plant';
const NODE = 'edge1';
const HOST = 'scada';
const COUNTER = 100;
const START = 1000;

/**
 * A simulator whose holding register 100 counts up, with the log of the values its reads answered.
 * @param {number} ratePerSec
 * @returns {Promise<{url: string, reads: Array<{value: number, at: number}>, start: () => void, stop: () => void, close: () => Promise<void>}>}
 */
async function countingSim (ratePerSec) {
  const sim = await createModbusTcpSimulator({ port: 0 });
  sim.model.setRegisters('holdingRegisters', COUNTER, [START]);
  const reads = [];
  const bank = sim.model.banks.holdingRegisters;
  const valueAt = sim.model.valueAt.bind(sim.model);
  // every answer to a read of the counter, in the order sent: what the gateway can know
  sim.model.valueAt = (b, addr, unit) => {
    const v = valueAt(b, addr, unit);
    if (b === bank && addr === COUNTER) reads.push({ value: v, at: Date.now() });
    return v;
  };
  let n = START;
  let timer = null;
  return {
    url: sim.url,
    reads,
    start: () => { timer = setInterval(() => sim.model.setRegisters('holdingRegisters', COUNTER, [++n]), 1000 / ratePerSec); },
    stop: () => { clearInterval(timer); timer = null; },
    close: async () => { clearInterval(timer); await sim.close(); }
  };
}

/**
 * The gateway's config: one tag job reading the counter at `ratePerSec`, values every poll, the
 * edge node with a primary host and templates; a status page for the held counts.
 * @param {object} o
 * @param {string} o.brokerUrl
 * @param {string} o.simUrl
 * @param {number} o.ratePerSec
 * @param {string|null} [o.spoolDir]
 * @returns {string} the config file
 */
function writeConfig ({ brokerUrl, simUrl, ratePerSec, spoolDir = null }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-sp-run-'));
  const config = {
    gateway: { id: 'sp', interval: '1s', workers: 1, http: { listen: '127.0.0.1:0' } },
    mqtt: {
      url: brokerUrl,
      keepalive: '2s',
      connectTimeout: '1s',
      reconnect: { initial: '100ms', max: '1s' },
      ...(spoolDir ? { spool: { dir: spoolDir, sync: '20ms' } } : {}),
      sparkplug: { group: GROUP, node: NODE, primaryHost: HOST, templates: true }
    },
    devices: { plc: { target: simUrl, timeout: '300ms', tags: { pump: [{ name: 'count', table: 'holding', address: COUNTER, type: 'uint16' }] } } },
    // every poll's value offered (Sparkplug DATA carries what changed), and a rate cap far above the
    // poll rate, so no value is merged into the next one by the cap: each change the gateway read is
    // one DATA, and the host's record can be held against the reads
    jobs: [{ name: 'fast', device: 'plc', tags: 'pump', rate: `${ratePerSec}/s`, values: { mode: 'every', maxRate: '100000/s' } }]
  };
  const file = path.join(dir, 'gateway.json');
  fs.writeFileSync(file, JSON.stringify(config));
  return file;
}

/**
 * `nines run <file>` in its own process; resolves once its status page is listening.
 * @param {string} file
 * @returns {Promise<{statusUrl: string, status: () => Promise<object>, stderr: () => string, kill: (signal?: string) => Promise<{code: number|null, signal: string|null}>}>}
 */
function startNines (file) {
  const child = spawn(process.execPath, [NINES_BIN, 'run', '--quiet', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`nines run did not start: ${err}`)); }, 15000);
    child.stderr.on('data', (d) => {
      err += d;
      const m = /status page (http:\/\/\S+?\/)(\s|$)/.exec(err);
      if (!m || timer === null) return;
      clearTimeout(timer);
      const statusUrl = m[1];
      resolve({
        statusUrl,
        status: async () => (await fetch(`${statusUrl}status.json`)).json(),
        stderr: () => err,
        kill: async (signal = 'SIGTERM') => {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          return exited;
        }
      });
    });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`nines run exited with ${code}: ${err}`)); });
  });
}

/** The host for this node, its STATE online */
async function startHost (port) {
  const host = await startSparkplugHost({ port, group: GROUP, node: NODE, host: HOST });
  await host.send({ cmd: 'state', online: true });
  return host;
}

/**
 * The changes in a list of reads: a value read twice in a row (the counter did not move between two
 * polls) is one change, as Sparkplug DATA reports it once.
 * @param {Array<{value: number}>} reads in order
 * @returns {Array<{value: number}>} the first read of each change
 */
function changes (reads) {
  return reads.filter((r, i) => i === 0 || r.value !== reads[i - 1].value);
}

/**
 * A fault run's parts, started in order, each one's teardown pushed onto `cleanups` (the caller runs
 * them in reverse): a Mosquitto, the counting simulator, the host (its STATE online), the gateway's
 * config file (with a disk spool in a fresh directory when `spool`). `startGateway()` starts a
 * `nines run` on it, killed at cleanup if still running; `rig.mosq` may be replaced (a broker
 * restarted), and the cleanup stops whichever is there.
 * @param {Array<() => Promise<unknown>>} cleanups
 * @param {{ratePerSec: number, spool?: boolean}} o
 * @returns {Promise<{mosq: object|null, sim: object, host: object, dir: string|null, file: string, startGateway: () => Promise<object>}>}
 */
async function startRig (cleanups, { ratePerSec, spool = false }) {
  const rig = { mosq: await startMosquitto(), dir: null };
  cleanups.push(async () => { if (rig.mosq) await rig.mosq.stop(); });
  if (spool) {
    rig.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-sp-kill-'));
    cleanups.push(async () => fs.rmSync(rig.dir, { recursive: true, force: true }));
  }
  rig.sim = await countingSim(ratePerSec);
  cleanups.push(() => rig.sim.close());
  rig.host = await startHost(rig.mosq.port);
  cleanups.push(() => rig.host.stop());
  rig.file = writeConfig({ brokerUrl: rig.mosq.url, simUrl: rig.sim.url, ratePerSec, spoolDir: rig.dir });
  rig.startGateway = async () => {
    const g = await startNines(rig.file);
    cleanups.push(() => g.kill('SIGKILL'));
    return g;
  };
  return rig;
}

/**
 * Ends a run: the counter stops, the last polls' DATA go out, the gateway's status is read, and the
 * gateway stops cleanly (exit 0), its NDEATH at the host.
 * @param {object} rig from startRig
 * @param {object} g the running gateway, from rig.startGateway()
 * @returns {Promise<object>} the status read before the stop
 */
async function endRun (rig, g) {
  rig.sim.stop();
  await sleep(300);
  const status = await g.status();
  const exit = await g.kill('SIGTERM');
  assert.equal(exit.code, 0, g.stderr());
  await sleep(300);
  return status;
}

module.exports = { countingSim, writeConfig, startNines, startHost, startRig, endRun, changes, GROUP, NODE, HOST, START };
