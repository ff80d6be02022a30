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
 *
 * The young generation of the threads made after this (the worker threads, where the jobs run)
 * starts at YOUNG_SEMI_SPACE_MB a half instead of 1 MB and growing only as survivors ask. With
 * 1,000 devices at 10 Hz in one worker, objects that live a few hundred ms (a request's state
 * while its device answers, its socket's buffers) survived the small space's frequent scavenges,
 * were promoted, and brought a full mark-compact of the worker every 2-3 s (3.5-14 ms each, 4-6
 * per 15 s run); from the start at 16 MB, 0-2 per run. Interleaved runs (bench question 7's child,
 * 1 worker, 2026-11-26): dispatch-lag p99 1.9-3.6 ms -> 0.7-1.2 ms (8 MB: 0.55, 32 MB: 1.2; one
 * round each), response p99 8.9-22 ms -> 2.4-5.4 ms, GC pauses 94-100 -> 56-80 ms per 15 s, RSS
 * 190-201 -> 211-219 MB. 16 MB is V8's own ceiling for it on 64-bit machines. The flag is read
 * when a thread's heap is made, so it holds for threads made later; the main thread keeps its own.
 */
const YOUNG_SEMI_SPACE_MB = 16;

/**
 * The old generation of those threads may grow to INITIAL_OLD_SPACE_MB before V8 first marks it.
 * With V8's own start (a few MB), a sweep's worker thread met its first full mark-compact 5-6 s
 * in, 11-12 MB of old space down to 6.3 MB, 10.4 ms of pause on one core: inside the second
 * step, which then read p99.9 13.6 ms and max 15.1 ms at 500/s (the C server beside it on one
 * core; --trace-gc). Given 64 MB, the same sweep (about 20 s) met none, and that step read p99.9
 * 3.0 ms and max 3.1 ms. Nothing is held longer: what is live stays live, and a thread whose old
 * generation does reach it is collected as before, from there on with V8's own growing limits.
 */
const INITIAL_OLD_SPACE_MB = 64;

/**
 * A measuring process (`nines probe`, and the bench's child that stands for it)
 * lets V8 compile a hot function after a quarter of the bytecode it otherwise waits for (V8's
 * --interrupt-budget, 67,584 in Node 20). The warm-up exists to get the request path compiled
 * before measuring, but with V8's own budget parts of it were still compiled inside the measured
 * run, each a few ms of a helper thread that, on one core, takes the CPU from the requests
 * (--trace-opt, one core beside the C server, 3 s runs after the bench's warm-up of 10,000):
 * setImmediate and settled at 1,000/s; the spin's functions and processImmediate at 5,000/s (5-12
 * ms each); 15-18 of the scheduler's and the driver's at 35,500/s (44-62 ms). With a quarter:
 * none at 1,000/s and 5,000/s (2 runs each); at 35,500/s still the spin's, first used after the warm-up
 * there. Interleaved, 3 rounds (2026-11-26): requests over 150 us at 5,000/s 86, 49, 67 -> 18, 58, 36;
 * at 35,500/s 409, 21159, 1085 -> 328, 2547, 1005 (the C client's own: 6050, 21, 1037 in a noisy hour).
 * A gateway (`nines run`) keeps V8's own: it runs for days, and its first seconds are not measured.
 * So does `nines sweep` (cli/sweep.js says why: its later steps run paths its warm-up did not).
 */
const MEASURE_INTERRUPT_BUDGET = 16384;

/** V8 12 and later (Node 22, 24) count a function's calls instead: the same quarter of theirs (3,000 for TurboFan, 400 for Maglev) */
const MEASURE_CALLS_FOR_TURBOFAN = 750;
const MEASURE_CALLS_FOR_MAGLEV = 100;

/** Sets the measuring process's V8 settings, before its measuring threads are made. */
function setMeasuringFlags () {
  if (Number(process.versions.v8.split('.')[0]) >= 12) {
    v8.setFlagsFromString(`--invocation-count-for-turbofan=${MEASURE_CALLS_FOR_TURBOFAN}`);
    v8.setFlagsFromString(`--invocation-count-for-maglev=${MEASURE_CALLS_FOR_MAGLEV}`);
  } else {
    v8.setFlagsFromString(`--interrupt-budget=${MEASURE_INTERRUPT_BUDGET}`);
  }
}

function setProcessFlags () {
  v8.setFlagsFromString('--no-memory-reducer-for-small-heaps');
  v8.setFlagsFromString(`--min-semi-space-size=${YOUNG_SEMI_SPACE_MB}`);
  v8.setFlagsFromString(`--initial-old-space-size=${INITIAL_OLD_SPACE_MB}`);
}

module.exports = { setProcessFlags, setMeasuringFlags, YOUNG_SEMI_SPACE_MB, INITIAL_OLD_SPACE_MB };
