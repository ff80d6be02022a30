'use strict';

/**
 * The correlation drill (issue 18): is any published value another request's? Checked the way a user
 * sees it: a real `nines run` polls simulated devices whose every register holds a value derived from
 * its unit and address (`nines sim … --preset signature`), while the simulators answer late at random,
 * some replies before the timeout and some after it; an independent MQTT subscriber compares every
 * published value with what that register holds. A reply taken for another request's shows as a
 * wrong value (another address or another unit).
 *
 * Transports: serial RTU on a socat PTY pair, RTU over TCP, Modbus TCP with maxInflight 1 and 8, a
 * line of three units behind one RTU-over-TCP socket, and ASCII (an ED-560 whose four channels hold
 * 1, 2, 3 and 4 V, read back with `$016n`, replies of one shape).
 *
 * The late replies stay within what an RTU master can tell apart: a reply is never later than the
 * timeout plus the quiet period after it (both 100 ms here) after its request was written, with 57 ms
 * to spare for a simulator whose timers a busy machine delays. Later than
 * that, into a line that stayed silent all the while, a reply to a read of the same shape cannot be
 * told from the next read's (drivers/modbus/rtu-transport.js says so); Modbus TCP (transaction ids)
 * and ASCII (a reconnect after an unanswered timeout) have no such limit.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const mqtt = require('mqtt');
const { freePort } = require('../helpers/mosquitto');
const { createPtyPair } = require('../helpers/pty');
const { startChildSim } = require('../helpers/child-sim');
const { signatureValue } = require('../../gateway/simulators/modbus/model');
const { AsciiClient } = require('../../gateway/drivers/ascii');
const { analyseWire } = require('./wire-analysis');

const NINES = path.join(__dirname, '..', '..', 'bin', 'nines.js');

/** Every device's timeout; the RTU quiet period after a timeout is the same by default */
const TIMEOUT_MS = 100;
/**
 * Late replies: 1-3 ms always, +30 ms (before the timeout) for one request in 4, +110 ms (after it)
 * for one in 5; at most 143 ms after the write, inside timeout + quiet (200 ms)
 */
const LATE = 'latency=1ms-3ms,spike=1/4:30ms,spike=1/5:110ms';
/**
 * Fewer spikes where one late reply holds up others: a line of units (a unit that times out is left
 * alone for a while, devices/unit-health.js) and Modbus TCP (the simulator answers a connection's requests in
 * order, so a late reply delays the ones behind it, as a device serving one at a time does)
 */
const FEWER_LATE = 'latency=1ms-3ms,spike=1/10:30ms,spike=1/12:110ms';
/** The register reads of each single-unit Modbus device: one shape (FC3, 2 registers), three addresses */
const READ_ADDRESSES = [0, 10, 20];
const RATE = '20/s';
/** Within what the Modbus TCP simulator serves in order with its late replies (about 40/s a connection) */
const TCP_RATE = '10/s';
const UNITS = [1, 2, 3];
const ASCII_CHANNELS = [0, 1, 2, 3];

/** @returns {string} a URL's host:port part */
const hostPort = (url) => new URL(url).host;

/**
 * The gateway config of the drill, and what each job's values must be.
 * @returns {{yaml: string, expect: Map<string, (json: object) => string|null>}} expect: job → a
 *   check of one value message, returning what is wrong with it (null: right)
 */
function drillConfig ({ id, brokerPort, rtuPath, rtutcp, tcp1, tcp8, line, ascii }) {
  const devices = {
    rtu: `modbus+rtu://${rtuPath}?unitId=1&baudRate=115200`,
    rtutcp: `modbus+rtutcp://${hostPort(rtutcp)}?unitId=1`,
    tcp1: `modbus+tcp://${hostPort(tcp1)}?unitId=1`,
    tcp8: `modbus+tcp://${hostPort(tcp8)}?unitId=1`
  };
  const lines = [
    `gateway: { id: ${id}, interval: 1s }`,
    `mqtt: { embedded: { port: ${brokerPort} } }`,
    'devices:'
  ];
  for (const [name, target] of Object.entries(devices)) {
    lines.push(`  ${name}: { target: "${target}", timeout: ${TIMEOUT_MS}ms${name === 'tcp8' ? ', maxInflight: 8' : ''} }`);
  }
  lines.push(`  line: { target: "modbus+rtutcp://${hostPort(line)}?unitId=1", timeout: ${TIMEOUT_MS}ms, units: {`);
  lines.push(UNITS.map((u) => `      u${u}: { unitId: ${u}, tags: { regs: [ { name: r0, table: holding, address: 0 }, { name: r1, table: holding, address: 1 } ] } }`).join(',\n') + ' } }');
  lines.push(`  ed560: { target: "${ascii}", timeout: ${TIMEOUT_MS}ms }`);
  lines.push('jobs:');
  const expect = new Map();
  for (const name of Object.keys(devices)) {
    for (const address of READ_ADDRESSES) {
      const job = `${name}-hr${address}`;
      const rate = name.startsWith('tcp') ? TCP_RATE : RATE;
      lines.push(`  - { name: ${job}, device: ${name}, read: { fc: 3, address: ${address}, quantity: 2 }, rate: ${rate}, values: { mode: every } }`);
      const want = [signatureValue('holdingRegisters', 1, address), signatureValue('holdingRegisters', 1, address + 1)];
      expect.set(job, (json) => sameArray(json.values, want));
    }
  }
  for (const u of UNITS) {
    const job = `line-u${u}`;
    lines.push(`  - { name: ${job}, device: line, unit: u${u}, tags: regs, rate: ${RATE}, values: { mode: every } }`);
    const want = { r0: signatureValue('holdingRegisters', u, 0), r1: signatureValue('holdingRegisters', u, 1) };
    expect.set(job, (json) => tagsWrong(json, want));
  }
  for (const ch of ASCII_CHANNELS) {
    const job = `ed560-ch${ch}`;
    lines.push(`  - { name: ${job}, device: ed560, command: "$016${ch}", rate: 10/s, values: { mode: every } }`);
    expect.set(job, (json) => (json.values === ch + 1 ? null : `values ${JSON.stringify(json.values)}, the channel holds ${ch + 1}`));
  }
  return { yaml: lines.join('\n') + '\n', expect };
}

