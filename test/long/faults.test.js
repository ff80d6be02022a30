'use strict';

/**
 * The fault suite's long variants (npm run test:long, not in CI): a 60 s broker outage with a
 * kill -9 of the gateway in the middle (issue 12: "every seq arrives exactly once, or as a counted
 * drop"), an outage far longer than the memory buffer, and a worker crash loop. Same rig and checks
 * as test/faults (harness.js).
 */

const assert = require('node:assert/strict');
const { startRig, stopGateway, accounting, report, waitFor, sleep } = require('../faults/harness');

const OUTAGE_MS = Number(process.env.NINES_LONG_OUTAGE_MS) || 60000;

describe('long faults', function () {
  this.timeout(OUTAGE_MS + 120000);
  let rig;
  afterEach(async () => { if (rig) await rig.cleanup(); rig = null; });

  it(`kill -9 during a ${OUTAGE_MS / 1000} s broker outage, restart: every seq exactly once or a counted drop`, async () => {
    const jobs = [{ name: 'a', rate: 200, values: { mode: 'every', maxRate: '10/s' } }, { name: 'b', rate: 100 }, { name: 'c', rate: 20 }];
    rig = await startRig({ id: 'l-spool-kill', jobs, spool: { maxBytes: '64MiB', sync: '100ms' }, interval: '500ms', reconnectMaxMs: 5000 });
    const g1 = rig.startGateway();
    await waitFor(() => jobs.every((j) => rig.sub.latency(j.name).length >= 2), `summaries (stderr: ${rig.stderr})`);
    await rig.brokerDown('kill');
    const downAt = Date.now();
    await sleep(OUTAGE_MS / 2);
    await g1.kill();
    await sleep(1000);
    const g2 = rig.startGateway();
    await sleep(Math.max(0, downAt + OUTAGE_MS - Date.now()));
    const backAt = await rig.brokerUp();
    await waitFor(() => rig.firstMessageAfter(backAt) !== null, 'the gateway back', rig.reconnectMaxMs + 10000);
    const recoveryMs = rig.firstMessageAfter(backAt) - backAt;
    await waitFor(() => jobs.every((j) => rig.sub.latency(j.name).some((m) => m.json.end > backAt + 1000)), 'summaries after the outage', 30000);
    const exit = await stopGateway(rig, g2);
    assert.equal(exit.code, 0);
    await waitFor(() => rig.sub.status().some((m) => m.at > backAt && m.json && m.json.reason === 'stopped'), 'the stopped status');
    const figures = accounting(rig);
    for (const [job, f] of Object.entries(figures)) {
      assert.equal(f.duplicates, 0, `${job}: exactly once`);
      assert.equal(f.runs, 1 + (f.dropped > 0 ? 1 : 0), `${job}: one stream across the restart`);
    }
    const values = rig.sub.values('a');
    for (let i = 1; i < values.length; i++) assert.ok(values[i].json.ts > values[i - 1].json.ts, 'values in read order');
    assert.ok(recoveryMs <= rig.reconnectMaxMs + 1000, `recovered in ${recoveryMs} ms`);
    report(`gateway kill -9 during a ${OUTAGE_MS / 1000} s broker outage, with a spool`, { figures, recoveryMs, values: values.length });
  });

  it('a 30 s outage against a 20-summary memory buffer: the drops are counted and explain every gap', async () => {
    const jobs = [{ name: 'a', rate: 100 }, { name: 'b', rate: 50 }];
    rig = await startRig({ id: 'l-buffer', jobs, mqtt: { buffer: 20 }, interval: '500ms', reconnectMaxMs: 5000 });
    const g = rig.startGateway();
    await waitFor(() => jobs.every((j) => rig.sub.latency(j.name).length >= 2), `summaries (stderr: ${rig.stderr})`);
    await rig.brokerDown('stop');
    await sleep(OUTAGE_MS / 2);
    const backAt = await rig.brokerUp();
    await waitFor(() => rig.firstMessageAfter(backAt) !== null, 'the gateway back', rig.reconnectMaxMs + 10000);
    const recoveryMs = rig.firstMessageAfter(backAt) - backAt;
    await waitFor(() => jobs.every((j) => rig.sub.latency(j.name).some((m) => m.json.end > backAt + 1000)), 'summaries after the outage', 30000);
    await stopGateway(rig, g);
    await waitFor(() => rig.sub.status().some((m) => m.json && m.json.reason === 'stopped'), 'the stopped status');
    const figures = accounting(rig);
    assert.ok(Object.values(figures).some((f) => f.dropped > 0));
    assert.ok(recoveryMs <= rig.reconnectMaxMs + 1000, `recovered in ${recoveryMs} ms`);
    report(`broker stopped ${OUTAGE_MS / 2000} s against a 20-summary buffer`, { figures, recoveryMs });
  });

  it('a worker crash loop: six crashes, each as soon as the worker is back; seq contiguous, every slot accounted for, restarts back off', async () => {
    const jobs = [{ name: 'a', rate: 100 }, { name: 'b', rate: 50 }];
    rig = await startRig({ id: 'l-crash-loop', jobs, interval: '500ms' });
    const g = rig.startGateway();
    await waitFor(() => jobs.every((j) => rig.sub.latency(j.name).length >= 2), `summaries (stderr: ${rig.stderr})`);
    const delays = [];
    for (let i = 0; i < 6; i++) {
      const crashes = (rig.stderr.match(/worker 0 exited/g) || []).length;
      const at = Date.now();
      g.signal('SIGUSR2');
      await waitFor(() => (rig.stderr.match(/worker 0 exited/g) || []).length > crashes, 'the crash reported');
      const m = [...rig.stderr.matchAll(/restarting .* in (\d+) ms/g)].pop();
      delays.push(Number(m[1]));
      // back: a summary with served slots that ended after the restart delay
      await waitFor(() => rig.sub.latency('a').some((x) => x.json.end > at + delays[i] && x.json.ok > 0), `polling back after crash ${i + 1}`, delays[i] + 10000);
    }
    await sleep(1500);
    await stopGateway(rig, g);
    await waitFor(() => rig.sub.status().some((m) => m.json && m.json.reason === 'stopped'), 'the stopped status');
    const figures = accounting(rig);
    for (const f of Object.values(figures)) { assert.equal(f.dropped, 0); assert.equal(f.runs, 1); }
    // equal jitter: each delay is in [ceiling/2, ceiling] with the ceiling doubling from 500 ms
    delays.forEach((d, i) => assert.ok(d >= 250 * 2 ** i && d <= 500 * 2 ** i, `restart ${i + 1} after ${d} ms`));
    report('worker crash loop (6 crashes)', { figures, restartDelaysMs: delays });
  });
});
