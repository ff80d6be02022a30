'use strict';

const v8 = require('node:v8');

/**
 * The V8 settings of a nines process (the `nines` command, and the bench's children that stand for
 * it), set before anything else is loaded.
 *
 * V8's memory reducer for small heaps arms itself once a thread's old generation has grown 1 MB
 * past start-up (module loading does that), and 8 s later runs full mark-compacts while the thread
 * looks idle, to give back a few MB. The main thread of `nines probe` is idle by design (the probe
 * runs in a worker thread), and on one core those collections (4.3-4.6 ms each, two of them) took
 * the core from the probe's thread: at 1,000/s, with the C server on the same core, p99.9
 * 3.6-4.9 ms and max 5.6-6.4 ms, against 1.2-2.2 ms and 2.4-3.5 ms in runs that ended before the
 * 8 s (bench question 15's child, 2026-11-26, --trace-gc). Only that start-up reducer is off: the
 * collector is otherwise V8's own, and a long-running gateway's heap is still collected as it
 * grows. The flag is read each time the old generation grows, so setting it at run time holds.
 */
function setProcessFlags () {
  v8.setFlagsFromString('--no-memory-reducer-for-small-heaps');
}

module.exports = { setProcessFlags };
