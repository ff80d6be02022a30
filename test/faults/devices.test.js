'use strict';

/**
 * Fault suite: devices that refuse, stall, send garbage and answer late, each polled by its own job
 * in one `nines run`; the broker stays up. Every slot still ends as ok, error, timeout or skipped
 * (harness.js accounting), nothing is dropped, and a device that comes back is `up` again within
 * its backoff max + 1 s.
 */

const assert = require('node:assert/strict');
const { startRig, stopGateway, accounting, report, waitFor, sleep, startSim } = require('./harness');

const BACKOFF_MAX_MS = 500; // harness.js: devices back off from 50 ms to 500 ms

describe('faults: devices that misbehave', function () {
  this.timeout(60000);
  let rig;
  afterEach(async () => { if (rig) await rig.cleanup(); rig = null; });

  it('refusing, stalling, garbage and late replies: every slot accounted for, seq contiguous, a device back is up within its backoff max + 1 s', async () => {
    rig = await startRig({
      id: 'f-devices',
      jobs: [
        { name: 'refusing', rate: 50 },
        { name: 'stalling', rate: 50, faults: 'stall=1s@1500ms' },
        { name: 'garbage', rate: 50, faults: 'garbage=0.2,seed=7' },
        // replies from 60 to 140 ms against a 100 ms timeout: about half come after their request gave up
        { name: 'late', rate: 20, faults: 'latency=60ms-140ms,seed=3' }
      ]
    });
    const g = rig.startGateway();
    const devState = (name) => {
      const s = rig.sub.status().filter((m) => m.json && m.json.devices && m.json.devices[name]);
      return s.length ? s[s.length - 1].json.devices[name].state : null;
    };
    await waitFor(() => devState('refusing') === 'up', `the refusing device up at first (stderr: ${rig.stderr})`);
    // the device goes away: its port refuses connections
    const port = rig.sims.refusing.port;
    await rig.sims.refusing.stop();
    await waitFor(() => devState('refusing') === 'down', 'the device reported down');
    await sleep(1000);
    // from before the simulator process is spawned: its start-up counts against the recovery, so
    // the figure is an upper bound, and an `up` can never come before it
    const backAt = Date.now();
    rig.sims.refusing = await startSim({ port });
    await waitFor(() => devState('refusing') === 'up', 'the device up again', BACKOFF_MAX_MS + 5000);
    const upStatus = rig.sub.status().find((m) => m.at >= backAt && m.json.devices && m.json.devices.refusing.state === 'up');
    const recoveryMs = upStatus.at - backAt;
    // past the stall, and a little more for every job to report
    await sleep(1000);
    const exit = await stopGateway(rig, g);
    assert.equal(exit.code, 0);
    await waitFor(() => rig.sub.status().some((m) => m.json && m.json.reason === 'stopped'), 'the stopped status');
    const figures = accounting(rig);
    for (const [job, f] of Object.entries(figures)) assert.equal(f.dropped, 0, `${job} dropped`);
    const sum = (job, field) => rig.sub.latency(job).reduce((n, m) => n + m.json[field], 0);
    assert.ok(sum('refusing', 'errors') > 0, 'the refusing device\'s polls failed while it was away');
    assert.ok(sum('stalling', 'timeouts') + sum('stalling', 'skipped') > 0, 'the stall shows as timeouts or skipped slots');
    assert.ok(sum('garbage', 'errors') > 0 && sum('garbage', 'ok') > 0, 'garbage replies are errors, the rest ok');
    assert.ok(sum('late', 'timeouts') > 0 && sum('late', 'ok') > 0, 'late replies are timeouts, the timely ones ok');
    // a late reply is never taken for the next request's: no reply to a wrong request shows up as ok garbage
    assert.equal(sum('late', 'errors'), 0, 'no late reply was mistaken for another request\'s');
    // the stalled device serves again after the stall
    const lastStalling = rig.sub.latency('stalling').slice(-3);
    assert.ok(lastStalling.some((m) => m.json.ok > 0), 'the stalled device answers again after the stall');
    assert.ok(recoveryMs <= BACKOFF_MAX_MS + 1000, `the device was up ${recoveryMs} ms after it came back`);
    report('devices refusing, stalling, garbage, late', { figures, recoveryMs });
  });
});