/** @returns {string|null} */
function sameArray (got, want) {
  return Array.isArray(got) && got.length === want.length && got.every((v, i) => v === want[i])
    ? null
    : `values ${JSON.stringify(got)}, the registers hold ${JSON.stringify(want)}`;
}

/** A tag poll: every tag is its register's value with quality ok, or null with another quality. @returns {string|null} */
function tagsWrong (json, want) {
  const values = json.values || {};
  const quality = json.quality || {};
  for (const [tag, v] of Object.entries(want)) {
    const q = quality[tag] === undefined ? 'ok' : quality[tag];
    if (q === 'ok' && values[tag] !== v) return `tag ${tag} = ${JSON.stringify(values[tag])} with quality ok, the register holds ${v}`;
    if (q !== 'ok' && values[tag] !== null && values[tag] !== undefined) return `tag ${tag} = ${values[tag]} with quality ${q}: a bad value must be null`;
  }
  return null;
}

/**
 * Runs the drill for durationMs of polling.
 * @param {{durationMs: number, seed?: number, log?: (line: string) => void, trace?: boolean, breakHold?: boolean}} o
 *   trace: load the wire trace (wire-trace-preload.js) into the gateway and the RTU simulators, and classify
 *   every late reply; breakHold (with trace): the gateway does not hold an RTU line after a timeout (the
 *   defect of issue 18), to show that the drill finds what it looks for
 * @returns {Promise<{jobs: Map<string, {values: number, wrong: string[], ok: number, timeouts: number, errors: number, skipped: number, targets: Set<string>}>, requests: number, gatewayLog: string, wire: object[]|null, traceKept: string|null}>}
 *   traceKept: a copy of the wire trace's folder (trace: true)
 *   targets: the target URLs the job's summaries named
 */
