'use strict';

// A measuring process (nines probe, nines sweep) asks V8 to compile a hot function sooner
// (base/v8-flags.js setMeasuringFlags), so the warm-up compiles the request path, not the measured
// run. Checked as V8 reports it: in a child process, the calls a small function takes before V8's
// optimizing compiler (TurboFan) has compiled it, with and without the setting. The child runs
// with --no-concurrent-recompilation, so the compile happens at the call that asks for it and the
// count is V8's own, not a race with its helper threads.

const assert = require('node:assert/strict');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const FLAGS = path.join(__dirname, '..', '..', 'gateway', 'base', 'v8-flags.js');

/** The number of calls before f is TurboFan code (V8's optimization status bit 64), in a fresh process. */
function callsToOptimize (measuring) {
  const src = `
    if (${measuring}) require(${JSON.stringify(FLAGS)}).setMeasuringFlags();
    function f (o) { return o.a * 3 + (o.b & 1) + (o.c > 2 ? o.a : o.b); }
    const o = { a: 1, b: 2, c: 3 };
    let n = 0;
    for (; n < 200000; n++) { f(o); if (%GetOptimizationStatus(f) & 64) break; }
    process.stdout.write(String(n));`;
  return Number(execFileSync(process.execPath, ['--allow-natives-syntax', '--no-concurrent-recompilation', '-e', src], { encoding: 'utf8' }));
}

describe('a measuring process: V8 compiles hot code sooner', function () {
  this.timeout(30000);

  it('setMeasuringFlags() has a function compiled after at most 60 % of the calls V8 waits for by itself', () => {
    const own = callsToOptimize(false);
    const measuring = callsToOptimize(true);
    assert.ok(own < 200000, `V8 compiled the function by itself (after ${own} calls)`);
    // Node 20: 1,658 -> 558 calls; 22: 3,010 -> 760; 24: 10,738 -> 1,278
    assert.ok(measuring <= own * 0.6, `${measuring} calls with the setting against ${own} without`);
  });
});
