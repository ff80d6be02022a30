'use strict';

// The worker's summaries in pieces (issue 11): a summary is made and posted over several turns of the
// event loop, so a reply waits for one piece, not the whole summary; what must follow a job's
// summaries (its end, its stop, the host's) still comes after them, and a summary's payload is the
// same as made in one go.

const assert = require('node:assert/strict');
const { Steps } = require('../../gateway/workers/steps');
const { Host } = require('../../gateway/workers/host');
const { Recorder } = require('../../gateway/latency');
const { summaryPayload } = require('../../gateway/jobs/payload');
const { buildDeviceSpec, buildJobSpec } = require('../../gateway');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('workers: summaries in pieces', function () {
  this.timeout(10000);

  it('Steps runs one piece per turn, in order, and goes on after one that throws', async () => {
    const errors = [];
    const steps = new Steps((err) => errors.push(err.message));
    const done = [];
    steps.add(() => done.push(1));
    steps.add(() => { throw new Error('boom'); });
    steps.add(() => done.push(3));
    assert.deepEqual(done, [], 'nothing within add()');
    await turn();
    assert.deepEqual(done, [1], 'one piece per turn');
    while (steps.length) await turn();
    await turn();
    assert.deepEqual(done, [1, 3]);
    assert.deepEqual(errors, ['boom']);
  });

  it('posts a job\'s summary in pieces, the payload as made in one go, and its end after its last summary', async () => {
    const sim = await createModbusTcpSimulator({ port: 0 });
    const posted = [];
    const host = new Host({ post: (m) => posted.push(m), hlog: true });
    try {
      const device = buildDeviceSpec({ name: 'plc', target: sim.url, timeoutMs: 1000 });
      host.handle({ type: 'device', spec: device });
      host.handle({ type: 'job', spec: buildJobSpec({ name: 'j', read: '3:0:10', ratePerSec: 200, count: 40, intervalMs: 100 }, { device }) });
      while (!posted.some((m) => m.type === 'end')) await new Promise((resolve) => setTimeout(resolve, 10));
      const kinds = posted.filter((m) => m.type === 'summary' || m.type === 'end').map((m) => m.type);
      assert.equal(kinds[kinds.length - 1], 'end', 'the end after every summary');
      const summaries = posted.filter((m) => m.type === 'summary');
      assert.equal(summaries.reduce((a, m) => a + m.payload.count, 0), 40, 'every request in a summary');
      for (const m of summaries) assert.equal(m.hlog.length, 3);
    } finally {
      await host.stop();
      await sim.close();
    }
    const order = posted.map((m) => m.type);
    assert.ok(order.lastIndexOf('summary') < order.indexOf('stopped'), 'stopped after the last summary');
  });

  it('a summary made in pieces equals the one made in one go', async () => {
    const r = new Recorder({ policy: 'closed' });
    for (let i = 0; i < 5000; i++) r.recordOk(20000 + i * 7, 20000 + i * 5, 300 + (i % 50));
    const snap = r.snapshot();
    const meta = { job: 'j', target: 'modbus+tcp://x:502', op: 'fc3-0+10', connections: 1, ratePerSec: null };
    const whole = summaryPayload(snap, 0, meta, { gateway: 'g', job: 'j' });
    const posted = [];
    const host = new Host({ post: (m) => posted.push(m), gateway: 'g' });
    let recycled = false;
    host.postSummary('j', snap, { ...meta }, () => { recycled = true; });
    assert.equal(posted.length, 0, 'nothing posted within the call');
    while (!recycled) await turn();
    const piecewise = posted.find((m) => m.type === 'summary').payload;
    delete piecewise.loopDelayP99;
    assert.deepEqual(piecewise, whole);
    await host.stop();
  });
  it('gives a summary\'s histograms back once, after its post, even when giving them back throws', async () => {
    const r = new Recorder({ policy: 'closed' });
    for (let i = 0; i < 100; i++) r.recordOk(20000 + i, 20000 + i, 300);
    const snap = r.snapshot();
    const meta = { job: 'j', target: 'modbus+tcp://x:502', op: 'fc3-0+10', connections: 1, ratePerSec: null };
    const posted = [];
    const host = new Host({ post: (m) => posted.push(m), gateway: 'g' });
    let calls = 0;
    host.postSummary('j', snap, { ...meta }, () => { calls++; posted.push({ type: 'recycled' }); throw new Error('recycle failed'); });
    while (host.steps.length) await turn();
    await turn();
    assert.equal(calls, 1, 'done once: a throwing done() is not called again as the failure of a piece');
    const order = posted.map((m) => m.type);
    assert.ok(order.indexOf('summary') >= 0 && order.indexOf('summary') < order.indexOf('recycled'), `the post first: ${order}`);
    await host.stop();
  });
});
