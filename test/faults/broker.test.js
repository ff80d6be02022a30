'use strict';

/**
 * Fault suite: the broker goes away (stopped, SIGKILLed, SIGSTOPped), for less and for more than
 * the gateway's buffer holds. A real `nines run`, a real Mosquitto, simulated devices in their own
 * processes; judged by an independent subscriber (harness.js).
 */

const assert = require('node:assert/strict');
const { startRig, stopGateway, accounting, report, waitFor, sleep } = require('./harness');

const JOBS = [{ name: 'a', rate: 100 }, { name: 'b', rate: 50 }];

/** Summaries of every job that ended after `t` */
const summariesAfter = (rig, t) => JOBS.every((j) => rig.sub.latency(j.name).some((m) => m.json.end > t));

describe('faults: the broker goes away', function () {
  this.timeout(60000);
  let rig;
  afterEach(async () => { if (rig) await rig.cleanup(); rig = null; });

  async function outage ({ id, how, outageMs, buffer }) {
    rig = await startRig({ id, jobs: JOBS, mqtt: buffer === undefined ? {} : { buffer } });
    const g = rig.startGateway();
    await waitFor(() => JOBS.every((j) => rig.sub.latency(j.name).length >= 2), `summaries before the outage (stderr: ${rig.stderr})`);
    await rig.brokerDown(how);
    await sleep(outageMs);
    const backAt = await rig.brokerUp();
    await waitFor(() => rig.firstMessageAfter(backAt) !== null, 'the gateway back on the broker', rig.reconnectMaxMs + 5000);
    const recoveryMs = rig.firstMessageAfter(backAt) - backAt;
    await waitFor(() => summariesAfter(rig, backAt), 'summaries from after the outage');
    const exit = await stopGateway(rig, g);
    assert.equal(exit.code, 0, `exit code (stderr: ${rig.stderr})`);
    await waitFor(() => rig.sub.status().some((m) => m.json && m.json.reason === 'stopped'), 'the stopped status');
    const figures = accounting(rig);
    assert.ok(recoveryMs <= rig.reconnectMaxMs + 1000, `recovered ${recoveryMs} ms after the broker came back (backoff max ${rig.reconnectMaxMs} ms + 1 s)`);
    return { figures, recoveryMs };
  }

  it('stopped for 1.5 s, less than the buffer holds: every seq arrives, nothing dropped, back within backoff max + 1 s', async () => {
    const { figures, recoveryMs } = await outage({ id: 'f-stop', how: 'stop', outageMs: 1500 });
    for (const f of Object.values(figures)) assert.equal(f.dropped, 0);
    report('broker stopped 1.5 s (within the buffer)', { figures, recoveryMs });
  });

  it('SIGKILLed for 2 s, more than a 4-summary buffer holds: each seq gap is a counted drop', async () => {
    const { figures, recoveryMs } = await outage({ id: 'f-kill', how: 'kill', outageMs: 2000, buffer: 4 });
    const dropped = Object.values(figures).reduce((n, f) => n + f.dropped, 0);
    assert.ok(dropped > 0, 'the outage outlasted the buffer, so some summaries were dropped (and counted)');
    report('broker SIGKILLed 2 s (beyond a 4-summary buffer)', { figures, recoveryMs });
  });

  it('SIGSTOPped for 2.5 s (half-open: keepalive 1 s): every seq arrives once the broker runs again, nothing dropped', async () => {
    rig = await startRig({ id: 'f-freeze', jobs: JOBS });
    const g = rig.startGateway();
    await waitFor(() => JOBS.every((j) => rig.sub.latency(j.name).length >= 2), `summaries before the freeze (stderr: ${rig.stderr})`);
    rig.broker.freeze();
    await sleep(2500);
    rig.broker.thaw();
    const backAt = Date.now();
    await waitFor(() => rig.firstMessageAfter(backAt) !== null, 'messages after the thaw', rig.reconnectMaxMs + 5000);
    // the gateway found the frozen connection dead (1.5 × keepalive) and reconnects with backoff
    const recoveryMs = rig.firstMessageAfter(backAt) - backAt;
    await waitFor(() => summariesAfter(rig, backAt), 'summaries from after the thaw');
    const exit = await stopGateway(rig, g);
    assert.equal(exit.code, 0);
    await waitFor(() => rig.sub.status().some((m) => m.json && m.json.reason === 'stopped'), 'the stopped status');
    const figures = accounting(rig);
    for (const f of Object.values(figures)) assert.equal(f.dropped, 0);
    assert.ok(recoveryMs <= rig.reconnectMaxMs + 1000, `recovered ${recoveryMs} ms after the thaw`);
    report('broker SIGSTOPped 2.5 s (half-open)', { figures, recoveryMs });
  });
});
