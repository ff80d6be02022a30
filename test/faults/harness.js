'use strict';

/**
 * The fault suite's rig (issue 12): a real `nines run` process, a real Mosquitto, simulated devices
 * in their own processes (`nines sim modbus --faults …`), and an independent MQTT subscriber that
 * judges what arrived. All on 127.0.0.1, free ports, bounded waits.
 *
 * The gateway reaches the broker through a gate (a TCP relay this test owns): while a broker is
 * being restarted the gate is shut, so the subscriber is back and subscribed before the gateway can
 * publish anything. Without it the subscriber could miss what the gateway sends in its first
 * milliseconds, and a test would blame the gateway for the test's own race.
 *
 * accounting() checks, per job, from the summaries the subscriber saw:
 * - seq: every seq from the first to the last arrived, or the gap is explained by the drop count in
 *   the final retained status; a seq seen twice (QoS 1 resend) has the same content;
 * - time: the summaries of each unbroken run of seqs tile the time (start = previous end);
 * - slots: over each run, ok + errors + timeouts + skipped = rate × time, within a few slots (the
 *   requests in flight across the run's ends, and what a stall of the polling thread moves across
 *   them: up to 50 ms of slots at each end).
 */

const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const mqtt = require('mqtt');
const { startMosquitto, freePort } = require('../helpers/mosquitto');
const { until } = require('../helpers/wait');

const { NINES_BIN } = require('../helpers/nines-cli');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The shared wait with the fault runs' longer default bound: a gateway restarting its broker
 * connection or its workers on a loaded machine.
 * @param {() => boolean} cond
 * @param {string} what
 * @param {number} [timeoutMs]
 */
const waitFor = (cond, what, timeoutMs = 15000) => until(cond, what, timeoutMs);

/**
 * A TCP relay to the broker that can be shut (new connections are cut at once, as a refused
 * connection would be) and that cuts its open connections when the broker side closes.
 * @returns {Promise<{port: number, open: () => void, shut: () => void, target: (port: number) => void, close: () => Promise<void>}>}
 */
async function startGate (brokerPort) {
  let upstreamPort = brokerPort;
  let open = true;
  const pairs = new Set();
  const server = net.createServer((down) => {
    if (!open) { down.destroy(); return; }
    const up = net.connect(upstreamPort, '127.0.0.1');
    const pair = { up, down };
    pairs.add(pair);
    const end = () => { up.destroy(); down.destroy(); pairs.delete(pair); };
    up.on('error', end).on('close', end);
    down.on('error', end).on('close', end);
    up.pipe(down);
    down.pipe(up);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    open: () => { open = true; },
    shut: () => { open = false; },
    target: (port) => { upstreamPort = port; },
    close: () => {
      for (const p of pairs) { p.up.destroy(); p.down.destroy(); }
      return new Promise((resolve) => server.close(() => resolve()));
    }
  };
}

/**
 * `nines sim modbus` in its own process.
 * @param {{port?: number, faults?: string}} [opts]
 * @returns {Promise<{url: string, port: number, stop: () => Promise<void>}>}
 */
function startSim ({ port = 0, faults } = {}) {
  const args = [NINES_BIN, 'sim', 'modbus', '--port', String(port)];
  if (faults) args.push('--faults', faults);
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`nines sim did not start: ${err}`)); }, 10000);
    child.stderr.on('data', (d) => { err += d; });
    child.stdout.on('data', (d) => {
      out += d;
      const m = /modbus\+tcp:\/\/127\.0\.0\.1:(\d+)\S*/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      resolve({
        url: m[0],
        port: Number(m[1]),
        stop: async () => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); await exited; }
      });
    });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`nines sim exited with ${code}: ${err}`)); });
  });
}

/**
 * The independent subscriber: every message under the gateway's topics, with its arrival time.
 * reconnect() after a broker restart; messages sent while it is away are the broker's to lose,
 * which is why the gateway goes through the gate.
 */
