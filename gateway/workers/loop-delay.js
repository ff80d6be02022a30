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
 * fired) and each snapshot carries a copy of its non-zero counts (µs); the pool's thread takes
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

/** For index → value only (the layout every PagedHistogram shares) */
const LAYOUT = new PagedHistogram();

/**
 * The p99 of a thread's loop delay between two copies of its cumulative histogram, in ms (0 when
 * no sample fell between them). A copy from another thread (a restart) than `before` counts whole.
 * Walks the two copies' (index, count) pairs side by side, as getValueAtPercentile walks counts:
 * no histogram is built for it.
 * @param {{epoch: string, hist: import('../latency/paged-histogram').PagedTransfer}|undefined} before
 *   the copy with the job's last summary
 * @param {{epoch: string, hist: import('../latency/paged-histogram').PagedTransfer}} now
 * @returns {number}
 */
function loopDelayP99Ms (before, now) {
  const b = before !== undefined && before.epoch === now.epoch ? before.hist : null;
  const total = now.hist.totalCount - (b === null ? 0 : b.totalCount);
  if (total <= 0) return 0;
  const rank = Math.max(1, Math.ceil(0.99 * total));
  const np = now.hist.pairs;
  const bp = b === null ? EMPTY : b.pairs;
  let seen = 0;
  for (let i = 0, j = 0; i < np.length; i += 2) {
    const index = np[i];
    // the earlier copy's indexes are a subset of the later's (a cumulative histogram only grows)
    while (j < bp.length && bp[j] < index) j += 2;
    seen += np[i + 1] - (j < bp.length && bp[j] === index ? bp[j + 1] : 0);
    if (seen >= rank) return LAYOUT.highestEquivalentValue(LAYOUT.valueFromIndex(index)) / 1e6;
  }
  return 0;
}

const EMPTY = new Float64Array(0);

module.exports = { LoopDelay, loopDelayP99Ms, RESOLUTION_MS };
