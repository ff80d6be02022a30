'use strict';

/**
 * What a measured loop costs the garbage collector, two ways:
 * - the pauses (`startGcWatch`): every collection of this thread's heap as perf_hooks reports it
 *   ('gc' entries: kind and duration), cheap enough to run while latency is measured;
 * - the bytes allocated (`startAllocProfile`): V8's own GC profiler (`v8.GCProfiler`, Node ≥
 *   18.15), which reports the used heap size before and after each collection. Allocated bytes =
 *   what the used heap grew by between collections, summed: (used before GC i − used after
 *   GC i−1), plus the growth after the last one; exact for a heap that only grows between
 *   collections, which a JavaScript heap does (V8's sampling heap profiler, counting collected
 *   objects too, agreed within 0.1 % on the nines closed loop). The profiler gathers heap
 *   statistics at every collection, which lengthens each pause by tens of µs: the benches run it
 *   on a pass of its own, not while latency is measured.
 *
 * `--require` this file in a worker thread (WorkerPool's `execArgv`) to profile that thread: it then
 * answers on a BroadcastChannel (`nines-bench-gc`), so a bench's main thread can start and stop the
 * worker's profiles around its measured intervals without a message type in the gateway's protocol.
 */

const v8 = require('node:v8');
const { PerformanceObserver, constants } = require('node:perf_hooks');
const { isMainThread, BroadcastChannel, threadId } = require('node:worker_threads');

const CHANNEL = 'nines-bench-gc';

/**
 * @typedef {object} GcProfile
 * @property {number} [allocatedBytes] bytes allocated on the JavaScript heap (allocation profile)
 * @property {number} gcs collections
 * @property {number} scavenges young-generation collections
 * @property {number} markCompacts full (major) collections
 * @property {number} pauseP99Us 99th percentile of the pauses (nearest rank), µs
 * @property {number} pauseMaxUs the longest pause, µs
 * @property {number} pauseTotalUs all pauses together, µs
 */

/**
 * Starts watching this thread's collections (perf_hooks 'gc' entries). The returned stop() has a
 * mark(): collections before the last mark are left out, so a bench can set the watch up before its
 * measured part and mark where it starts, instead of paying for the observer there.
 * @returns {(() => GcProfile) & {mark: () => void}} stop
 */
function startGcWatch () {
  const seen = [];
  let from = 0;
  const take = (list) => { for (const e of list.getEntries()) seen.push(e); };
  const obs = new PerformanceObserver(take);
  obs.observe({ entryTypes: ['gc'] });
  const stop = () => {
    // entries are delivered later: take what is still queued
    for (const e of obs.takeRecords()) seen.push(e);
    obs.disconnect();
    const counted = seen.filter((e) => e.startTime >= from);
    seen.length = 0;
    seen.push(...counted);
    const pauses = seen.map((e) => e.duration * 1000);
    const kind = (e) => (e.detail ? e.detail.kind : e.kind);
    return {
      ...pauseFigures(pauses),
      scavenges: seen.filter((e) => kind(e) === constants.NODE_PERFORMANCE_GC_MINOR).length,
      markCompacts: seen.filter((e) => kind(e) === constants.NODE_PERFORMANCE_GC_MAJOR).length
    };
  };
  stop.mark = () => { from = performance.now(); };
  return stop;
}

/**
 * @param {number[]} pauses µs
 * @returns {{gcs: number, pauseP99Us: number, pauseMaxUs: number, pauseTotalUs: number}}
 */
function pauseFigures (pauses) {
  const sorted = [...pauses].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil(0.99 * sorted.length));
  return {
    gcs: sorted.length,
    pauseP99Us: sorted.length ? Math.round(sorted[rank - 1]) : 0,
    pauseMaxUs: sorted.length ? Math.round(sorted[sorted.length - 1]) : 0,
    pauseTotalUs: Math.round(sorted.reduce((a, b) => a + b, 0))
  };
}

/**
 * Starts counting the bytes this thread allocates (V8's GC profiler, see the file header).
 * @returns {(() => GcProfile)|null} stop, which returns the profile; null where V8's profiler is missing
 */
function startAllocProfile () {
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
  return { allocatedBytes: Math.max(0, allocated), scavenges, markCompacts, ...pauseFigures(pauses) };
}

/**
 * The per-request figures of a run, as a row's run fields.
 * @param {GcProfile|null} watch the pauses over the measured run
 * @param {number} requests of the measured run
 * @param {GcProfile|null} [alloc] an allocation profile
 * @param {number} [allocRequests] requests of the allocation pass
 * @returns {object} gcs, scavenges, markCompacts, gcPauseP99Ns, gcPauseMaxNs, allocPerReq (bytes): those measured
 */
function perRequest (watch, requests, alloc, allocRequests) {
  const out = {};
  if (watch && requests) {
    Object.assign(out, { gcs: watch.gcs, scavenges: watch.scavenges, markCompacts: watch.markCompacts, gcPauseP99Ns: watch.pauseP99Us * 1000, gcPauseMaxNs: watch.pauseMaxUs * 1000 });
  }
  if (alloc && allocRequests) out.allocPerReq = Math.round(alloc.allocatedBytes / allocRequests);
  return out;
}

/**
 * Asks the profiled worker threads of this process (see the file header) to start, mark (a watch:
 * count from here) or stop.
 * @param {'start'|'mark'|'stop'} what
 * @param {'watch'|'alloc'} profile which profile
 * @param {number} [timeoutMs=5000]
 * @returns {Promise<GcProfile[]>} stop: one profile per profiled thread that answered; start: []
 */
function askWorkers (what, profile, timeoutMs = 5000) {
  const ch = new BroadcastChannel(CHANNEL);
  return new Promise((resolve) => {
    const got = [];
    const finish = () => { clearTimeout(timer); ch.close(); resolve(got); };
    // profiled threads answer at once; wait a little for all of them, then give up
    const timer = setTimeout(finish, what === 'stop' ? timeoutMs : 50);
    ch.onmessage = (e) => {
      if (e.data && e.data.type === 'profile') {
        got.push(e.data.profile);
        if (what === 'stop') { clearTimeout(timer); setTimeout(finish, 50); }
      }
    };
    ch.postMessage({ type: what, profile });
  });
}

// Loaded with --require in a worker thread: profile on request
if (!isMainThread) {
  const ch = new BroadcastChannel(CHANNEL);
  ch.unref();
  const running = {};
  ch.onmessage = (e) => {
    const m = e.data || {};
    if (m.type === 'start') running[m.profile] = m.profile === 'alloc' ? startAllocProfile() : startGcWatch();
    else if (m.type === 'mark' && running[m.profile] && running[m.profile].mark) running[m.profile].mark();
    else if (m.type === 'stop' && running[m.profile]) {
      const profile = running[m.profile]();
      running[m.profile] = null;
      ch.postMessage({ type: 'profile', threadId, profile });
    }
  };
}

module.exports = { startGcWatch, startAllocProfile, perRequest, askWorkers, summarize, CHANNEL };