async function startSubscriber (url, gateway) {
  const s = { messages: [], client: null };
  const onMessage = (topic, payload, packet) => {
    let json = null;
    try { json = JSON.parse(payload.toString()); } catch { /* kept as null: a test fails on it */ }
    s.messages.push({ at: Date.now(), topic, json, raw: payload.toString(), retain: packet.retain });
  };
  s.connect = async () => {
    // keepalive 60 s: a frozen broker does not make the subscriber give up
    s.client = await mqtt.connectAsync(url, { reconnectPeriod: 0, keepalive: 60, connectTimeout: 3000 });
    s.client.on('message', onMessage);
    s.client.on('error', () => {});
    await s.client.subscribeAsync(`nines/${gateway}/#`, { qos: 1 });
  };
  s.reconnect = async () => {
    if (s.client) s.client.end(true);
    await s.connect();
  };
  s.latency = (job) => s.messages.filter((m) => m.topic === `nines/${gateway}/${job}/latency`);
  s.values = (job) => s.messages.filter((m) => m.topic === `nines/${gateway}/${job}/value`);
  s.status = () => s.messages.filter((m) => m.topic === `nines/${gateway}/status`);
  s.end = async () => { if (s.client) await s.client.endAsync(true).catch(() => {}); };
  await s.connect();
  return s;
}

/**
 * A fault scenario's world. Call rig.cleanup() in afterEach.
 * @param {object} o
 * @param {string} o.id gateway id
 * @param {Array<{name: string, rate: number, faults?: string, timeout?: string, values?: *}>} o.jobs one device each
 * @param {object} [o.mqtt] extra mqtt settings (buffer, keepalive, reconnect, spool…)
 * @param {string} [o.interval='200ms']
 * @param {boolean} [o.spool] give the gateway a spool folder of its own
 */
