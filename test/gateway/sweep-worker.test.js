'use strict';

/**
 * The sweep runs in a worker thread of its own (measure/in-worker.js), where a send's wait blocks
 * to its deadline instead of riding a 1 ms timer of the caller's loop, and its warm-up goes first,
 * out of every figure: a closed loop, then the first step's first requests, paced. Counted against
 * the simulator's own request count; no timing is asserted (how late the waits are shows in
 * `npm run bench`, questions 4 and 15).
 */

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { runSweep } = require('../../gateway/measure/sweep');
const { pacedWarmup } = require('../../gateway/measure/probe');
const { decodeHistogram, summarize } = require('../../gateway/latency');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { nines } = require('../helpers/nines-cli');

describe('nines sweep: in a worker thread, with a warm-up', function () {
  this.timeout(30000);
  let sim;
  before(async () => { sim = await createModbusTcpSimulator({ port: 0 }); });
  after(async () => { await sim.close(); });

  const sweep = (o) => runSweep({ target: sim.url, read: '3:0:10', workers: 1, timeoutMs: 1000, ...o });

  it('runs in a worker by default; every step comes back with its histogram, and the warm-up is sent but never counted', async () => {
    const before = sim.stats.requests;
    const events = [];
    const run = sweep({ rates: [200, 400], stepMs: 300, warmup: 150 });
    run.on('step', (s) => events.push(s));
    const result = await run.promise;
    const completed = result.steps.reduce((n, s) => n + s.completed, 0);
    // the closed loop (150), then paced: 0.3 s at 200/s (60) and pacedWarmup(150, r) = 150 at r
    // = min(400/s, half the closed loop's rate), the most that is ever sent
    assert.equal(pacedWarmup(150, 200), 150);
    const warm = sim.stats.requests - before - completed;
    assert.ok(warm > 150 + 60 && warm <= 150 + 60 + 150, `${warm} warm-up requests: the closed loop, then the paced part`);
    assert.equal(result.steps.length, 2);
    assert.equal(events.length, 2, 'each step is emitted as it ends');
    for (const s of result.steps) {
      assert.equal(s.thread, 'worker');
      assert.ok(s.completed > 0 && s.errors === 0 && s.timeouts === 0, JSON.stringify(s));
      assert.equal(s.histogram.totalCount, s.completed, 'the histogram holds the step\'s own requests, not the warm-up');
      assert.equal(decodeHistogram(s.hist).totalCount, s.completed, 'hist carries the same, encoded');
      // the histogram that crossed from the worker gives the figures the worker computed
      const again = summarize(s.histogram);
      assert.deepEqual([again.p50, again.p99, again.max], [s.p50, s.p99, s.max]);
    }
    assert.deepEqual(events.map((s) => s.histogram.totalCount), result.steps.map((s) => s.completed));
    if (result.saturation) assert.ok(result.steps.includes(result.saturation), 'the saturation point is one of the steps');
  });

  it('the next step waits until the caller has taken the last: stop() in a step\'s listener ends the sweep there, no request of the next step sent; the connection is closed', async () => {
    const before = sim.stats.requests;
    const run = sweep({ rates: [100, 100, 100, 100], stepMs: 700 });
    run.once('step', () => {
      // a slow listener (the first step's decode loads the latency modules, a table row, a .hgrm
      // file): at 100/s, a step started beside it would have sent 10 requests by the stop
      const until = Date.now() + 100;
      while (Date.now() < until);
      run.stop();
    });
    const result = await run.promise;
    assert.equal(result.steps.length, 1, `stopped after ${result.steps.length} steps`);
    assert.equal(sim.stats.requests - before, result.steps[0].completed, 'the device saw the first step\'s requests and no other');
    // the server sees the close a moment after the sweep's promise settles
    for (let i = 0; i < 100 && sim.stats.open > 0; i++) await sleep(20);
    assert.equal(sim.stats.open, 0, 'no connection left open');
  });

  it('refuses a bad warm-up and a bad inWorker, naming the field, before opening a connection', () => {
    const coded = (field) => (e) => e.code === 'NINES_ERR_INVALID_ARG' && e.details.field === field;
    assert.throws(() => sweep({ rates: [100], warmup: -1 }), coded('warmup'));
    assert.throws(() => sweep({ rates: [100], warmup: 1.5 }), coded('warmup'));
    assert.throws(() => sweep({ rates: [100], inWorker: 'yes' }), coded('inWorker'));
  });

  it('nines sweep --json carries each step\'s histogram; --main-thread runs it inline; --hgrm writes a file per step; the table gives the sweep\'s own lateness; --warmup x is refused naming the flag', async () => {
    const main = await nines(['sweep', sim.url, '--read', '3:0:10', '--rates', '100', '--step', '300ms', '--workers', '1', '--main-thread', '--json']);
    assert.equal(main.code, 0, main.stderr);
    assert.equal(JSON.parse(main.stdout).steps[0].thread, 'main');
    // --json (in the worker, with a warm-up) and --hgrm: each step's histogram in the JSON, and one
    // percentile file per step holding that step's requests, for nines plot
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-sweep-'));
    try {
      const h = await nines(['sweep', sim.url, '--read', '3:0:10', '--rates', '100,200', '--step', '300ms', '--workers', '1', '--warmup', '50', '--hgrm', dir, '--json']);
      assert.equal(h.code, 0, h.stderr);
      const out = JSON.parse(h.stdout);
      for (const step of out.steps) {
        assert.equal(step.thread, 'worker');
        assert.equal(decodeHistogram(step.hist).totalCount, step.completed);
      }
      assert.deepEqual(out.files.map((f) => path.basename(f)), ['sweep-fc3-0+10-100-per-s.hgrm', 'sweep-fc3-0+10-200-per-s.hgrm']);
      out.files.forEach((f, i) => {
        const total = /Total count\s*=\s*(\d+)/.exec(fs.readFileSync(f, 'utf8'));
        assert.ok(total, f);
        assert.equal(Number(total[1]), out.steps[i].completed, `${f} holds its step's requests`);
      });
      const plot = await nines(['plot', ...out.files, '-o', path.join(dir, 'sweep.svg')]);
      assert.equal(plot.code, 0, plot.stderr);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    // the table gives each step the sweep's own lateness beside its figures
    const table = await nines(['sweep', sim.url, '--read', '3:0:10', '--rates', '100', '--step', '300ms', '--workers', '1']);
    assert.equal(table.code, 0, table.stderr);
    const [head, row] = table.stdout.split('\n');
    assert.match(head, /own p99$/);
    assert.match(row, /^\s+100\s.*\s\d+\.\d{3}$/, 'the last column is a lag in ms');
    const bad = await nines(['sweep', sim.url, '--read', '3:0:10', '--rates', '100', '--warmup', 'x']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /--warmup must be a whole number ≥ 0 \(requests\); got "x"/);
  });
});