async function runDrill ({ durationMs, seed = 7, log = () => {}, trace = false, breakHold = false }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-correlation-'));
  const traceDir = path.join(dir, 'trace');
  /** @returns {object} a child's environment: with the wire trace loaded when asked for */
  const envFor = (label) => {
    if (!trace) return process.env;
    const preload = path.join(__dirname, 'wire-trace-preload.js');
    return {
      ...process.env,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS || ''} --require ${preload}`.trim(),
      NINES_DRILL_TRACE: traceDir,
      NINES_DRILL_TRACE_LABEL: label,
      ...(breakHold ? { NINES_DRILL_BREAK: 'hold' } : {})
    };
  };
  if (trace) fs.mkdirSync(traceDir);
  const cleanups = [];
  const cleanup = async () => { for (const c of cleanups.reverse()) await c().catch(() => {}); fs.rmSync(dir, { recursive: true, force: true }); };
  try {
    const pty = await createPtyPair(trace ? { dumpTo: path.join(traceDir, 'socat.dump') } : {});
    // the wall clock less the monotonic one, to put socat's wall-clock record on the trace's clock
    const wallMinusMonoNs = BigInt(Date.now()) * 1000000n - process.hrtime.bigint();
    cleanups.push(() => pty.close());
    const sims = await Promise.all([
      startChildSim('rtu', ['--path', pty.a, '--baud', '115200', '--preset', 'signature', '--faults', `${LATE},seed=${seed}`], { env: envFor('rtu') }),
      startChildSim('rtutcp', ['--preset', 'signature', '--faults', `${LATE},seed=${seed + 1}`], { env: envFor('rtutcp') }),
      startChildSim('modbus', ['--preset', 'signature', '--faults', `${FEWER_LATE},seed=${seed + 2}`]),
      startChildSim('modbus', ['--preset', 'signature', '--faults', `${FEWER_LATE},seed=${seed + 3}`]),
      startChildSim('rtutcp', ['--preset', 'signature', '--unit-id', UNITS.join(','), '--faults', `${FEWER_LATE},seed=${seed + 4}`], { env: envFor('line') }),
      startChildSim('ascii', ['--model', 'ED-560', '--faults', `${LATE},seed=${seed + 5}`])
    ]);
    for (const s of sims) cleanups.push(() => s.stop());
    const [, rtutcp, tcp1, tcp8, line, ascii] = sims.map((s) => s.url);
    // the ED-560's channels hold 1-4 V (written before the faults could matter: retried until answered)
    const ao = new AsciiClient(ascii, { timeoutMs: 1000 });
    try {
      for (const ch of ASCII_CHANNELS) {
        for (let tries = 0; ; tries++) {
          const reply = await ao.request(`#01${ch}+0${ch + 1}.000`).catch((err) => err);
          if (!(reply instanceof Error)) break;
          if (tries === 5) throw reply;
        }
      }
    } finally {
      await ao.close();
    }
    const brokerPort = await freePort();
    const id = 'corr';
    const { yaml, expect } = drillConfig({ id, brokerPort, rtuPath: pty.b, rtutcp, tcp1, tcp8, line, ascii });
    const configPath = path.join(dir, 'gateway.yaml');
    fs.writeFileSync(configPath, yaml);
    const gw = spawn(process.execPath, [NINES, 'run', configPath], { stdio: ['ignore', 'pipe', 'pipe'], env: envFor('gateway') });
    let gatewayLog = '';
    gw.stdout.on('data', (d) => { gatewayLog += d; if (gatewayLog.length > 1e6) gatewayLog = gatewayLog.slice(-5e5); });
    gw.stderr.on('data', (d) => { gatewayLog += d; });
    const gwExited = new Promise((resolve) => gw.once('exit', resolve));
    cleanups.push(async () => { if (gw.exitCode === null) { gw.kill('SIGTERM'); await Promise.race([gwExited, new Promise((resolve) => setTimeout(resolve, 5000))]); gw.kill('SIGKILL'); } });

    const jobs = new Map([...expect.keys()].map((job) => [job, { values: 0, wrong: [], ok: 0, timeouts: 0, errors: 0, skipped: 0, targets: new Set() }]));
    let sub = null;
    const deadline = Date.now() + 15000;
    while (sub === null) {
      sub = await mqtt.connectAsync(`mqtt://127.0.0.1:${brokerPort}`, { reconnectPeriod: 0, connectTimeout: 1000 }).catch(() => null);
      if (sub === null) {
        if (Date.now() > deadline || gw.exitCode !== null) throw new Error(`the gateway's broker never came up; log:\n${gatewayLog}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    cleanups.push(() => sub.endAsync(true));
    sub.on('message', (topic, payload) => {
      const [, , job, kind] = topic.split('/');
      const j = jobs.get(job);
      if (j === undefined) return;
      const json = JSON.parse(payload.toString());
      if (kind === 'value') {
        j.values++;
        const wrong = expect.get(job)(json);
        if (wrong !== null) { j.wrong.push(wrong); log(`${job}: ${wrong}`); }
      } else if (kind === 'latency') {
        j.ok += json.ok; j.timeouts += json.timeouts; j.errors += json.errors; j.skipped += json.skipped;
        j.targets.add(json.target);
      }
    });
    await sub.subscribeAsync([`nines/${id}/+/value`, `nines/${id}/+/latency`], { qos: 1 });
    await new Promise((resolve) => setTimeout(resolve, durationMs));
    // the last interval's summaries go out on a clean stop
    gw.kill('SIGTERM');
    await Promise.race([gwExited, new Promise((resolve) => setTimeout(resolve, 10000))]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    let requests = 0;
    for (const j of jobs.values()) requests += j.ok + j.timeouts + j.errors;
    for (const s of sims) await s.stop(); // the simulators' traces are complete
    if (trace) await pty.close(); // and socat's record
    const wireOptions = {
      windowMs: 2 * TIMEOUT_MS,
      wallMinusMonoNs: String(wallMinusMonoNs),
      devices: [
        { match: 'modbus+rtu:', sim: 'rtu', socat: 'socat.dump' },
        { match: `modbus+rtutcp://${hostPort(rtutcp)}`, sim: 'rtutcp' },
        { match: `modbus+rtutcp://${hostPort(line)}`, sim: 'line' }
      ]
    };
    // kept beside the trace, so a kept trace can be read again: node test/faults/wire-analysis.js DIR
    if (trace) fs.writeFileSync(path.join(traceDir, 'drill.json'), JSON.stringify(wireOptions));
    const wire = trace ? analyseWire(traceDir, { ...wireOptions, wallMinusMonoNs }) : null;
    // the trace outlives the drill's temp folder, for a closer look
    let traceKept = null;
    if (trace) {
      traceKept = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-wire-'));
      fs.cpSync(traceDir, traceKept, { recursive: true });
    }
    return { jobs, requests, gatewayLog, wire, traceKept };
  } finally {
    await cleanup();
  }
}

module.exports = { runDrill, drillConfig, TIMEOUT_MS };
