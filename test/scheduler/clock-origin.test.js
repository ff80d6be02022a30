'use strict';

// The scheduler clock's origin (scheduler/clock.js ORIGIN_NS), read in a fresh process: its own
// file, since it starts one (the unit set, test/unit.mocharc.js, holds none that do).

const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const { ORIGIN_NS } = require('../../gateway/scheduler/clock');

describe('the scheduler clock\'s origin', () => {
  it('starts past V8\'s small integers, so no time on its scale changes representation while a thread runs', () => {
    // a fresh process, the module just loaded: counted from 0 it would read a few ms here, and
    // cross 2^31 (where V8's compiled code for small integers is thrown away) 2.15 s later
    const clock = require.resolve('../../gateway/scheduler/clock');
    const first = Number(execFileSync(process.execPath, ['-e', `process.stdout.write(String(require(${JSON.stringify(clock)}).nowNs()))`], { encoding: 'utf8' }));
    assert.ok(first >= ORIGIN_NS && ORIGIN_NS > 2 ** 31 - 1, `the first reading ${first}`);
    assert.ok(first < ORIGIN_NS + 60e9, 'and it counts from the origin as the module loads');
  });
});
