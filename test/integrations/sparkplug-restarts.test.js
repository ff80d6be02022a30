'use strict';

/**
 * Sparkplug B store and forward across the two restarts of issue 22: the broker restarted mid-run,
 * and the gateway SIGKILLed and restarted with a disk spool. Real parts: a `nines run` process, a
 * Mosquitto restarted on the same port, the independent Tahu-based host (sparkplug-host.py), and a
 * simulator that logs every value its reads answered. The host's record is held against that log,
 * read for read: what is missing must be counted (the status page's `sparkplug.held.dropped`).
 */

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { startMosquitto } = require('../helpers/mosquitto');
const { countsOf } = require('../helpers/sparkplug-offline');
const { startRig, endRun, changes } = require('../helpers/sparkplug-run');
const { until, sleep } = require('../helpers/wait');

const RATE = 100;
/** How long before a broker's or a gateway's death a read counts as "in the instant" of it: one poll and a half */
const DEATH_MS = 15;
/** DATA the instant of a broker's death may take uncounted (QoS 0); more than this is a defect to fix */
const HANDFUL = 3;

/**
 * Every count value the host received in DATA, in arrival order, with its flag.
 * @returns {Array<{value: number, historical: boolean, index: number}>}
 */
function dataValues (messages) {
  const out = [];
  messages.forEach((m, index) => {
    if (m.type !== 'DDATA') return;
    for (const c of countsOf(m)) out.push({ value: Number(c.value), historical: c.historical, index });
  });
  return out;
}

/** The count values the DBIRTHs carried (a device's current value when it is born) */
const birthValues = (messages) => messages.filter((m) => m.type === 'DBIRTH').flatMap(countsOf).map((c) => Number(c.value));

/**
 * The host's record held against the simulator's: every change the gateway read arrives once, in
 * order (the counter only goes up, so the host's DATA values must too), or is missing. A value a
 * DBIRTH carried arrived too (a birth gives the current value; a DATA after it need not repeat it).
 * @param {Array<{value: number, at: number}>} reads the simulator's log
 * @param {Array<{value: number}>} got the host's DATA values
 * @param {number[]} born the values of the DBIRTHs
 * @returns {{changes: number, missing: Array<{value: number, at: number}>}} the changes from the
 *   first DATA to the last, and those of them the host never got
 */
function compare (reads, got, born) {
  for (let i = 1; i < got.length; i++) assert.ok(got[i].value > got[i - 1].value, `value ${got[i].value} after ${got[i - 1].value}: each change once, in order`);
  const first = got[0].value;
  const last = got[got.length - 1].value;
  const seen = new Set([...got.map((x) => x.value), ...born]);
  const read = changes(reads).filter((r) => r.value >= first && r.value <= last);
  return { changes: read.length, missing: read.filter((r) => !seen.has(r.value)) };
}

/**
 * Waits for `n` live (not historical) count values at the host from message index `from` on: the
 * run under way, where a fixed sleep gave it time enough on a quiet machine and too little on a busy one.
 */
const liveData = (host, from, n, what) => until(() => dataValues(host.messages).filter((x) => x.index >= from && !x.historical).length >= n, what, 15000);
/** Live values awaited before a fault and after the recovery: half a second of the counter at RATE */
const LIVE = 50;

/** The host's violations, as lines */
const violations = (host) => host.messages.filter((m) => m.violations && m.violations.length).map((m) => `${m.topic} seq ${m.seq}: ${m.violations.join('; ')}`);

/** The messages of a DBIRTH's count: its alias, and the instance's alias */
const birthAliases = (m) => m.metrics.map((x) => `${x.name}=${x.alias}`).sort();

