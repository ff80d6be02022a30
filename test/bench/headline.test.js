'use strict';

/**
 * Which bench runs may rewrite bench/README.md's headline (bench/lib/report.js headlinesReadme):
 * a full run of every question, whether just run or re-rendered from its saved .json. A saved
 * run of a few questions, re-rendered, left the headline showing only those (and was reverted by hand).
 */

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { headlinesReadme } = require('../../bench/lib/report');

describe('bench: the README headline comes from a full run of every question', () => {
  it('a saved run of some questions (--only) does not, whatever its mode', () => {
    const saved = JSON.parse(fs.readFileSync(path.join(__dirname, '../../bench/results/2026-11-26-vm-q4-clock.json'), 'utf8'));
    assert.match(saved.argv, / --only 4/);
    assert.equal(saved.mode, 'full');
    assert.equal(headlinesReadme(saved), false);
    assert.equal(headlinesReadme({ mode: 'full', argv: 'node bench/run.js --only 7,9 --no-install' }), false);
  });

  it('a full run of every question does; a quick pass does not', () => {
    assert.equal(headlinesReadme({ mode: 'full', argv: 'node bench/run.js' }), true);
    assert.equal(headlinesReadme({ mode: 'full', argv: 'node bench/run.js --no-install' }), true);
    assert.equal(headlinesReadme({ mode: 'quick', argv: 'node bench/run.js --quick' }), false);
  });
});
