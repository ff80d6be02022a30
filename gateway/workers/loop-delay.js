'use strict';

/**
 * A thread's own event-loop delay, for each job's summary (`loopDelayP99`, ms), so a subscriber
 * can tell a slow device from a busy poller.
 *
 * Why not perf_hooks' monitorEventLoopDelay, which this replaces. Each job's summary read its
 * percentile and reset it: 30-57 µs on the job's thread per summary (a scan and a clear of the
 * native histogram, measured on Node 20), and with several jobs on a thread each reset cut the
 * others' intervals short, so a job's figure covered only the time since another job's summary.
 *
 * Here a timer every RESOLUTION_MS writes how late it fired (µs) into a ring of samples, and each
 * job's snapshot carries the samples since its last one: one native copy of 400 bytes per second
 * of interval. The pool's thread takes their p99, exactly (no histogram's rounding). A cumulative
 * histogram sent whole with every summary was tried first: its copies grew with the thread's age,
 * and at 1,000 jobs they were most of what the worker allocated.
 */

/** How often the thread looks at its own clock (ms): monitorEventLoopDelay's default resolution */
const RESOLUTION_MS = 10;
/** Samples kept: 15 minutes. A job whose interval is longer gets the p99 of its last 15 minutes */
const RING = 15 * 60 * 1000 / RESOLUTION_MS;

class LoopDelay {
  constructor () {
    this.ring = new Float32Array(RING);
    /** samples written since the start (the next one goes to written % RING) */
    this.written = 0;
    /** job → `written` at its last copy */
    this.seen = new Map();
    let last = process.hrtime.bigint();
    const periodNs = BigInt(RESOLUTION_MS * 1e6);
    this.timer = setInterval(() => {
      const now = process.hrtime.bigint();
      const late = now - last - periodNs;
      last = now;
      this.ring[this.written % RING] = late > 0n ? Number(late) / 1000 : 0;
      this.written++;
    }, RESOLUTION_MS);
    this.timer.unref();
  }

  /** @param {string} job a job starting: its first copy covers from now */
  begin (job) {
    this.seen.set(job, this.written);
  }

  /**
   * The samples since this job's last copy (since begin(), for its first), at most the last RING
   * of them.
   * @param {string} job
   * @returns {Float32Array} µs
   */
  since (job) {
    const from = Math.max(this.seen.has(job) ? this.seen.get(job) : 0, this.written - RING);
    const to = this.written;
    this.seen.set(job, to);
    const a = from % RING;
    const b = to % RING;
    if (to - from === 0) return new Float32Array(0);
    if (a < b) return this.ring.slice(a, b);
    const out = new Float32Array(to - from);
    out.set(this.ring.subarray(a));
    out.set(this.ring.subarray(0, b), RING - a);
    return out;
  }

  /** @param {string} job a job gone: its position is forgotten */
  forget (job) {
    this.seen.delete(job);
  }

  stop () {
    clearInterval(this.timer);
  }
}

/**
 * The p99 of loop-delay samples, in ms (0 without samples). Sorts them in place.
 * @param {Float32Array} samples µs
 * @returns {number}
 */
function loopDelayP99Ms (samples) {
  if (samples.length === 0) return 0;
  samples.sort();
  return samples[Math.max(1, Math.ceil(0.99 * samples.length)) - 1] / 1000;
}

module.exports = { LoopDelay, loopDelayP99Ms, RESOLUTION_MS, RING };