describe('Sparkplug B store and forward across a broker restart and a gateway SIGKILL (independent host)', function () {
  this.timeout(90000);
  const cleanups = [];
  afterEach(async () => {
    for (const fn of cleanups.reverse()) await fn().catch(() => {});
    cleanups.length = 0;
  });

  for (const [how, what] of [['stop', 'restarted (SIGTERM)'], ['kill', 'crashed (SIGKILL) and restarted']]) {
    it(`broker ${what} mid-run at 100 values/s: rebirth with a new bdSeq, every change delivered once, in order, the outage's as historical`, async () => {
      const rig = await startRig(cleanups, { ratePerSec: RATE });
      const { sim, host } = rig;
      const port = rig.mosq.port;
      const g = await rig.startGateway();

      const firstBirth = await host.waitFor((m) => m.type === 'NBIRTH', 15000);
      await host.waitFor((m) => m.type === 'DBIRTH' && m.device === 'plc', 10000);
      sim.start();
      await liveData(host, 0, LIVE, 'live DATA before the outage');

      const downAt = Date.now();
      const beforeDown = host.messages.length;
      await rig.mosq[how]();
      const goneAt = Date.now();
      rig.mosq = null;
      await sleep(2000);
      rig.mosq = await startMosquitto({ port });
      const upAt = Date.now();
      const nbirth = await host.waitFor((m) => m.type === 'NBIRTH', 20000, beforeDown);
      await until(async () => { const s = await g.status(); return s.sparkplug.held.count === 0; }, 'the held DATA published', 20000, { everyMs: 50 });
      await liveData(host, host.messages.indexOf(nbirth), LIVE, 'live DATA after the rebirth');
      const status = await endRun(rig, g);

      assert.deepEqual(violations(host), []);
      const bdSeq = (m) => Number(m.metrics.find((x) => x.name === 'bdSeq').value);
      assert.notEqual(bdSeq(nbirth), bdSeq(firstBirth), 'a new connection, a new bdSeq');

      const got = dataValues(host.messages);
      const { changes: n, missing } = compare(sim.reads, got, birthValues(host.messages));
      const dropped = status.sparkplug.held.dropped;
      const nbirthAt = host.messages.indexOf(nbirth);
      const historical = got.filter((x) => x.historical);
      // QoS 0 DATA in the instant the broker died: read from just before the SIGTERM until the broker
      // had gone; the gateway had written it to a connection the broker no longer read
      const inDeath = missing.filter((r) => r.at >= downAt - DEATH_MS && r.at <= goneAt);
      const figures = { changes: n, historical: historical.length, missing: missing.length, inDeath: inDeath.length, missingMsFromDown: missing.map((r) => r.at - downAt), dropped, outageMs: upAt - downAt };
      console.log(`      broker ${how}: ${JSON.stringify(figures)}`);
      assert.ok(inDeath.length <= HANDFUL, `DATA lost uncounted as the broker died: ${JSON.stringify(figures)}`);
      assert.ok(missing.length - inDeath.length <= dropped, `changes missing at the host beyond those counted: ${JSON.stringify(figures)}`);
      // the outage's values: historical, after the new NBIRTH, before any live DATA of the new session
      assert.ok(historical.length >= 1.5 * RATE, `${historical.length} historical values for a ${upAt - downAt} ms outage at ${RATE}/s`);
      assert.ok(historical.every((x) => x.index > nbirthAt), 'history only after the rebirth');
      const firstLive = got.findIndex((x) => x.index > nbirthAt && !x.historical);
      assert.ok(firstLive >= 0, 'live DATA resumed after the rebirth');
      assert.ok(got.slice(firstLive).every((x) => !x.historical), 'history before the present');
    });
  }

  it('gateway SIGKILLed while holding on disk and restarted: the held values replayed once, in order, historical; the aliases kept', async () => {
    const rig = await startRig(cleanups, { ratePerSec: RATE, spool: true });
    const { sim, host, dir } = rig;
    const g1 = await rig.startGateway();

    const dbirth1 = await host.waitFor((m) => m.type === 'DBIRTH' && m.device === 'plc', 15000);
    sim.start();
    await liveData(host, 0, LIVE, 'live DATA before the host goes offline');
    const offAt = host.messages.length;
    await host.send({ cmd: 'state', online: false });
    await host.waitFor((m) => m.type === 'NDEATH', 10000, offAt);
    await sleep(2000);
    const held1 = (await g1.status()).sparkplug.held;
    assert.ok(held1.disk && held1.count >= 1.5 * RATE, JSON.stringify(held1));
    const killAt = Date.now();
    await g1.kill('SIGKILL');
    const killedAt = Date.now();
    assert.ok(fs.existsSync(path.join(dir, 'sparkplug', 'aliases.json')), 'the alias map is on disk');

    const g2 = await rig.startGateway();
    await sleep(1000);
    const onAt = host.messages.length;
    await host.send({ cmd: 'state', online: true });
    const nbirth = await host.waitFor((m) => m.type === 'NBIRTH', 10000, onAt);
    await until(async () => { const s = await g2.status(); return s.sparkplug.held.count === 0; }, 'the held DATA published', 20000, { everyMs: 50 });
    await liveData(host, host.messages.indexOf(nbirth), LIVE, 'live DATA after the rebirth');
    const status = await endRun(rig, g2);

    assert.deepEqual(violations(host), []);
    const dbirth2 = host.messages.slice(host.messages.indexOf(nbirth)).find((m) => m.type === 'DBIRTH');
    assert.deepEqual(birthAliases(dbirth2), birthAliases(dbirth1), 'the same aliases after the restart');

    const got = dataValues(host.messages);
    const { changes: n, missing } = compare(sim.reads, got, birthValues(host.messages));
    const dropped = status.sparkplug.held.dropped;
    const historical = got.filter((x) => x.historical);
    // what the killed process had been answered and not yet written to the hold is gone with it, and
    // no one is left to count it: the reply in flight, and one answered as the signal landed
    const inFlight = missing.filter((r) => r.at >= killAt - DEATH_MS && r.at <= killedAt);
    const figures = { changes: n, heldAtKill: held1.count, historical: historical.length, missing: missing.length, inFlight: inFlight.length, missingMsFromKill: missing.map((r) => r.at - killAt), dropped };
    console.log(`      gateway SIGKILL: ${JSON.stringify(figures)}`);
    assert.equal(dropped, 0, 'nothing lost to damage or the cap');
    assert.ok(inFlight.length <= 2, `reads lost with the killed process: ${JSON.stringify(figures)}`);
    assert.equal(missing.length - inFlight.length, 0, `changes missing at the host: ${JSON.stringify(figures)}`);
    assert.ok(historical.length >= held1.count, `${historical.length} historical values, ${held1.count} held at the kill`);
    assert.ok(historical.every((x) => x.index > host.messages.indexOf(nbirth)), 'history only after the new NBIRTH');
  });
  it('gateway SIGKILLed just after its replay and restarted: nothing of the replay is sent again', async () => {
    const rig = await startRig(cleanups, { ratePerSec: RATE, spool: true });
    const { sim, host } = rig;
    const g1 = await rig.startGateway();
    await host.waitFor((m) => m.type === 'DBIRTH' && m.device === 'plc', 15000);
    sim.start();
    const offAt = host.messages.length;
    await host.send({ cmd: 'state', online: false });
    await host.waitFor((m) => m.type === 'NDEATH', 10000, offAt);
    await sleep(1000);
    const onAt = host.messages.length;
    await host.send({ cmd: 'state', online: true });
    await host.waitFor((m) => m.type === 'NBIRTH', 10000, onAt);
    await until(async () => (await g1.status()).sparkplug.held.count === 0, 'the held DATA published', 20000, { everyMs: 50 });
    // well within the hold's checkpoint interval: its cursor on disk must already be past the replay
    await sleep(100);
    const killAt = Date.now();
    await g1.kill('SIGKILL');
    const killedAt = Date.now();
    const replayed = host.messages.filter((m) => m.type === 'DDATA').flatMap(countsOf).filter((c) => c.historical).length;

    const restartAt = host.messages.length;
    const g2 = await rig.startGateway();
    await host.waitFor((m) => m.type === 'NBIRTH', 10000, restartAt);
    await until(async () => (await g2.status()).sparkplug.held.count === 0, 'the held DATA published', 20000, { everyMs: 50 });
    await sleep(500);
    const status = await endRun(rig, g2);

    assert.deepEqual(violations(host), []);
    const got = dataValues(host.messages);
    // compare() fails on a value that arrives twice (the counter only goes up)
    const { changes: n, missing } = compare(sim.reads, got, birthValues(host.messages));
    const again = got.filter((x) => x.index >= restartAt && x.historical);
    const inFlight = missing.filter((r) => r.at >= killAt - DEATH_MS && r.at <= killedAt);
    const figures = { changes: n, replayed, historicalAfterRestart: again.length, missing: missing.length, inFlight: inFlight.length, missingMsFromKill: missing.map((r) => r.at - killAt), dropped: status.sparkplug.held.dropped };
    console.log(`      gateway SIGKILL after its replay: ${JSON.stringify(figures)}`);
    // the case is made: a replay went out before the kill, and the next start sends none of it again
    assert.ok(replayed > 0, `no replay before the kill: ${JSON.stringify(figures)}`);
    assert.equal(again.length, 0, `historical DATA sent again after the restart: ${JSON.stringify(figures)}`);
    assert.ok(inFlight.length <= 2 && missing.length === inFlight.length, `changes missing at the host: ${JSON.stringify(figures)}`);
    assert.equal(status.sparkplug.held.dropped, 0);
  });
});
