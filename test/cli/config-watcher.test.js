'use strict';

/**
 * `nines run --watch` follows its config file (cli/config-watcher.js): a change is reported once
 * the file has held still, a file that keeps changing is reported with a coded error, and an
 * editor's save by rename counts as one change.
 */

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { watchConfigFile } = require('../../gateway/cli/config-watcher');
const { until } = require('../helpers/wait');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

describe('config watcher: a change counts once the file holds still', function () {
  this.timeout(20000);
  let tmp, watcher;
  beforeEach(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-watch-')); });
  afterEach(() => {
    if (watcher) watcher.close();
    watcher = null;
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  function watch (file, opts) {
    const seen = { settled: [], problems: [] };
    watcher = watchConfigFile(file, {
      onSettled: () => seen.settled.push(Date.now()),
      onProblem: (err) => seen.problems.push(err)
    }, opts);
    return seen;
  }

  it('a file that keeps changing is reported once with NINES_ERR_CONFIG, and counts as changed only after its last write', async () => {
    const file = path.join(tmp, 'gw.yaml');
    fs.writeFileSync(file, 'gateway: { id: a }\n');
    // a settle time far above the writer's pauses, so a busy machine cannot make one look settled
    const seen = watch(file, { settleMs: 1000, maxWaitMs: 1500 });
    // a writer that never pauses for the settle time: 40 appends, 50 ms apart
    let lastWriteAt = 0;
    for (let i = 0; i < 40; i++) {
      fs.appendFileSync(file, `# line ${i}\n`);
      lastWriteAt = Date.now();
      await sleep(50);
      // while it is written, nothing counts as a finished change
      assert.equal(seen.settled.length, 0, `settled while still being written (append ${i})`);
    }
    await until(() => seen.settled.length === 1);
    assert.ok(seen.settled[0] >= lastWriteAt);
    assert.equal(seen.problems.length, 1);
    assert.equal(seen.problems[0].code, 'NINES_ERR_CONFIG');
    assert.match(seen.problems[0].message, /kept changing for \d+ s/);
    assert.deepEqual(seen.problems[0].details.errors.map((e) => e.value), [path.resolve(file)]);
    await sleep(1200);
    assert.equal(seen.settled.length, 1);
  });

  it('an editor\'s save (write a temporary file, rename it over the config) counts as one change; other files do not count', async () => {
    const file = path.join(tmp, 'gw.yaml');
    fs.writeFileSync(file, 'gateway: { id: a }\n');
    const seen = watch(file, { settleMs: 200, maxWaitMs: 5000 });
    fs.writeFileSync(path.join(tmp, 'other.yaml'), 'x: 1\n');
    await sleep(400);
    assert.equal(seen.settled.length, 0);
    const swap = path.join(tmp, '.gw.yaml.swp');
    fs.writeFileSync(swap, 'gateway: { id: b }\n');
    fs.renameSync(swap, file);
    await until(() => seen.settled.length === 1);
    await sleep(400);
    assert.equal(seen.settled.length, 1);
    assert.equal(seen.problems.length, 0);
  });
});
