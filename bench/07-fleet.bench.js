'use strict';

/**
 * Question 7: what does a fleet cost one gateway? 10, 100 and 1,000 simulated devices (one
 * connection each to the reference server, which stands in for the devices) polled at 10–100 Hz by
 * one gateway process (WorkerPool, default worker count): CPU %, RSS, bytes per job and dispatch-lag
 * p99 over the measured interval. Rates are chosen so the total stays within what 2 cores serve.
 * Second table: the curve over worker counts for the 1,000-device fleet at 10 Hz (issue 8: "if more
 * workers are the answer, show the curve"): 1 and 2 worker threads, and 3 in full mode; the count
 * that is the default on this machine shares the first table's runs.
 */

const os = require('node:os');
const path = require('node:path');
const { options, Row, interleave, run } = require('./lib/question');
const { startReferenceModbusServer } = require('./lib/servers');
const { runJson } = require('./lib/procs');

const FLEETS = [
  { devices: 10, hz: [100] },
  { devices: 100, hz: [10, 20, 30, 40, 50, 60, 70, 80, 90, 100] },
  { devices: 1000, hz: [10] }
];
/** the fleet of the worker-count curve (the last one above) */
const CURVE = FLEETS[FLEETS.length - 1];
/** what WorkerPool's workers: 'auto' gives here */
const AUTO_WORKERS = Math.max(1, os.availableParallelism() - 1);

run(async () => {
  const o = options();
  // A gateway's worker meets its first full collection in its first seconds, on start-up garbage
  // (module loading, compiled code, histograms growing their pages): 5.7 ms, 3 s after start, and
  // then none in the next 25 s (--trace-gc, 1,000 devices at 10 Hz, one worker). With 2 s of
  // warm-up and 5 s measured, one fell inside the measured interval in every run of the child
  // (its longest pause 2.5-8 ms), and set its p99.
  // 5 s of warm-up covers it more often, and when it still falls inside, 15 s measured weighs it
  // nearer its share of a gateway's life. The curve's table counts the full collections measured.
  const warmupMs = o.quick ? 500 : 5000;
  const measureMs = o.quick ? 800 : 15000;
  const server = await startReferenceModbusServer();
  const child = path.join(__dirname, 'lib', 'fleet-child.js');
  const cmdlines = [server.cmdline];
  const rows = FLEETS.map((f) => new Row(`fleet-${f.devices}`, `${f.devices.toLocaleString('en-US')} devices at ${f.hz.length > 1 ? `${f.hz[0]}–${f.hz[f.hz.length - 1]}` : f.hz[0]} Hz`));
  const counts = o.quick ? [1, 2] : [1, 2, 3];
  const curve = counts.map((w) => new Row(`fleet-${CURVE.devices}-w${w}`, `${w} worker thread${w > 1 ? 's' : ''}${w === AUTO_WORKERS ? ' (the default here: the first table\'s runs)' : ''}`, { workers: w }));
  const fleetRun = (f, workers, into) => async () => {
    const args = [child, String(server.port), String(f.devices), f.hz.join(','), String(warmupMs), String(measureMs), ...(workers === 'auto' ? [] : [String(workers)])];
    const cmdline = ['node', ...args].join(' ');
    if (!cmdlines.includes(cmdline)) cmdlines.push(cmdline);
    const r = await runJson(process.execPath, args, { timeoutMs: warmupMs + measureMs + 60000 });
    delete r.hist;
    for (const row of into) row.add(r);
  };
  await interleave(Math.min(o.rounds, 3), [
    ...FLEETS.map((f, i) => ({
      row: rows[i],
      // the default-count run of the curve's fleet is also its point at that count
      run: fleetRun(f, 'auto', [rows[i], ...(f === CURVE ? curve.filter((c) => c.workers === AUTO_WORKERS) : [])])
    })),
    ...curve.filter((c) => c.workers !== AUTO_WORKERS).map((c) => ({ row: c, run: fleetRun(CURVE, c.workers, [c]) }))
  ]);
  await server.stop();
  return {
    question: 7,
    name: 'fleet',
    title: 'Fleet scale: one gateway polling 10, 100 and 1,000 devices',
    server: server.name,
    sections: [{
      title: `One gateway process, ${measureMs / 1000} s measured after ${warmupMs / 1000} s warm-up`,
      kind: 'custom',
      rows,
      columns: [
        { key: 'offered', label: 'offered req/s', unit: 'int', spread: false }, { key: 'reqPerSec', label: 'achieved req/s', unit: 'int' },
        { key: 'cpuPct', label: 'CPU % (of one core)', unit: 'pct' }, { key: 'rssMB', label: 'RSS', unit: 'MB' },
        { key: 'bytesPerJob', label: 'bytes per job', unit: 'bytes' }, { key: 'lagP99Ns', label: 'dispatch lag p99', unit: 'ns' },
        { key: 'responseP99Ns', label: 'response p99', unit: 'ns' }, { key: 'errors', label: 'errors', unit: 'int' }
      ]
    }, {
      title: `${CURVE.devices.toLocaleString('en-US')} devices × 1 job at ${CURVE.hz[0]} Hz over worker counts (default here: ${AUTO_WORKERS}; targets: dispatch-lag p99 ≤ 1 ms, RSS ≤ 256 MB)`,
      kind: 'custom',
      rows: curve,
      columns: [
        { key: 'workers', label: 'worker threads', unit: 'int', spread: false }, { key: 'reqPerSec', label: 'achieved req/s', unit: 'int' },
        { key: 'lagP99Ns', label: 'dispatch lag p99', unit: 'ns' }, { key: 'lagMaxNs', label: 'dispatch lag max', unit: 'ns' },
        { key: 'responseP99Ns', label: 'response p99', unit: 'ns' }, { key: 'cpuPct', label: 'CPU % (of one core)', unit: 'pct' },
        { key: 'rssMB', label: 'RSS', unit: 'MB' }, { key: 'markCompacts', label: 'full collections (worker threads)', unit: 'int' },
        { key: 'gcPauseMaxNs', label: 'longest collector pause', unit: 'ns' }, { key: 'errors', label: 'errors', unit: 'int' }
      ]
    }],
    notes: ['Each job\'s measured interval starts with its own pool.reset(job), 10 jobs every 2 ms, and ends at pool.stop(): one pool.reset() of 1,000 jobs blocks their thread for 2.5–9 ms (measured inline, 5 tries; 9–27 ms when each reset made new histograms), a stall the interval would then count as dispatch lag.',
      'Bytes per job: RSS growth from before the pool started to the measured interval, over the number of jobs (includes the worker thread\'s fixed cost, so it shrinks as the fleet grows).',
      'The devices are connections to one server process; it shares the 2 cores with the gateway.',
      `Worker-count curve: devices are spread evenly over the threads (WorkerPool puts each new device on the thread with the fewest); the ${os.availableParallelism()} cores here also run the server process and the gateway's main thread, so a point with more threads than cores − 1 shows what oversubscription costs, not scaling.`],
    cmdlines
  };
});
