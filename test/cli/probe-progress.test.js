'use strict';

// The probe's progress reports (issue 20): each one wakes the caller's thread, which on one core
// takes the CPU from the probe's, so a run reports as it starts and as it ends, and in between only
// when asked (progressMs, `--progress`). The counts are asserted, not how late anything is: what the
// reports cost shows in `npm run bench` (question 15) and measure/probe.js.

const assert = require('node:assert/strict');
const { runProbe, progressInterval, PROGRESS_MIN_MS } = require('../../gateway/measure/probe');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { startChildSim } = require('../helpers/child-sim');
const { nines } = require('../helpers/nines-cli');

describe('nines probe: progress reports only when asked for', function () {
  this.timeout(30000);
  let sim;
  before(async () => { sim = await createModbusTcpSimulator({ port: 0 }); });
  after(async () => { await sim.close(); });

  /** Runs a fixed-rate probe in its worker thread and returns the `done` of every progress report. */
  async function reports (o) {
    const seen = [];
    const p = runProbe({ target: sim.url, read: '3:0:10', connections: [1], timeoutMs: 1000, ratePerSec: 200, durationMs: 1200, ...o });
    p.on('progress', (x) => seen.push(x.done));
    const { runs } = await p.promise;
    return { seen, run: runs[0] };
  }

  it('by default a run reports as it starts and as it ends, nothing between', async () => {
    const { seen, run } = await reports({});
    assert.deepEqual(seen, [0, run.ok + run.errors + run.timeouts], 'two reports: the start and the end');
    assert.ok(run.ok > 100, `the run went on for its 1.2 s (${run.ok} replies) without reporting`);
  });

  it('with progressMs a run also reports every progressMs while it is measured, counts never going back', async () => {
    const { seen, run } = await reports({ progressMs: '200ms' });
    // 1.2 s at one report per 200 ms: 5-6 between the start and the end, fewer only if the thread
    // was held for whole intervals; at least 3 leaves room for a loaded machine
    assert.ok(seen.length >= 2 + 3, `reports: ${seen.join(', ')}`);
    assert.equal(seen[0], 0);
    assert.equal(seen[seen.length - 1], run.ok + run.errors + run.timeouts);
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i] >= seen[i - 1], `counts: ${seen.join(', ')}`);
  });

  it('in a worker thread the start is reported before the warm-up, so the caller wakes before the measured requests', async () => {
    const before = sim.stats.requests;
    let atReport = -1;
    const seen = [];
    const p = runProbe({ target: sim.url, read: '3:0:10', connections: [1], timeoutMs: 1000, ratePerSec: 200, count: 20, warmup: 200 });
    p.on('progress', (x) => { if (seen.length === 0) atReport = sim.stats.requests - before; seen.push(x.done); });
    const { runs } = await p.promise;
    // 200 in a closed loop, then 200 paced at 200/s (a second), then the count
    assert.equal(sim.stats.requests - before, 200 + 200 + 20);
    assert.deepEqual(seen, [0, 20], 'the start and the end, nothing more');
    assert.ok(atReport >= 0 && atReport < 400, `the start came after ${atReport} requests, within the warm-up's 400`);
    assert.equal(runs[0].thread, 'worker');
  });

  it('a run states the CPU the process used while it was measured', async () => {
    const { run } = await reports({});
    assert.equal(typeof run.cpuPct, 'number');
    assert.ok(run.cpuPct > 0 && Number.isFinite(run.cpuPct), `cpuPct ${run.cpuPct}`);
  });

  it('progressMs is a duration of at least PROGRESS_MIN_MS, or 0; anything else is refused with its field', () => {
    assert.equal(progressInterval('1s'), 1000);
    assert.equal(progressInterval(0), 0);
    assert.equal(progressInterval(PROGRESS_MIN_MS), PROGRESS_MIN_MS);
    const coded = (field) => (e) => e.code === 'NINES_ERR_INVALID_ARG' && e.details.field === field;
    assert.throws(() => progressInterval('20ms'), coded('progressMs'));
    assert.throws(() => progressInterval('soon'), coded('progressMs'));
    assert.throws(() => runProbe({ target: sim.url, read: '3:0:10', count: 1, progressMs: 50 }), coded('progressMs'));
  });
});

describe('nines probe --progress', function () {
  this.timeout(60000);
  let sim;
  before(async () => { sim = await startChildSim('modbus'); });
  after(async () => { if (sim) await sim.stop(); });

  it('refuses a pace below the least, naming the flag, even where nothing would show it', async () => {
    const r = await nines(['probe', sim.url, '--read', '3:0:10', '--count', '10', '--progress', '20ms']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /--progress must be 0 \(a report as each run starts and ends only\) or at least 100 ms; got "20ms"/);
  });

  it('takes a valid pace without a terminal and runs as without it', async () => {
    const r = await nines(['probe', sim.url, '--read', '3:0:10', '--count', '50', '--progress', '1s', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).runs[0].ok, 50);
  });
});
