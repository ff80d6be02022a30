'use strict';

/**
 * A line of units (issue 14): ten unit ids on one serial line (a socat PTY pair, the nines RTU
 * simulator at the other end), behind one RTU-over-TCP socket (a serial server) and behind one
 * Modbus TCP connection, as a PLC gateway forwards them.
 * One unit goes silent: its neighbours keep their rate, it is reported down within one timeout, it
 * costs the line no more than one probe per backoff, and it comes back by itself. Asserted by counts
 * (polls answered, requests that reached the silent unit), not by latency figures: those are
 * measured by `npm run bench` (question 13).
 */

const assert = require('node:assert/strict');
const { validateConfig } = require('../../gateway/runtime/config');
const { Gateway } = require('../../gateway/runtime/gateway');
const { createModbusTcpSimulator, createModbusRtuSimulator, createModbusRtuTcpSimulator } = require('../../gateway/simulators/modbus');
const { createPtyPair } = require('../helpers/pty');
const { until } = require('../helpers/wait');

const UNITS = 10;
const RATE = 20; // per unit
const TIMEOUT_MS = 150;

function lineConfig (url) {
  const units = {};
  const jobs = [];
  for (let id = 1; id <= UNITS; id++) {
    // the units' default backoff: probes of a silent unit from 1 s apart, doubling to 10 s
    units[`m${id}`] = { unitId: id, tags: { energy: [{ name: 'kwh', table: 'holding', address: 0 }] } };
    jobs.push({ name: `m${id}`, device: 'bus', unit: `m${id}`, tags: 'energy', rate: `${RATE}/s`, values: 'off' });
  }
  return {
    gateway: { id: 'line', interval: '500ms', workers: 1 },
    mqtt: { embedded: { port: 0 } },
    devices: { bus: { target: url, timeout: `${TIMEOUT_MS}ms`, units } },
    jobs
  };
}

const UNIT_IDS = Array.from({ length: UNITS }, (_, i) => i + 1);

/** The two lines: a serial bus (RTU over a PTY pair) and a Modbus TCP gateway */
const LINES = {
  'one serial line (RTU)': async () => {
    const pty = await createPtyPair();
    const sim = await createModbusRtuSimulator({ path: pty.a, baudRate: 115200, modelOptions: { unitIds: UNIT_IDS } });
    return { sim, url: `modbus+rtu://${pty.b}?baudRate=115200`, close: async () => { await sim.close(); await pty.close(); } };
  },
  'one RTU-over-TCP socket (a serial server)': async () => {
    const sim = await createModbusRtuTcpSimulator({ port: 0, modelOptions: { unitIds: UNIT_IDS } });
    return { sim, url: sim.url, close: () => sim.close() };
  },
  'one Modbus TCP connection': async () => {
    const sim = await createModbusTcpSimulator({ port: 0, modelOptions: { unitIds: UNIT_IDS } });
    return { sim, url: sim.url, close: () => sim.close() };
  }
};

describe('a line of units: one that stops answering does not take its neighbours with it', function () {
  this.timeout(40000);
  let line, gw;
  afterEach(async () => {
    if (gw) await gw.stop();
    if (line) await line.close();
    line = gw = null;
  });

  for (const [kind, open] of Object.entries(LINES)) {
    it(`ten units on ${kind}: one goes silent, the nine keep their rate, it is down within one timeout, probed once per backoff, and back by itself`, async () => {
      line = await open();
      await scenario(line.sim, line.url, (g) => { gw = g; });
    });
  }
});

async function scenario (sim, url, keep) {
  {
    const cfg = validateConfig(lineConfig(url), { env: {} });
    const gw = new Gateway(cfg);
    keep(gw);
    const sums = new Map(); // job → summaries after the fault
    const health = [];
    gw.on('health', (device, h) => { if (h.units) health.push({ at: Date.now(), m3: h.units.m3.state }); });
    gw.on('summary', (job, p) => { if (sums.has(job)) sums.get(job).push(p); });
    await gw.start();
    await until(() => cfg.jobs.every((j) => gw.latest.has(j.name) && gw.latest.get(j.name).ok > 0), 'an answered poll of every job', 15000);
    await until(() => health.length > 0 && health.at(-1).m3 === 'up', 'unit 3 up', 15000);

    // unit 3 goes silent
    const ignoredBefore = ignoredOf(sim);
    for (const j of cfg.jobs) sums.set(j.name, []);
    const silentAt = Date.now();
    sim.model.serve(3, false);
    await until(() => health.some((h) => h.at >= silentAt && h.m3 === 'down'), 'unit 3 down once silent', 15000);
    const downAfter = health.find((h) => h.at >= silentAt && h.m3 === 'down').at - silentAt;
    // reported down within one timeout of its first unanswered request (one poll period later at most)
    assert.ok(downAfter <= TIMEOUT_MS + 1000 / RATE + 100, `down after ${downAfter} ms`);
    const gw3 = gw.health.get('bus').units.m3;
    assert.equal(gw3.lastError.code, 'NINES_ERR_REPLY_TIMEOUT');

    // four seconds of silence: the others keep their rate; the silent one gets its probes only
    await new Promise((resolve) => setTimeout(resolve, 4000));
    const silentFor = Date.now() - silentAt;
    const reached = ignoredOf(sim) - ignoredBefore;
    // the first request that found it silent, then one probe per backoff: 0.5-1 s, 1-2 s, 2-4 s, …
    // (equal jitter: never below half the doubling delay), so at most four in four seconds
    assert.ok(reached <= 4, `${reached} requests reached the silent unit in ${silentFor} ms`);
    const m3 = sums.get('m3');
    assert.ok(m3.some((p) => p.skipped > 0), 'its polls are counted as skipped');
    for (let id = 1; id <= UNITS; id++) {
      if (id === 3) continue;
      const list = sums.get(`m${id}`).filter((p) => p.start >= silentAt + 500 && p.end <= silentAt + silentFor);
      const intended = list.reduce((a, p) => a + p.count, 0);
      const ok = list.reduce((a, p) => a + p.ok, 0);
      assert.ok(intended > 0, `m${id} has summaries in the silent phase`);
      // every intended poll of a neighbour was sent and answered: at least 95 % of its rate
      assert.ok(ok >= 0.95 * intended, `m${id}: ${ok} of ${intended} polls answered`);
    }

    // it answers again: up by itself within its backoff maximum plus one poll period
    const backAt = Date.now();
    sim.model.serve(3, true);
    await until(() => health.some((h) => h.at >= backAt && h.m3 === 'up'), 'unit 3 up again', 12000);
    const upAfter = health.find((h) => h.at >= backAt && h.m3 === 'up').at - backAt;
    // its next probe is due within its backoff (at most 10 s after the last), then it answers
    assert.ok(upAfter <= 10000 + 1000 / RATE + 200, `up after ${upAfter} ms`);
  }
}

/** Requests to a unit the simulator does not serve, which it leaves unanswered */
function ignoredOf (sim) {
  return sim.stats.ignored;
}
