'use strict';

const assert = require('node:assert/strict');
const { phaseOf } = require('../../gateway/jobs/job');

describe('a job\'s phase', () => {
  it('is the same for the same name, in [0, 1)', () => {
    for (const name of ['a', 'meter1', 'poll-3f2a.9', 'x'.repeat(64)]) {
      const p = phaseOf(name);
      assert.equal(p, phaseOf(name));
      assert.ok(p >= 0 && p < 1, `${name}: ${p}`);
    }
  });

  it('spreads names that differ only in their last character over the period, so the polls of a line do not collide', () => {
    // FNV-1a alone put meter1 … meter9 within 3 % of one period: all ten polls of a line went at once
    for (const base of ['u', 'm', 'meter', 'job-', 'poll-']) {
      const phases = Array.from({ length: 10 }, (_, i) => phaseOf(`${base}${i + 1}`));
      const spread = Math.max(...phases) - Math.min(...phases);
      assert.ok(spread > 0.5, `${base}1 … ${base}10 span ${spread.toFixed(3)} of the period`);
      const tenths = new Set(phases.map((p) => Math.floor(p * 10)));
      assert.ok(tenths.size >= 5, `${base}1 … ${base}10 fall in ${tenths.size} tenths of the period`);
    }
  });
});
