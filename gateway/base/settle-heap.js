'use strict';

const v8 = require('node:v8');
const vm = require('node:vm');
const { isMainThread } = require('node:worker_threads');

/**
 * Promotes what a measuring thread's start-up left in its young generation, before measuring.
 *
 * Why. A worker thread starts with a 16 MB young generation (v8-flags.js), and its start-up (the
 * modules it loads, their compiled code, the connection, the warm-up's objects) survives there: 8.5-8.7
 * MB. The thread's first scavenge copies it (5.4-5.8 ms) and the second promotes it (4.1-4.2 ms),
 * where later scavenges take 0.35-0.55 ms (--trace-gc, a fixed-rate probe at 10,000/s, one core).
 * Those two fall wherever the thread's allocation takes it: when the probe allocated less (a clock
 * reading that allocates nothing, scheduler/clock.js), the second came 0.7 s into the measured run,
 * and on one core, beside the C server, p99.9 read 1.55-2.10 ms in 9 runs of 9, against 0.30-0.85
 * ms in 5 of 6 runs before, whose second scavenge had come during the warm-up.
 *
 * How. Between the warm-up's closed loop and the paced requests, when nothing of the thread is in
 * flight and nothing is late for it, two young-generation collections, asked for directly: V8's
 * `gc` function, taken from a context made while --expose-gc is set (the flag is put back at
 * once; no global `gc` appears anywhere). Main threads are left alone: their event loop may be
 * Node-RED's.
 */

let collect = null;

/** @returns {(opts: {type: 'minor'}) => void} V8's gc function */
function gcFunction () {
  if (collect === null) {
    v8.setFlagsFromString('--expose-gc');
    try {
      collect = vm.runInNewContext('gc');
    } finally {
      v8.setFlagsFromString('--no-expose-gc');
    }
  }
  return collect;
}

/**
 * Collects this worker thread's young generation twice (a survivor is promoted at its second), so
 * what start-up left there is in the old generation before a measured run. A no-op on a main thread.
 * @returns {boolean} whether it collected
 */
function settleYoungGeneration () {
  if (isMainThread) return false;
  const gc = gcFunction();
  gc({ type: 'minor' });
  gc({ type: 'minor' });
  return true;
}

module.exports = { settleYoungGeneration };
