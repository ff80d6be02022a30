'use strict';

/**
 * The closed loop every Node client row uses: one request at a time, the next sent as soon as the
 * previous one settles, each timed from just before the call to when its promise settles (the
 * promise's callback runs) — the same way for nines and for the peers, so no client gets credit for
 * timing itself. Failures are samples too (latency-method.md rule 5) and count as errors.
 * A warm-up, when asked, runs the measured loop itself first (closedLoop).
 */

const { createHist, record, stats } = require('./hist');

const now = process.hrtime.bigint;
/** The warm-up is this many runs of the measured loop */
const WARMUP_RUNS = 3;

/**
 * @param {() => Promise<any>} fn one request
 * @param {{count: number, durationMs: number, warmup?: number}} opts bounded by count and by time
 * @returns {Promise<{hist: object, count: number, errors: number, elapsedNs: number, reqPerSec: number, firstError?: string}>}
 */
async function closedLoop (fn, { count, durationMs, warmup = 0 }) {
  const loop = closedLoopOf(fn);
  await warmUp(loop, warmup, durationMs);
  return loop.run(count, durationMs);
}

/**
 * The warm-up runs the very loop that is measured, in a few runs: code first run while measuring
 * is compiled there, and on one core V8's background compiles stall the loop for milliseconds
 * (issue 11). The end of a run is such code too (the first run's end deoptimizes the loop, the
 * next runs compile it again with it), hence more than one.
 * @param {{run: (count: number, durationMs: number) => Promise<object>}} loop closedLoopOf's
 * @param {number} warmup requests in all (none when 0)
 * @param {number} durationMs the measured run's bound (each warm-up run may take up to a minute more)
 */
async function warmUp (loop, warmup, durationMs) {
  for (let i = 0; i < WARMUP_RUNS && warmup > 0; i++) await loop.run(Math.ceil(warmup / WARMUP_RUNS), Math.max(durationMs, 60000));
}

/**
 * A closed loop over fn that can run several times, each run with fresh figures: the same few
 * small functions, chained by the promise's callbacks, serve every run. Not an async function: V8
 * compiles a running async function's loop only for its next call, so a long-lived one stays on
 * its first tier or is compiled midway, at a random request.
 * @param {() => Promise<any>} fn one request
 * @returns {{run: (count: number, durationMs: number) => Promise<object>}} run: closedLoop's result
 */
function closedLoopOf (fn) {
  let hist = null;
  let errors = 0;
  let firstError;
  let n = 0;
  let count = 0;
  let start = 0n;
  let stop = 0n;
  let t0 = 0n;
  let done = null;
  const finish = () => {
    const elapsedNs = Number(now() - start);
    const resolve = done;
    done = null;
    resolve({ hist, count: n, errors, elapsedNs, reqPerSec: n / (elapsedNs / 1e9), firstError });
  };
  const next = () => {
    t0 = now();
    if (n >= count || t0 >= stop) { finish(); return; }
    let p;
    try {
      p = fn();
    } catch (err) {
      p = Promise.reject(err);
    }
    p.then(settled, failed);
  };
  const settled = () => {
    record(hist, now() - t0);
    n++;
    next();
  };
  const failed = (err) => {
    errors++;
    if (firstError === undefined) firstError = `${err.code || ''} ${err.message}`.trim();
    settled();
  };
  return {
    run (runCount, durationMs) {
      return new Promise((resolve) => {
        done = resolve;
        hist = createHist();
        errors = 0;
        firstError = undefined;
        n = 0;
        count = runCount;
        start = now();
        stop = start + BigInt(durationMs) * 1000000n;
        next();
      });
    }
  };
}

/**
 * A result as a row's run: throughput, errors and the latency figures (ns).
 * @param {{hist: object, count: number, errors: number, reqPerSec: number}} r
 * @returns {object}
 */
function toRun (r) {
  return { reqPerSec: Math.round(r.reqPerSec), errors: r.errors, ...stats(r.hist), count: r.count };
}

module.exports = { closedLoop, closedLoopOf, warmUp, toRun };
