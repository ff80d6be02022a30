'use strict';

const fs = require('node:fs');
const { isMainThread } = require('node:worker_threads');

/**
 * Threads whose sleeps end when they were asked to (Linux).
 *
 * Why. Linux lets every timed sleep of a thread end up to its "timer slack" late, so that wake-ups
 * can be coalesced: 50 us by default. Every precise wait of nines sleeps that way: a worker's
 * Atomics.wait (the `sleep` precision, and the sleep before a `spin` window) and the alarm thread
 * (alarm.js). Measured on the 2-core VM (Node 20, a worker's Atomics.wait of 30 us to 1.5 ms, 400
 * each): 86-110 us late at p50 with the default slack, 20-67 us with 1 us of slack, as root and as
 * an unprivileged user alike.
 *
 * How. A thread starts with the slack of the thread that created it (prctl(2), PR_SET_TIMERSLACK),
 * and a process may set its main thread's own slack through /proc/self/timerslack_ns without any
 * privilege (proc(5)). So the main thread lowers its slack, creates the worker, and puts its own
 * back at once: the worker, and the alarm thread it starts later, keep the low slack, and the
 * host's main thread (Node-RED's event loop, for poll nodes) is left as it was. Elsewhere (another
 * OS, a /proc that cannot be written, a caller off the main thread, where /proc/self names the
 * main thread, not the caller) the worker is created with the slack it would have had.
 */

/** The slack given to precise threads, ns (0 would mean "the default" to the kernel) */
const PRECISE_SLACK_NS = 1000;
const FILE = '/proc/self/timerslack_ns';

/** What the last call did, for tests and diagnostics: whether the slack was lowered, and if not, why */
const slackState = { applied: false, ns: null, reason: 'not tried yet' };

/**
 * Runs `create` (which creates a thread) with the main thread's timer slack lowered to
 * PRECISE_SLACK_NS, then restores it.
 * @template T
 * @param {() => T} create creates the thread, synchronously (new Worker does)
 * @param {string} [file] the slack file (tests)
 * @returns {T} what create returned
 */
function withPreciseSlack (create, file = FILE) {
  if (!isMainThread) {
    note(false, null, 'not on the main thread');
    return create();
  }
  let before;
  try {
    before = fs.readFileSync(file, 'utf8').trim();
    fs.writeFileSync(file, String(PRECISE_SLACK_NS));
  } catch (err) {
    note(false, null, `${file}: ${err.code || err.message}`);
    return create();
  }
  try {
    const made = create();
    note(true, PRECISE_SLACK_NS, null);
    return made;
  } finally {
    try { fs.writeFileSync(file, before); } catch { /* written a moment ago: nothing better to do */ }
  }
}

function note (applied, ns, reason) {
  slackState.applied = applied;
  slackState.ns = ns;
  slackState.reason = reason;
}

module.exports = { withPreciseSlack, slackState, PRECISE_SLACK_NS };
