'use strict';

const { isMainThread } = require('node:worker_threads');
const { setTimeout: sleep } = require('node:timers/promises');

/**
 * Waiting until an absolute deadline (bigint ns on the process.hrtime clock).
 *
 * libuv keeps loop time in whole milliseconds, so a timer may fire up to 1 ms early
 * (nodejs/node#26578); the scheduler must never send before the intended time, so after a timer
 * fires we look at the clock again. For the last stretch below two milliseconds:
 * - on the main thread (Node-RED's loop, or `inline` mode): a 1 ms timer. Blocking that loop is not
 *   ours to do, and busy-spinning would burn a core on an edge PC;
 * - in a worker thread: one driver per thread serves every waiting connection of every job in that
 *   thread:
 *   - nothing of this thread in flight: `Atomics.wait` until the earliest deadline (sub-millisecond
 *     precision: about 0.1 ms late, never early). Nothing else of this thread can be delayed by it;
 *   - replies pending: never block (a blocked thread reads its replies late, which at thousands of
 *     requests per second caps the thread's throughput). Due deadlines are released each time a
 *     reply completes (`releaseDue`, called by the scheduler), which at high rates happens every few
 *     tens of microseconds, with a 1 ms timer as the fallback when replies are slow.
 * The lateness that remains is measured and published as dispatch lag.
 */

const SAB = new Int32Array(new SharedArrayBuffer(4));
const NS_PER_MS = 1000000n;
/** Below this, a deadline is waited for precisely (not with a timer) */
const PRECISE_NS = 2n * NS_PER_MS;
/** Atomics.wait wakes 40-90 us late whatever it is asked (timer slack), so a wait shorter than this
 * is spent turning the event loop instead: near a connection's capacity the gap left after a reply
 * is often a few tens of microseconds, and blocking through it cost a third of the throughput */
const SPIN_NS = 100000n;

/** Requests of this thread currently on the wire (kept by the scheduler). */
const inflight = { count: 0 };

/**
 * @param {bigint} deadlineNs absolute time on process.hrtime.bigint()
 * @param {{canBlock?: boolean}} [opts] canBlock defaults to "not the main thread"
 * @returns {Promise<void>|undefined} undefined when the deadline has already passed (no tick spent)
 */
function waitUntil (deadlineNs, { canBlock = !isMainThread } = {}) {
  if (deadlineNs - process.hrtime.bigint() <= 0n) return undefined;
  return canBlock ? driver.add(deadlineNs) : timerWait(deadlineNs);
}

/** Main-thread wait: timers only, re-checking the clock because timers fire early. */
async function timerWait (deadlineNs) {
  for (;;) {
    const rem = deadlineNs - process.hrtime.bigint();
    if (rem <= 0n) return;
    await sleep(rem >= PRECISE_NS ? Number(rem / NS_PER_MS) - 1 : 1);
  }
}

/** The per-thread deadline driver of worker threads. */
const driver = {
  /** @type {Array<{at: bigint, resolve: () => void}>} sorted by `at` */
  waiters: [],
  timer: null,
  timerAt: 0n,
  precise: false,

  add (at) {
    return new Promise((resolve) => {
      const w = this.waiters;
      let i = w.length;
      while (i > 0 && w[i - 1].at > at) i--;
      w.splice(i, 0, { at, resolve });
      this.schedule();
    });
  },

  /** resolves every waiter whose deadline has come; returns the time now */
  release () {
    const now = process.hrtime.bigint();
    const w = this.waiters;
    let n = 0;
    while (n < w.length && w[n].at <= now) w[n++].resolve();
    if (n) w.splice(0, n);
    return now;
  },

  schedule () {
    const now = this.release();
    if (this.waiters.length === 0 || this.precise) return;
    const rem = this.waiters[0].at - now;
    if (rem >= PRECISE_NS || inflight.count > 0) {
      // a timer: long waits, or short ones while replies (which also release deadlines) are pending
      const at = rem >= PRECISE_NS ? this.waiters[0].at - NS_PER_MS : now + NS_PER_MS;
      if (this.timer && this.timerAt <= at) return;
      if (this.timer) clearTimeout(this.timer);
      this.timerAt = at;
      this.timer = setTimeout(() => { this.timer = null; this.schedule(); }, rem >= PRECISE_NS ? Number(rem / NS_PER_MS) - 1 : 1);
      return;
    }
    if (this.timer) { clearTimeout(this.timer); this.timer = null; }
    this.precise = true;
    setImmediate(() => this.preciseTick());
  },

  preciseTick () {
    this.precise = false;
    const now = this.release();
    if (this.waiters.length === 0) return;
    const rem = this.waiters[0].at - now;
    if (rem >= SPIN_NS && rem < PRECISE_NS && inflight.count === 0) Atomics.wait(SAB, 0, 0, Number(rem) / 1e6);
    // schedule() releases what came due while blocked, then picks the next way to wait
    this.schedule();
  }
};

/**
 * Releases the deadlines that have come (worker threads). The scheduler calls it whenever a reply
 * completes, so busy threads serve deadlines without blocking or waiting for a timer.
 */
function releaseDue () {
  if (driver.waiters.length) driver.schedule();
}

module.exports = { waitUntil, inflight, releaseDue };