async function startRig (o) {
  const rig = { cleanups: [], stderr: '', dir: fs.mkdtempSync(path.join(os.tmpdir(), 'nines-fault-')) };
  rig.cleanup = async () => {
    for (const fn of rig.cleanups.reverse()) await fn().catch(() => {});
    fs.rmSync(rig.dir, { recursive: true, force: true });
  };
  rig.cleanups.push(async () => { if (rig.broker) await rig.broker.stop(); });
  rig.broker = await startMosquitto();
  rig.brokerPort = rig.broker.port;
  rig.gate = await startGate(rig.broker.port);
  rig.cleanups.push(() => rig.gate.close());
  rig.sims = {};
  for (const j of o.jobs) {
    rig.sims[j.name] = await startSim({ faults: j.faults });
    rig.cleanups.push(() => rig.sims[j.name].stop());
  }
  rig.sub = await startSubscriber(rig.broker.url, o.id);
  rig.cleanups.push(() => rig.sub.end());
  rig.reconnectMaxMs = o.reconnectMaxMs || 1000;
  rig.config = {
    gateway: { id: o.id, interval: o.interval || '200ms', workers: 1 },
    mqtt: {
      url: `mqtt://127.0.0.1:${rig.gate.port}`,
      prefix: 'nines',
      keepalive: '1s',
      connectTimeout: '1s',
      reconnect: { initial: '100ms', max: `${rig.reconnectMaxMs}ms` },
      ...(o.spool ? { spool: { dir: path.join(rig.dir, 'spool'), maxBytes: '8MiB', sync: '20ms', ...(typeof o.spool === 'object' ? o.spool : {}) } } : {}),
      ...(o.mqtt || {})
    },
    devices: Object.fromEntries(o.jobs.map((j) => [j.name, { target: rig.sims[j.name].url, timeout: j.timeout || '100ms', backoff: { min: '50ms', max: '500ms' } }])),
    jobs: o.jobs.map((j) => ({ name: j.name, device: j.name, read: { fc: 3, address: 0, quantity: 4 }, rate: `${j.rate}/s`, ...(j.values ? { values: j.values } : {}) }))
  };
  rig.rates = Object.fromEntries(o.jobs.map((j) => [j.name, j.rate]));
  rig.file = path.join(rig.dir, 'gateway.json');
  fs.writeFileSync(rig.file, JSON.stringify(rig.config));
  rig.gateways = [];
  rig.cleanups.push(async () => { for (const g of rig.gateways) await g.kill(); });

  /** Starts `nines run` (again: with a spool, it resumes where the last one left). */
  rig.startGateway = () => {
    const child = spawn(process.execPath, [NINES_BIN, 'run', '--quiet', rig.file], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NINES_FAULT_DRILLS: '1' } });
    return rig.adopt(child);
  };
  rig.adopt = (child) => {
    child.stderr.on('data', (d) => { rig.stderr += d; });
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })));
    const g = {
      child,
      exited,
      signal: (sig) => { if (child.exitCode === null && child.signalCode === null) child.kill(sig); },
      kill: async () => { g.signal('SIGKILL'); await exited; }
    };
    rig.gateways.push(g);
    return g;
  };

  /**
   * Starts `nines run` with its spool folder on a tmpfs of `kib` KiB of its own (a private mount
   * namespace: nothing to clean up, gone with the process), so the disk really fills: ENOSPC.
   * Needs util-linux's unshare and the right to mount (root, CAP_SYS_ADMIN).
   */
  rig.startGatewayOnTinyDisk = (kib) => {
    const dir = rig.config.mqtt.spool.dir;
    fs.mkdirSync(dir, { recursive: true });
    const script = `mount -t tmpfs -o size=${kib}k nines-spool "$0" && exec "$@"`;
    const child = spawn('unshare', ['-m', 'sh', '-c', script, dir, process.execPath, NINES_BIN, 'run', '--quiet', rig.file], { stdio: ['ignore', 'ignore', 'pipe'] });
    return rig.adopt(child);
  };

  /** Shuts the gate and takes the broker away: 'stop' (SIGTERM), 'kill' (SIGKILL). */
  rig.brokerDown = async (how) => {
    rig.gate.shut();
    await (how === 'kill' ? rig.broker.kill() : rig.broker.stop());
    rig.broker = null;
  };
  /** A new broker on the same port, the subscriber back on it, then the gate opens. @returns {number} when */
  rig.brokerUp = async () => {
    rig.broker = await startMosquitto({ port: rig.brokerPort });
    await rig.sub.reconnect();
    rig.gate.open();
    return Date.now();
  };

  /** @returns {number} when the first message from the gateway arrived after `since`, or null */
  rig.firstMessageAfter = (since) => {
    const m = rig.sub.messages.find((x) => x.at >= since && x.json && !(x.topic.endsWith('/status') && x.retain));
    return m ? m.at : null;
  };
  return rig;
}

/** Stops a gateway with SIGTERM and waits for its exit (bounded). */
async function stopGateway (rig, g, timeoutMs = 10000) {
  g.signal('SIGTERM');
  const r = await Promise.race([g.exited, sleep(timeoutMs).then(() => null)]);
  assert.ok(r, `nines run still running ${timeoutMs} ms after SIGTERM (stderr: ${rig.stderr})`);
  return r;
}

/**
 * Judges what the subscriber saw (see the file's comment). `status` is the last status message.
 * @param {object} rig
 * @param {object} [opts]
 * @param {number} [opts.slack] slots a run's count may differ from rate × time (default 4, plus 50 ms
 *   of slots at each end of the run)
 * @returns {Record<string, {summaries: number, first: number, last: number, dropped: number, gaps: number,
 *   duplicates: number, runs: number, slots: number, intended: number, worstSlotError: number}>}
 */
