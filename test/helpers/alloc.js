'use strict';

const { startAllocProfile } = require('../../bench/lib/gc-profile');

/**
 * Bytes allocated per cycle of `f` (V8's GC profiler, bench/lib/gc-profile.js), over a second pass
 * after a first that gets it compiled.
 * @param {(n: number) => void} f runs n cycles
 * @param {number} n
 * @returns {number}
 */
function allocatedPerCycle (f, n) {
  f(n);
  const stop = startAllocProfile();
  f(n);
  return stop().allocatedBytes / n;
}

module.exports = { allocatedPerCycle };
