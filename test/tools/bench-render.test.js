'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

/**
 * `npm run bench -- --render <saved.json>` re-renders a saved run in place: under the file's own
 * name (a run saved as <date>-<host>-<what>.json is not rewritten as <date>-<host>.md beside it),
 * and it leaves bench/README.md alone unless the run is a full run of every question.
 */

const ROOT = path.join(__dirname, '..', '..');
const SAVED = path.join(ROOT, 'bench', 'results', '2026-11-26-vm-q4-clock.json');

describe('bench --render', function () {
  this.timeout(30000);
  let dir;
  beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-render-')); });
  afterEach(() => { fs.rmSync(dir, { recursive: true, force: true }); });

  it('rewrites a renamed saved run under its own name, with no copy beside it, and leaves the README alone', () => {
    const file = path.join(dir, 'renamed-run.json');
    fs.copyFileSync(SAVED, file);
    const readme = fs.readFileSync(path.join(ROOT, 'bench', 'README.md'), 'utf8');
    execFileSync(process.execPath, [path.join(ROOT, 'bench', 'run.js'), '--render', file], { cwd: ROOT, stdio: 'pipe' });
    assert.deepEqual(fs.readdirSync(dir).sort(), ['renamed-run-q4-sweep.svg', 'renamed-run.json', 'renamed-run.md']);
    const md = fs.readFileSync(path.join(dir, 'renamed-run.md'), 'utf8');
    assert.match(md, /\(renamed-run-q4-sweep\.svg\)/, 'the page shows its own plot');
    assert.match(md, /## Q4\./);
    assert.equal(fs.readFileSync(path.join(ROOT, 'bench', 'README.md'), 'utf8'), readme);
  });
});