function accounting (rig, { slack } = {}) {
  const statuses = rig.sub.status().filter((m) => m.json);
  assert.ok(statuses.length, 'no status seen');
  const status = statuses[statuses.length - 1].json;
  const out = {};
  for (const job of Object.keys(rig.rates)) {
    const rate = rig.rates[job];
    const bySeq = new Map();
    let duplicates = 0;
    for (const m of rig.sub.latency(job)) {
      assert.ok(m.json, `${job}: a latency payload that is not JSON: ${m.raw.slice(0, 80)}`);
      const prev = bySeq.get(m.json.seq);
      if (prev) {
        duplicates++;
        assert.equal(m.raw, prev.raw, `${job}: seq ${m.json.seq} came twice with different content`);
        continue;
      }
      bySeq.set(m.json.seq, m);
    }
    const seqs = [...bySeq.keys()].sort((a, b) => a - b);
    assert.ok(seqs.length >= 2, `${job}: only ${seqs.length} summaries`);
    const first = seqs[0];
    const last = seqs[seqs.length - 1];
    const dropped = (status.dropped && status.dropped.jobs && status.dropped.jobs[job]) || 0;
    // the stream is seen from its first seq: what is missing between first and last is a gap
    const missing = last - first + 1 - seqs.length;
    assert.equal(first, 0, `${job}: the subscriber saw the stream from seq ${first}, not from 0`);
    assert.equal(missing, dropped, `${job}: ${missing} seqs missing between ${first} and ${last}, status counts ${dropped} dropped`);
    // runs of consecutive seqs: they tile the time, and their slots add up
    let runs = 0;
    let slots = 0;
    let intended = 0;
    let worst = 0;
    // a slot counts in the interval where it was resolved: a request in flight, or slots the
    // scheduler finds missed after a stall of its thread (skip policy), can land in the interval
    // after the one they were intended in. Inside a run that nets out; at each of its two ends it
    // need not: a few slots, plus up to 50 ms of slots at each end for a stall under load
    const sl = slack === undefined ? 4 + 2 * 0.05 * rate : slack;
    for (let i = 0; i < seqs.length;) {
      let j = i;
      while (j + 1 < seqs.length && seqs[j + 1] === seqs[j] + 1) {
        const a = bySeq.get(seqs[j]).json;
        const b = bySeq.get(seqs[j + 1]).json;
        assert.equal(b.start, a.end, `${job}: seq ${b.seq} starts at ${b.start}, seq ${a.seq} ended at ${a.end}`);
        j++;
      }
      // the first summary of the stream holds the job's start (device connecting, its phase): judged from seq 1
      const from = seqs[i] === 0 ? i + 1 : i;
      if (from <= j) {
        let n = 0;
        for (let k = from; k <= j; k++) { const p = bySeq.get(seqs[k]).json; n += p.ok + p.errors + p.timeouts + p.skipped; }
        const ms = bySeq.get(seqs[j]).json.end - bySeq.get(seqs[from]).json.start;
        const want = rate * ms / 1000;
        slots += n;
        intended += want;
        worst = Math.max(worst, Math.abs(n - want));
        assert.ok(Math.abs(n - want) <= sl, `${job}: seqs ${seqs[from]}-${seqs[j]} account for ${n} slots over ${ms} ms at ${rate}/s (${want.toFixed(1)} intended; slack ${sl})`);
      }
      runs++;
      i = j + 1;
    }
    out[job] = { summaries: seqs.length, first, last, dropped, gaps: missing, duplicates, runs, slots, intended: Math.round(intended), worstSlotError: Math.round(worst * 10) / 10 };
  }
  return out;
}

/**
 * Prints a scenario's figures (they go into docs/reliability.md) when
 * NINES_FAULT_REPORT names a file: one JSON line per scenario.
 */
function report (name, figures) {
  const file = process.env.NINES_FAULT_REPORT;
  if (file) fs.appendFileSync(file, JSON.stringify({ scenario: name, ...figures }) + '\n');
}

module.exports = { startRig, stopGateway, accounting, report, waitFor, sleep, startSim, freePort };
