'use strict';

/**
 * The closed loop every Node client row uses: one request at a time, the next sent as soon as the
 * previous one settles, each timed from just before the call to just after its promise settles —
 * the same way for nines and for the peers, so no client gets credit for timing itself. Failures are
 * samples too (latency-method.md rule 5) and count as errors.
 */

const { createHist, record, stats } = require('./hist');

const now = process.hrtime.bigint;

/**
 * @param {() => Promise<any>} fn one request
 * @param {{count: number, durationMs: number, warmup?: number}} opts bounded by count and by time
 * @returns {Promise<{hist: object, count: number, errors: number, elapsedNs: number, reqPerSec: number, firstError?: string}>}
 */
async function closedLoop (fn, { count, durationMs, warmup = 0 }) {
  // The warm-up runs the very loop that is measured (into a histogram thrown away): code first run
  // in the measured loop would be compiled there, and on one core a background compile stalls the
  // loop for milliseconds (issue 11)
  if (warmup > 0) await loop(fn, warmup, Math.max(durationMs, 60000));
  return loop(fn, count, durationMs);
}

/** The closed loop itself: count requests or durationMs, whichever ends first. */
async function loop (fn, count, durationMs) {
  const hist = createHist();
  let errors = 0;
  let firstError;
  let n = 0;
  const start = now();
  const stop = start + BigInt(durationMs) * 1000000n;
  while (n < count) {
    const t0 = now();
    if (t0 >= stop) break;
    try {
      await fn();
    } catch (err) {
      errors++;
      if (firstError === undefined) firstError = `${err.code || ''} ${err.message}`.trim();
    }
    record(hist, now() - t0);
    n++;
  }
  const elapsedNs = Number(now() - start);
  return { hist, count: n, errors, elapsedNs, reqPerSec: n / (elapsedNs / 1e9), firstError };
}

/**
 * A result as a row's run: throughput, errors and the latency figures (ns).
 * @param {{hist: object, count: number, errors: number, reqPerSec: number}} r
 * @returns {object}
 */
function toRun (r) {
  return { reqPerSec: Math.round(r.reqPerSec), errors: r.errors, ...stats(r.hist), count: r.count };
}

module.exports = { closedLoop, toRun };
