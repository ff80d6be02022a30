'use strict';

/**
 * Fault suite: a worker thread crashes (a drill: NINES_FAULT_DRILLS=1 and SIGUSR2 end worker 0 as a
 * crash would). Its jobs restart after the pool's backoff (500 ms the first time); seq stays
 * contiguous, the time stays tiled, and the slots nobody served are counted as skipped.
 * The crash loop is in test/long/faults.test.js.
 */

const assert = require('node:assert/strict');
const { startRig, stopGateway, accounting, report, waitFor } = require('./harness');

const RESTART_MAX_MS = 500; // the pool's first restart delay (equal jitter: 250-500 ms)

describe('faults: a worker crash', function () {
  this.timeout(60000);
  let rig;
  afterEach(async () => { if (rig) await rig.cleanup(); rig = null; });

  it('a crashed worker is restarted within its backoff + 1 s; seq contiguous, the missed slots counted as skipped', async () => {
    rig = await startRig({ id: 'f-worker', jobs: [{ name: 'a', rate: 100 }, { name: 'b', rate: 50 }] });
    const g = rig.startGateway();
    await waitFor(() => rig.sub.latency('a').length >= 3 && rig.sub.latency('b').length >= 3, `summaries before the crash (stderr: ${rig.stderr})`);
    const crashAt = Date.now();
    g.signal('SIGUSR2');
    await waitFor(() => /worker 0 exited/.test(rig.stderr), 'the crash reported');
    // the first summary with a served slot that began after the crash: the job is back
    const servedAfter = () => rig.sub.latency('a').find((m) => m.json.end > crashAt && m.json.ok > 0 && m.json.skipped > 0);
    await waitFor(() => servedAfter() !== undefined, 'polling back after the restart');
    await waitFor(() => rig.sub.latency('a').filter((m) => m.at > servedAfter().at).length >= 2, 'two more summaries');
    const exit = await stopGateway(rig, g);
    assert.equal(exit.code, 0);
    await waitFor(() => rig.sub.status().some((m) => m.json && m.json.reason === 'stopped'), 'the stopped status');
    const figures = accounting(rig);
    const gap = servedAfter().json;
    // served again at most restart delay + 1 s after the crash (the gap summary spans the crash)
    const recoveryMs = gap.skipped * 1000 / 100;
    assert.ok(recoveryMs <= RESTART_MAX_MS + 1000, `${gap.skipped} slots skipped at 100/s: ${recoveryMs} ms without polling`);
    assert.ok(rig.sub.messages.some((m) => m.topic === 'nines/f-worker/a/error' && m.json.code === 'NINES_ERR_WORKER'), 'the crash published as an error');
    report('worker crash', { figures, recoveryMs });
  });
});
