'use strict';

const { isMainThread } = require('node:worker_threads');
const { setTimeout: sleep } = require('node:timers/promises');

/**
 * Waiting until an absolute deadline (bigint ns on the process.hrtime clock).
 *
 * libuv keeps loop time in whole milliseconds, so a timer may fire up to 1 ms early
 * (nodejs/node#26578); the scheduler must never send before the intended time, so after a timer
 * fires we look at the clock again. For the last stretch below one millisecond:
 * - in a worker thread with no request of this thread in flight, `Atomics.wait` blocks the thread
 *   with sub-millisecond precision (about 0.1-0.2 ms late, never early). Nothing else of this thread
 *   can be delayed by it, because nothing is in flight;
 * - in a worker thread with replies pending on other connections, `Atomics.wait` in slices of
 *   SLICE_NS, yielding to the event loop between slices: a pending reply's arrival is read at most
 *   one slice late, where a 1 ms timer would make this send up to 2 ms late;
 * - on the main thread (Node-RED's loop, or `inline` mode) a 1 ms timer: blocking it is not ours to
 *   do, and busy-spinning would burn a core on an edge PC.
 * The lateness that remains is measured and published as dispatch lag.
 */

const { setImmediate: yieldToLoop } = require('node:timers/promises');

const SAB = new Int32Array(new SharedArrayBuffer(4));
const NS_PER_MS = 1000000n;
/** longest a worker blocks while replies of its other connections are pending */
const SLICE_NS = 100000n;

/** Requests of this thread currently on the wire (kept by the scheduler). */
const inflight = { count: 0 };

/**
 * @param {bigint} deadlineNs absolute time on process.hrtime.bigint()
 * @param {{canBlock?: boolean}} [opts] canBlock defaults to "not the main thread"
 * @returns {Promise<void>|undefined} undefined when the deadline has already passed (no tick spent)
 */
function waitUntil (deadlineNs, { canBlock = !isMainThread } = {}) {
  const rem = deadlineNs - process.hrtime.bigint();
  if (rem <= 0n) return undefined;
  return waitLoop(deadlineNs, canBlock);
}

async function waitLoop (deadlineNs, canBlock) {
  for (;;) {
    const rem = deadlineNs - process.hrtime.bigint();
    if (rem <= 0n) return;
    if (rem >= 2n * NS_PER_MS) {
      // sleep until ~1 ms before the deadline, then finish precisely
      await sleep(Number(rem / NS_PER_MS) - 1);
    } else if (canBlock && inflight.count === 0) {
      Atomics.wait(SAB, 0, 0, Number(rem) / 1e6);
    } else if (canBlock) {
      Atomics.wait(SAB, 0, 0, Number(rem < SLICE_NS ? rem : SLICE_NS) / 1e6);
      await yieldToLoop();
    } else {
      await sleep(1);
    }
  }
}

module.exports = { waitUntil, inflight };
