'use strict';

/**
 * What a measured loop costs the garbage collector: the bytes it allocated and the pauses it caused,
 * from V8's own GC profiler (`v8.GCProfiler`, Node ≥ 18.15), which reports every collection of this
 * thread's heap with the used heap size before and after it and its cost (the pause, µs).
 *
 * Allocated bytes = what the used heap grew by between collections, summed: (used before GC i −
 * used after GC i−1) over the collections, plus the growth after the last one. Exact for a heap
 * that only grows between collections, which a JavaScript heap does (sampling-profiler totals
 * agreed within 0.1 % on the nines closed loop).
 *
 * `--require` this file in a worker thread (WorkerPool's `execArgv`) to profile that thread: it then
 * answers on a BroadcastChannel (`nines-bench-gc`), so a bench's main thread can start and stop the
 * worker's profile around its measured interval without a message type in the gateway's protocol.
 */

const v8 = require('node:v8');
const { isMainThread, BroadcastChannel, threadId } = require('node:worker_threads');

const CHANNEL = 'nines-bench-gc';

/**
 * @typedef {object} GcProfile
 * @property {number} allocatedBytes bytes allocated on the JavaScript heap over the profile
 * @property {number} gcs collections
 * @property {number} scavenges young-generation collections (Scavenge, MinorMarkCompact)
 * @property {number} markCompacts full collections (MarkSweepCompact), incremental marking steps aside
 * @property {number} pauseP99Us 99th percentile of the pauses (nearest rank), µs
 * @property {number} pauseMaxUs the longest pause, µs
 * @property {number} pauseTotalUs all pauses together, µs
 */

/**
 * Starts profiling this thread's collections.
 * @returns {(() => GcProfile)|null} stop, which returns the profile; null where V8's profiler is missing
 */
function startGcProfile () {
  if (typeof v8.GCProfiler !== 'function') return null;
  const profiler = new v8.GCProfiler();
  const used0 = v8.getHeapStatistics().used_heap_size;
  profiler.start();
  return () => {
    const r = profiler.stop();
    const used1 = v8.getHeapStatistics().used_heap_size;
    return summarize(r ? r.statistics : [], used0, used1);
  };
}

/**
 * @param {Array<{gcType: string, cost: number, beforeGC: object, afterGC: object}>} stats
 * @param {number} used0 used heap at the start
 * @param {number} used1 used heap at the end
 * @returns {GcProfile}
 */
function summarize (stats, used0, used1) {
  let prev = used0;
  let allocated = 0;
  let scavenges = 0;
  let markCompacts = 0;
  const pauses = [];
  for (const s of stats) {
    allocated += s.beforeGC.heapStatistics.usedHeapSize - prev;
    prev = s.afterGC.heapStatistics.usedHeapSize;
    pauses.push(s.cost);
    if (s.gcType === 'Scavenge' || s.gcType === 'MinorMarkCompact') scavenges++;
    else if (s.gcType === 'MarkSweepCompact') markCompacts++;
  }
  allocated += used1 - prev;
  pauses.sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil(0.99 * pauses.length));
  return {
    allocatedBytes: Math.max(0, allocated),
    gcs: pauses.length,
    scavenges,
    markCompacts,
    pauseP99Us: pauses.length ? Math.round(pauses[rank - 1]) : 0,
    pauseMaxUs: pauses.length ? Math.round(pauses[pauses.length - 1]) : 0,
    pauseTotalUs: Math.round(pauses.reduce((a, b) => a + b, 0))
  };
}

/**
 * The per-request figures of a profile over `requests` requests, as a row's run fields.
 * @param {GcProfile|null} p
 * @param {number} requests
 * @returns {object} allocPerReq (bytes), gcs, scavenges, markCompacts, gcPauseP99Ns, gcPauseMaxNs; {} without a profile
 */
function perRequest (p, requests) {
  if (!p || !requests) return {};
  return {
    allocPerReq: Math.round(p.allocatedBytes / requests),
    gcs: p.gcs,
    scavenges: p.scavenges,
    markCompacts: p.markCompacts,
    gcPauseP99Ns: p.pauseP99Us * 1000,
    gcPauseMaxNs: p.pauseMaxUs * 1000
  };
}

/**
 * Asks the profiled worker threads of this process (see the file header) to start or stop.
 * @param {'start'|'stop'} what
 * @param {number} [timeoutMs=5000]
 * @returns {Promise<GcProfile[]>} stop: one profile per profiled thread that answered; start: []
 */
function askWorkers (what, timeoutMs = 5000) {
  const ch = new BroadcastChannel(CHANNEL);
  return new Promise((resolve) => {
    const got = [];
    const finish = () => { clearTimeout(timer); ch.close(); resolve(got); };
    // profiled threads answer at once; wait a little for all of them, then give up
    const timer = setTimeout(finish, what === 'start' ? 50 : timeoutMs);
    ch.onmessage = (e) => {
      if (e.data && e.data.type === 'profile') {
        got.push(e.data.profile);
        if (what === 'stop') { clearTimeout(timer); setTimeout(finish, 50); }
      }
    };
    ch.postMessage({ type: what });
  });
}

// Loaded with --require in a worker thread: profile on request
if (!isMainThread) {
  const ch = new BroadcastChannel(CHANNEL);
  ch.unref();
  let stop = null;
  ch.onmessage = (e) => {
    const m = e.data || {};
    if (m.type === 'start') stop = startGcProfile();
    else if (m.type === 'stop' && stop !== null) {
      const profile = stop();
      stop = null;
      ch.postMessage({ type: 'profile', threadId, profile });
    }
  };
}

module.exports = { startGcProfile, perRequest, askWorkers, summarize, CHANNEL };
