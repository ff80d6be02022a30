'use strict';

/**
 * A thread's own event-loop delay, for each job's summary (`loopDelayP99`, ms), so a subscriber
 * can tell a slow device from a busy poller.
 *
 * Why not perf_hooks' monitorEventLoopDelay, which this replaces. Each job's summary read its
 * percentile and reset it: 30–57 µs on the job's thread per summary (a scan and a clear of the
 * native histogram, measured on Node 20), and with several jobs on a thread each reset cut the
 * others' intervals short, so a job's figure covered only the time since another job's summary.
 * Here the thread keeps one cumulative histogram (a timer every RESOLUTION_MS records how late it
 * fired) and each snapshot carries a copy of its pages (a few KB, µs); the pool's thread takes
 * the job's interval as the difference from the copy that came with that job's last summary.
 */

const { PagedHistogram } = require('../latency/paged-histogram');

/** How often the thread looks at its own clock (ms): monitorEventLoopDelay's default resolution */
const RESOLUTION_MS = 10;

class LoopDelay {
  constructor () {
    this.hist = new PagedHistogram({ wide: true });
    /** which thread's histogram a copy is of: a restarted worker's starts from zero */
    this.epoch = `${process.pid}-${process.hrtime.bigint()}`;
    let last = process.hrtime.bigint();
    const periodNs = BigInt(RESOLUTION_MS * 1e6);
    this.timer = setInterval(() => {
      const now = process.hrtime.bigint();
      const late = now - last - periodNs;
      last = now;
      this.hist.recordValue(late > 0n ? Number(late) : 0);
    }, RESOLUTION_MS);
    this.timer.unref();
  }

  /** @returns {{epoch: string, hist: import('../latency/paged-histogram').PagedTransfer}} */
  copy () {
    return { epoch: this.epoch, hist: this.hist.toTransfer() };
  }

  stop () {
    clearInterval(this.timer);
  }
}

/**
 * The p99 of a thread's loop delay between two copies of its cumulative histogram, in ms (0 when
 * no sample fell between them). A copy from another thread (a restart) than `before` counts whole.
 * @param {{epoch: string, hist: object}|undefined} before the copy with the job's last summary
 * @param {{epoch: string, hist: object}} now
 * @returns {number}
 */
function loopDelayP99Ms (before, now) {
  const h = PagedHistogram.fromTransfer({ ...now.hist, slots: now.hist.slots.slice(), pool: now.hist.pool.slice() });
  if (before !== undefined && before.epoch === now.epoch) {
    const b = PagedHistogram.fromTransfer(before.hist);
    b.forEachNonZero((index, count) => h.addToCountAtIndex(index, -count));
    h.setTotalCount(h.totalCount - b.totalCount);
  }
  return h.totalCount > 0 ? h.getValueAtPercentile(99) / 1e6 : 0;
}

module.exports = { LoopDelay, loopDelayP99Ms, RESOLUTION_MS };
