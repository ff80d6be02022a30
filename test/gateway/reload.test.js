'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const mqtt = require('mqtt');
const { validateConfig } = require('../../gateway/runtime/config');
const { Gateway } = require('../../gateway/runtime/gateway');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { until } = require('../helpers/wait');

/** Ten jobs on two devices of one simulator; `edit` changes the raw config */
function rawConfig (url, edit = () => {}) {
  const c = {
    gateway: { id: 'reload', interval: '300ms', workers: 1 },
    mqtt: { embedded: { port: 0 } },
    devices: { a: { target: url, maxConnections: 2 }, b: { target: url } },
    jobs: Array.from({ length: 10 }, (_, i) => ({ name: `j${i}`, device: i < 5 ? 'a' : 'b', read: { fc: 3, address: i, quantity: 1 }, rate: '50/s' }))
  };
  edit(c);
  return c;
}

describe('config reload: unchanged jobs go on without a gap, the rest follow the new config', function () {
  this.timeout(40000);
  let sim, gw, sub;
  afterEach(async () => {
    if (sub) await sub.endAsync();
    if (gw) await gw.stop();
    if (sim) await sim.close();
    sim = gw = sub = null;
  });

  it('10 jobs, 3 changed, 2 added, 1 removed: no seq gap and no lost interval for the other 6; a broken config changes nothing', async () => {
    sim = await createModbusTcpSimulator({ port: 0 });
    gw = new Gateway(validateConfig(rawConfig(sim.url), { env: {} }));
    await gw.start();
    sub = await mqtt.connectAsync(gw.broker.url);
    const got = new Map();
    sub.on('message', (topic, payload) => {
      const [, , job, kind] = topic.split('/');
      if (kind !== 'latency') return;
      if (!got.has(job)) got.set(job, []);
      got.get(job).push(JSON.parse(payload.toString()));
    });
    await sub.subscribeAsync('nines/reload/+/latency', { qos: 1 });
    const count = (job) => (got.get(job) || []).length;
    await until(() => Array.from({ length: 10 }, (_, i) => `j${i}`).every((j) => count(j) >= 2), 'two summaries of every job', 15000);

    const next = rawConfig(sim.url, (c) => {
      c.jobs[1].rate = '20/s'; // changed
      c.jobs[6].read.quantity = 4; // changed
      c.jobs[7].rate = '10/s'; // changed
      c.jobs = c.jobs.filter((j) => j.name !== 'j9'); // removed
      c.jobs.push({ name: 'n1', device: 'a', read: { fc: 4, address: 0, quantity: 2 }, rate: '25/s' });
      c.jobs.push({ name: 'n2', device: 'b', read: { fc: 1, address: 0, quantity: 8 }, rate: '25/s' });
    });
    const before = new Map([...got].map(([job, list]) => [job, list.length]));
    const report = await gw.reload(validateConfig(next, { env: {} }));
    assert.deepEqual(report, { kept: ['j0', 'j2', 'j3', 'j4', 'j5', 'j8'], changed: ['j1', 'j6', 'j7'], added: ['n1', 'n2'], removed: ['j9'] });

    const kept = report.kept;
    await until(() => kept.every((j) => count(j) >= before.get(j) + 4) && count('n1') >= 2 && count('n2') >= 2, 'summaries of the kept and the new jobs', 15000);
    for (const job of kept) {
      const list = got.get(job);
      list.forEach((s, i) => {
        assert.equal(s.seq, i, `${job}: seq ${s.seq} at ${i}`);
        // every interval follows the previous one: no time left out of a summary
        if (i > 0) assert.equal(s.start, list[i - 1].end, `${job}: interval ${i} starts where ${i - 1} ended`);
      });
    }
    // a changed job publishes under its new settings; the removed one stops after its last interval
    const j1 = got.get('j1');
    assert.equal(j1[j1.length - 1].offered, 20);
    assert.equal(got.get('j6').at(-1).op, 'fc3-6+4');
    const j9 = count('j9');
    await new Promise((resolve) => setTimeout(resolve, 700));
    assert.equal(count('j9'), j9);
    assert.equal(gw.latest.has('j9'), false);

    // a broken config is refused whole, and what runs goes on
    const broken = rawConfig(sim.url, (c) => { c.jobs[0].rate = 'fast'; c.jobs.push({ name: 'x', device: 'zz', read: { fc: 3, address: 0, quantity: 1 }, rate: '1/s' }); });
    assert.throws(() => validateConfig(broken, { env: {} }), (err) => err.code === 'NINES_ERR_CONFIG' && /jobs\[0\]\.rate/.test(err.message) && /jobs\[10\]\.device/.test(err.message));
    // a valid config that changes what applies only at a restart is refused whole too
    const mqttChange = validateConfig(rawConfig(sim.url, (c) => { c.mqtt.buffer = 10; c.jobs[0].rate = '5/s'; }), { env: {} });
    await assert.rejects(gw.reload(mqttChange), (err) => {
      assert.equal(err.code, 'NINES_ERR_CONFIG');
      assert.deepEqual(err.details.errors.map((e) => e.path), ['mqtt']);
      return true;
    });
    const n0 = count('j0');
    await until(() => count('j0') >= n0 + 2, 'two more summaries of j0', 15000);
    assert.equal(got.get('j0').at(-1).offered, 50);
    assert.equal(gw.config.jobs.length, 11);
  });

  it('a changed job goes on as the same stream: its summaries tile time across the reload and seq goes on', async () => {
    sim = await createModbusTcpSimulator({ port: 0 });
    const two = (c) => { c.jobs = c.jobs.slice(0, 2); };
    gw = new Gateway(validateConfig(rawConfig(sim.url, two), { env: {} }));
    const got = { j0: [], j1: [] };
    gw.on('summary', (job, p) => got[job].push(p));
    await gw.start();
    await until(() => got.j0.length >= 2, 'two summaries of j0', 15000);
    // j0 on the same device with a new rate, j1 on a device whose settings change: both restart
    const report = await gw.reload(validateConfig(rawConfig(sim.url, (c) => { two(c); c.jobs[0].rate = '40/s'; c.devices.a.timeout = '750ms'; }), { env: {} }));
    assert.deepEqual(report.changed, ['j0', 'j1']);
    const at = { j0: got.j0.length, j1: got.j1.length };
    await until(() => got.j0.length >= at.j0 + 2 && got.j1.length >= at.j1 + 2, 'two more summaries of j0 and j1', 15000);
    for (const job of ['j0', 'j1']) {
      const list = got[job];
      list.forEach((s, i) => {
        assert.equal(s.seq, i, `${job}: seq ${s.seq} at ${i}`);
        if (i > 0) assert.equal(s.start, list[i - 1].end, `${job}: interval ${i} (seq ${s.seq}) starts where ${i - 1} ended`);
      });
      assert.equal(list[0].first, true);
      assert.ok(list.slice(1).every((s) => s.first === undefined), `${job}: only the stream's first summary is marked first`);
    }
    assert.equal(got.j0.at(-1).offered, 40);
  });

  it('a job removed and added again by later reloads is a new stream: seq 0, first: true, starting at the re-add', async () => {
    sim = await createModbusTcpSimulator({ port: 0 });
    const only = (names) => (c) => { c.jobs = c.jobs.filter((j) => names.includes(j.name)); };
    gw = new Gateway(validateConfig(rawConfig(sim.url, only(['j0', 'j1'])), { env: {} }));
    const got = { j0: [], j1: [] };
    gw.on('summary', (job, p) => got[job].push(p));
    await gw.start();
    await until(() => got.j1.length >= 2, 'two summaries of j1', 15000);
    const removed = await gw.reload(validateConfig(rawConfig(sim.url, only(['j0'])), { env: {} }));
    assert.deepEqual(removed.removed, ['j1']);
    const old = got.j1.length;
    const lastEnd = got.j1.at(-1).end;
    await until(() => got.j0.length >= 3, 'three summaries of j0', 15000);
    const readdedAt = Date.now();
    const added = await gw.reload(validateConfig(rawConfig(sim.url, only(['j0', 'j1'])), { env: {} }));
    assert.deepEqual(added, { kept: ['j0'], changed: [], added: ['j1'], removed: [] });
    await until(() => got.j1.length >= old + 2, 'two more summaries of j1', 15000);
    const fresh = got.j1.slice(old);
    // the time it was away is no part of the new stream, and the new stream says where it began
    assert.equal(fresh[0].seq, 0);
    assert.equal(fresh[0].first, true);
    assert.ok(fresh[0].start >= readdedAt && fresh[0].start > lastEnd, `starts at the re-add (${fresh[0].start} ≥ ${readdedAt})`);
    assert.equal(fresh[1].seq, 1);
    assert.equal(fresh[1].start, fresh[0].end);
  });

  it('a job removed and added again writes its new stream to an interval log of its own', async () => {
    sim = await createModbusTcpSimulator({ port: 0 });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-reload-hlog-'));
    try {
      const only = (names) => (c) => { c.gateway.hlog = dir; c.jobs = c.jobs.filter((j) => names.includes(j.name)); };
      gw = new Gateway(validateConfig(rawConfig(sim.url, only(['j0', 'j1'])), { env: {} }));
      const errors = [];
      gw.on('job-error', (job, err) => errors.push(err));
      let j1 = 0;
      let firsts = 0;
      gw.on('summary', (job, payload) => { if (job === 'j1') { j1++; if (payload.first === true) firsts++; } });
      await gw.start();
      await until(() => j1 >= 1, 'a summary of j1', 15000);
      await gw.reload(validateConfig(rawConfig(sim.url, only(['j0'])), { env: {} }));
      await gw.reload(validateConfig(rawConfig(sim.url, only(['j0', 'j1'])), { env: {} }));
      // the new stream's first summary (its log is written before the event), not the removed one's
      // last, which can come after the reloads
      await until(() => firsts >= 2, 'the first summary of j1\'s new stream', 15000);
      assert.deepEqual(errors.filter((e) => e.code === 'NINES_ERR_IO'), []);
      assert.equal(fs.readdirSync(dir).filter((f) => f.startsWith('j1-')).length, 2);
    } finally {
      await gw.stop();
      gw = null;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a device whose settings change is replaced, with every job on it', async () => {
    sim = await createModbusTcpSimulator({ port: 0 });
    gw = new Gateway(validateConfig(rawConfig(sim.url), { env: {} }));
    await gw.start();
    const report = await gw.reload(validateConfig(rawConfig(sim.url, (c) => { c.devices.b.timeout = '750ms'; }), { env: {} }));
    const reloadedAt = Date.now();
    assert.deepEqual(report.changed, ['j5', 'j6', 'j7', 'j8', 'j9']);
    assert.deepEqual(report.kept, ['j0', 'j1', 'j2', 'j3', 'j4']);
    // the replaced device serves its jobs again: summaries that began after the reload, with replies
    await until(() => ['j5', 'j9'].every((j) => gw.latest.has(j) && gw.latest.get(j).start >= reloadedAt && gw.latest.get(j).ok > 0), 'answered polls of j5 and j9 since the reload', 15000);
    assert.equal(gw.health.get('b').state, 'up');
  });

  it('the metrics endpoint follows a reload: series of a new job appear, those of a removed job go, kept counters keep growing', async () => {
    sim = await createModbusTcpSimulator({ port: 0 });
    const withMetrics = (c) => { c.gateway.metrics = { listen: '127.0.0.1:0' }; c.jobs = c.jobs.slice(0, 2); };
    gw = new Gateway(validateConfig(rawConfig(sim.url, withMetrics), { env: {} }));
    await gw.start();
    const okOf = async (job) => {
      const text = await (await fetch(gw.metrics.url)).text();
      const m = new RegExp(`^nines_job_requests_total\\{[^}]*job_name="${job}"[^}]*outcome="ok"[^}]*\\} (\\d+)`, 'm').exec(text);
      return m ? Number(m[1]) : null;
    };
    await until(() => gw.latest.has('j1') && gw.latest.get('j1').ok > 0, 'an answered poll of j1', 15000);
    const before = await okOf('j0');
    assert.ok(before > 0);
    await gw.reload(validateConfig(rawConfig(sim.url, (c) => { withMetrics(c); c.jobs[1] = { name: 'n1', device: 'a', read: { fc: 3, address: 9, quantity: 1 }, rate: '50/s' }; }), { env: {} }));
    await until(() => gw.latest.has('n1') && gw.latest.get('n1').ok > 0, 'an answered poll of n1', 15000);
    assert.equal(await okOf('j1'), null);
    assert.ok((await okOf('n1')) > 0);
    assert.ok((await okOf('j0')) >= before);
  });
});
