'use strict';

/**
 * `npm run test:unit` (test/unit.mocharc.js) promises tests that need no system tool and start no
 * child process. This keeps the promise: every pattern matches files, and none of them (nor the
 * test helpers they require) starts a program, a child process or a server.
 */

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { programsNeededBy } = require('../helpers/system-tools');

const ROOT = path.join(__dirname, '..', '..');

/** The files one pattern of the list matches: a file, or `<folder>/*.test.js`. */
function expand (pattern) {
  if (!pattern.includes('*')) return fs.existsSync(path.join(ROOT, pattern)) ? [pattern] : [];
  const dir = path.dirname(pattern);
  return fs.readdirSync(path.join(ROOT, dir)).filter((f) => f.endsWith('.test.js')).map((f) => `${dir}/${f}`);
}

describe('npm run test:unit', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const { spec } = require('../unit.mocharc.js');

  it('is a package script that runs the unit config', () => {
    assert.match(pkg.scripts['test:unit'], /mocha --config test\/unit\.mocharc\.js/);
  });

  it('lists patterns that each match a file', () => {
    for (const pattern of spec) assert.ok(expand(pattern).length > 0, `${pattern} matches no file`);
  });

  it('holds only tests that start no program, child process or server', () => {
    const forbidden = /require\('node:child_process'\)|require\('node:net'\)|createServer\(|Simulator\(|startChildSim|WorkerPool|startEmbeddedBroker/;
    const files = spec.flatMap(expand);
    assert.ok(files.length >= 30, `${files.length} files`);
    for (const rel of files) {
      const file = path.join(ROOT, rel);
      // every file, the two below too: the check before a run (mochaHooks) reads them all, and
      // must not take their fixtures for uses (issue 21: test:unit demanded socat, mbpoll and ss)
      assert.deepEqual([...programsNeededBy(file)], [], `${rel} starts a system program`);
      // these two hold process and server names as data, and start none
      if (rel === 'test/tools/system-tools.test.js' || rel === 'test/tools/unit-set.test.js') continue;
      assert.doesNotMatch(fs.readFileSync(file, 'utf8'), forbidden, `${rel} starts a process or a server: not a unit test`);
    }
  });

  it('needs no system tool on a machine that has none: the check before the run asks for nothing', () => {
    const { missingTools } = require('../helpers/system-tools');
    const files = spec.flatMap(expand).map((rel) => path.join(ROOT, rel));
    const missing = missingTools(files, { env: { PATH: '/nonexistent' }, exists: () => false });
    assert.deepEqual(missing.map((m) => m.name), []);
  });
});
