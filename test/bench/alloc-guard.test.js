'use strict';

/**
 * Issue 11's allocation guard (bench/lib/targets.js, enforced by bench/run.js): it must fail when a
 * guarded row allocates more, and also when question 1 ran but a guarded row has no figure, or the
 * guard could never trip on a broken measurement.
 */

const assert = require('node:assert/strict');
const fs = require('node:fs');
const { allocationTargets, ALLOC_BASELINE, ALLOC_GUARDED } = require('../../bench/lib/targets');

const BASE = { node: 'v20.1.0', rows: { 'nines-main-one': 1000, 'nines-probe-one': 500, 'nines-worker-one': 450 } };

/** Question 1's result with the guarded rows allocating `perReq[id]` bytes per request (undefined: no figure) */
function q1 (perReq, extra = {}) {
  const rows = ALLOC_GUARDED.map((id) => ({ id, runs: [{ reqPerSec: 1, ...(perReq[id] === undefined ? {} : { allocPerReq: perReq[id] }) }] }));
  return [{ name: 'modbus-round-trip', placements: ['one', 'two'], sections: [{ rows }], ...extra }];
}

/** What run.js fails the run on */
const failing = (targets) => targets.filter((t) => t.guard && t.met === false).map((t) => t.text.split(',')[1].split(':')[0].trim());

describe('bench allocation guard', () => {
  it('passes rows at their baseline and fails one grown by more than 20 %', () => {
    const ok = allocationTargets(q1(BASE.rows), BASE, 'v20.9.0');
    assert.equal(ok.length, 3);
    assert.ok(ok.every((t) => t.guard && t.met === true));
    const grown = allocationTargets(q1({ ...BASE.rows, 'nines-worker-one': 450 * 1.25 }), BASE, 'v20.9.0');
    assert.deepEqual(failing(grown), ['nines-worker-one']);
  });

  it('fails a guarded row that question 1 did not measure: failed, skipped, or without an allocation figure', () => {
    const results = q1({ ...BASE.rows, 'nines-probe-one': undefined });
    results[0].sections[0].rows[0].skipped = 'failed: child exited 1';
    assert.deepEqual(failing(allocationTargets(results, BASE, 'v20.9.0')), ['nines-main-one', 'nines-probe-one']);
  });

  it('fails a row the baseline lacks, and every row when the baseline is missing', () => {
    const rows = { ...BASE.rows };
    delete rows['nines-main-one'];
    assert.deepEqual(failing(allocationTargets(q1(BASE.rows), { ...BASE, rows }, 'v20.9.0')), ['nines-main-one']);
    assert.deepEqual(failing(allocationTargets(q1(BASE.rows), null, 'v20.9.0')), ALLOC_GUARDED);
  });

  it('judges nothing where the figures are not comparable: question 1 not run, another Node major, no one-core placement', () => {
    const none = (targets) => targets.length === 3 && targets.every((t) => t.met === null && t.why);
    assert.ok(none(allocationTargets([], BASE, 'v20.9.0')));
    assert.ok(none(allocationTargets(q1(BASE.rows), BASE, 'v22.1.0')));
    assert.ok(none(allocationTargets(q1(BASE.rows, { placements: ['free'] }), BASE, 'v20.9.0')));
  });

  it('has a committed baseline with a figure for every guarded row', () => {
    const base = JSON.parse(fs.readFileSync(ALLOC_BASELINE, 'utf8'));
    assert.match(base.node, /^v\d+\./);
    for (const id of ALLOC_GUARDED) assert.ok(base.rows[id] > 0, `${id} missing from bench/alloc-baseline.json`);
  });
});
