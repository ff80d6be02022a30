'use strict';

/**
 * Question 9: devices own their connections (issue 8). Three measurements, side by side in one run:
 *
 * a. Fewer connections than jobs: 10 poll jobs at 100/s each (1,000/s in all) on one device with
 *    maxConnections 1, against the reference server; the same 10 jobs on maxConnections 10 as the
 *    contrast. Connections the server saw (`ss`, server side) and the device's own count (health),
 *    each job's achieved rate as a ratio to its configured rate (worst and best of the 10), seq and
 *    interval contiguity, p99 per job.
 * b. Isolation: 5 devices (one nines Modbus simulator process each), 1 job each at 200/s, in one
 *    pool (default worker count). All healthy; one device refusing (its server process killed when
 *    the measured interval starts); one device stalling (its simulator frozen by the `stall` fault
 *    for the whole measured interval). The other four's p99 and p99.9 as ratios to all healthy in
 *    the same round.
 * c. On-demand hop: one request through pool.request() (main thread → the device's worker thread →
 *    back) vs the same request on a driver client on the main thread, closed loop, FC3 ×10.
 *
 * (a) and (b) run a fresh gateway process per measurement (lib/devices-child.js); (c) runs here.
 */

const path = require('node:path');
const { options, Row, interleave, run } = require('./lib/question');
const { startReferenceModbusServer, startSimProcess } = require('./lib/servers');
const { runJson } = require('./lib/procs');
const { closedLoop } = require('./lib/closed-loop');
const { createHist, stats, decode } = require('./lib/hist');

const ROOT = path.join(__dirname, '..');
const CHILD = path.join(__dirname, 'lib', 'devices-child.js');
/** The op of every request: FC3, 10 holding registers from 0 (plain data, validated by the driver each time, on both paths of c) */
const OP = Object.freeze({ fc: 3, address: 0, quantity: 10 });
const SHARED_JOBS = 10;
const SHARED_RATE = 100;
const ISO_DEVICES = 5;
const ISO_RATE = 200;
/** the faulted device of (b); the other four are the ones judged */
const VICTIM = ISO_DEVICES - 1;

const min = (xs) => Math.min(...xs);
const max = (xs) => Math.max(...xs);

/**
 * Waits until a device in the pool reports state 'up'.
 * @param {object} pool WorkerPool
 * @param {string} name
 * @param {number} timeoutMs
 * @returns {Promise<void>}
 */
function waitUp (pool, name, timeoutMs) {
  return new Promise((resolve, reject) => {
    const h = pool.health(name);
    if (h && h.state === 'up') { resolve(); return; }
    const timer = setTimeout(() => { pool.off('health', on); reject(new Error(`device ${name} not up within ${timeoutMs} ms (${JSON.stringify(pool.health(name))})`)); }, timeoutMs);
    function on (device, health) {
      if (device !== name || health.state !== 'up') return;
      clearTimeout(timer);
      pool.off('health', on);
      resolve();
    }
    pool.on('health', on);
  });
}

run(async () => {
  const o = options();
  const rounds = Math.min(o.rounds, 3);
  const warmupMs = o.quick ? 500 : 2000;
  const measureMs = o.quick ? 1000 : 5000;
  const intervalMs = o.quick ? 250 : 1000;
  const childLimitMs = warmupMs + measureMs + 30000;
  const { WorkerPool, buildDeviceSpec, createClient } = require(ROOT);

  const server = await startReferenceModbusServer();
  let sims = [];
  const cmdlines = new Set([server.cmdline]);
  try {
    sims = await Promise.all(Array.from({ length: ISO_DEVICES }, () => startSimProcess('modbus')));
    cmdlines.add(sims[0].cmdline);

    // --- a. fewer connections than jobs ---------------------------------------------------------
    const shared = [1, 10].map((mc) => new Row(`shared-${mc}`, `${SHARED_JOBS} jobs × ${SHARED_RATE}/s on one device, maxConnections ${mc}`, { maxConnections: mc }));
    const sharedVariant = (row) => ({
      row,
      run: async () => {
        const args = [CHILD, 'shared', String(server.port), String(SHARED_JOBS), String(SHARED_RATE), String(row.maxConnections), String(warmupMs), String(measureMs), String(intervalMs)];
        cmdlines.add(['node', ...args].join(' ').replace(String(server.port), '<port>'));
        const r = await runJson(process.execPath, args, { timeoutMs: childLimitMs });
        const d = r.devices[0];
        const jobs = r.jobs;
        const merged = createHist();
        for (const j of jobs) merged.add(decode(j.hist));
        if (d.serverConnections === null) row.note = '`ss` unavailable: connections counted from the device\'s health only';
        if (Object.keys(r.jobErrors).length) row.note = `job errors: ${JSON.stringify(r.jobErrors).slice(0, 300)}`;
        row.add({
          serverConnections: d.serverConnections === null ? NaN : d.serverConnections,
          healthOpen: d.health ? d.health.open : NaN,
          offered: SHARED_JOBS * SHARED_RATE,
          achieved: jobs.reduce((a, j) => a + j.achieved, 0),
          rateMin: min(jobs.map((j) => j.rateRatio)),
          rateMax: max(jobs.map((j) => j.rateRatio)),
          skipped: jobs.reduce((a, j) => a + j.skipped, 0),
          failed: jobs.reduce((a, j) => a + j.failed, 0),
          intervals: min(jobs.map((j) => j.intervals)),
          seqBroken: jobs.filter((j) => !j.seqContiguous || j.timeGaps > 0).length,
          p99Min: min(jobs.map((j) => j.p99)),
          p99Max: max(jobs.map((j) => j.p99)),
          p999: stats(merged).p999,
          workers: r.workers
        });
      }
    });

    // --- b. isolation -------------------------------------------------------------------------
    const iso = {
      healthy: new Row('iso-healthy', `${ISO_DEVICES} devices healthy`),
      refused: new Row('iso-refused', `device ${VICTIM} refusing (server process killed)`),
      stalled: new Row('iso-stalled', `device ${VICTIM} stalling (simulator frozen)`)
    };
    /** the all-healthy figures of each round, the reference of the faulted rows in the same round */
    const healthyOf = [];
    const isoVariant = (row, fault) => ({
      row,
      run: async (round) => {
        const victim = sims[VICTIM];
        const args = [CHILD, 'devices', sims.map((s) => s.port).join(','), String(ISO_RATE), String(warmupMs), String(measureMs), String(intervalMs)];
        if (fault === 'healthy') cmdlines.add(['node', ...args].join(' ').replace(/devices \S+/, 'devices <port,…>'));
        let killed = null;
        const onLine = (line) => {
          if (line !== 'MEASURING') return;
          if (fault === 'refused') killed = victim.kill('SIGKILL');
          // longer than the measured interval: the child's stop() still finds it frozen; cleared below
          else if (fault === 'stalled') victim.send(`stall ${measureMs + 10000}`);
        };
        let r;
        try {
          r = await runJson(process.execPath, args, { timeoutMs: childLimitMs, onLine });
        } finally {
          if (fault === 'stalled') victim.send('clear');
          if (fault === 'refused') {
            await (killed || victim.kill('SIGKILL'));
            sims[VICTIM] = await startSimProcess('modbus');
          }
        }
        const others = r.jobs.filter((j) => j.device !== `dev-${VICTIM}`);
        const v = r.jobs.find((j) => j.device === `dev-${VICTIM}`);
        const merged = createHist();
        for (const j of others) merged.add(decode(j.hist));
        const s = stats(merged);
        const vh = r.devices[VICTIM].health;
        row.victimState = vh ? vh.state : '–';
        const out = {
          othersP99: s.p99,
          othersP999: s.p999,
          worstP99: max(others.map((j) => j.p99)),
          othersRateMin: min(others.map((j) => j.rateRatio)),
          othersFailed: others.reduce((a, j) => a + j.failed, 0),
          victimOk: v.ok,
          victimFailed: v.failed,
          victimSkipped: v.skipped
        };
        if (fault === 'healthy') healthyOf[round] = out;
        else if (healthyOf[round]) {
          out.ratioP99 = out.othersP99 / healthyOf[round].othersP99;
          out.ratioP999 = out.othersP999 / healthyOf[round].othersP999;
        }
        row.add(out);
      }
    });

    // --- c. on-demand hop ---------------------------------------------------------------------
    const target = `modbus+tcp://127.0.0.1:${server.port}?unitId=1`;
    const hop = {
      pool: new Row('hop', 'pool.request(): main thread → device\'s worker thread → back'),
      direct: new Row('direct', 'driver client on the main thread (createClient)')
    };
    const hopVariants = [
      {
        row: hop.pool,
        run: async () => {
          const pool = new WorkerPool({ mode: 'worker', workers: 1 });
          try {
            pool.addDevice(buildDeviceSpec({ name: 'hop', target, maxConnections: 1, timeoutMs: 1000 }));
            await waitUp(pool, 'hop', 10000);
            hop.pool.addLatency(await closedLoop(() => pool.request('hop', OP), o));
          } finally {
            await pool.stop(5000);
          }
        }
      },
      {
        row: hop.direct,
        run: async () => {
          const client = createClient(target, { timeoutMs: 1000 });
          client.on('error', () => {});
          try {
            await client.connect();
            hop.direct.addLatency(await closedLoop(() => client.request(OP), o));
          } finally {
            await client.close();
          }
        }
      }
    ];

    await interleave(rounds, [
      ...shared.map(sharedVariant),
      isoVariant(iso.healthy, 'healthy'), isoVariant(iso.refused, 'refused'), isoVariant(iso.stalled, 'stalled'),
      ...hopVariants
    ]);

    // per-round ratios of the hop to the main-thread client (the same round's runs)
    const ratio = new Row('hop-ratio', 'pool.request() ÷ main-thread client');
    const n = Math.min(hop.pool.runs.length, hop.direct.runs.length);
    for (let i = 0; i < n; i++) {
      const a = hop.pool.runs[i];
      const b = hop.direct.runs[i];
      ratio.add({ reqPerSec: a.reqPerSec / b.reqPerSec, p50: a.p50 / b.p50, p99: a.p99 / b.p99, p999: a.p999 / b.p999, extraP50: a.p50 - b.p50 });
    }
    if (n === 0) ratio.skip('a hop or a main-thread run is missing');

    return {
      question: 9,
      name: 'devices',
      title: 'Devices own their connections: shared connections, isolation, the on-demand hop',
      latency: true,
      server: server.name,
      sections: [
        {
          title: `a. ${SHARED_JOBS} poll jobs at ${SHARED_RATE}/s on one device (${server.name}), ${measureMs / 1000} s measured after ${warmupMs / 1000} s, intervals of ${intervalMs} ms`,
          kind: 'custom',
          rows: shared,
          columns: [
            { key: 'serverConnections', label: 'connections (ss, server side)', unit: 'int' },
            { key: 'healthOpen', label: 'connections.open (device health)', unit: 'int' },
            { key: 'achieved', label: 'achieved req/s (offered 1,000)', unit: 'int' },
            { key: 'rateMin', label: 'rate ÷ configured, worst job', unit: 'ratio' },
            { key: 'rateMax', label: 'best job', unit: 'ratio' },
            { key: 'skipped', label: 'skipped slots', unit: 'int' },
            { key: 'failed', label: 'errors + timeouts', unit: 'int' },
            { key: 'seqBroken', label: 'jobs with a seq or interval gap', unit: 'int' },
            { key: 'p99Min', label: 'p99, best job', unit: 'ns' },
            { key: 'p99Max', label: 'p99, worst job', unit: 'ns' },
            { key: 'p999', label: 'p99.9, all jobs', unit: 'ns' }
          ]
        },
        {
          title: `b. ${ISO_DEVICES} devices (one nines Modbus simulator process each), 1 job each at ${ISO_RATE}/s, one pool; figures of the other four devices`,
          kind: 'custom',
          rows: Object.values(iso),
          columns: [
            { key: 'othersP99', label: 'p99, other four', unit: 'ns' },
            { key: 'othersP999', label: 'p99.9, other four', unit: 'ns' },
            { key: 'worstP99', label: 'p99, worst of the four', unit: 'ns' },
            { key: 'ratioP99', label: 'p99 × all healthy', unit: 'ratio' },
            { key: 'ratioP999', label: 'p99.9 × all healthy', unit: 'ratio' },
            { key: 'othersRateMin', label: 'rate ÷ configured, worst of the four', unit: 'ratio' },
            { key: 'othersFailed', label: 'errors + timeouts, other four', unit: 'int' },
            { key: 'victimState', label: `device ${VICTIM} state (mid-run)`, unit: 'num' },
            { key: 'victimOk', label: `device ${VICTIM} ok`, unit: 'int' },
            { key: 'victimFailed', label: `device ${VICTIM} errors + timeouts`, unit: 'int' },
            { key: 'victimSkipped', label: `device ${VICTIM} skipped slots`, unit: 'int' }
          ]
        },
        { title: `c. One on-demand request, closed loop, FC3 ×10 against the ${server.name}`, kind: 'latency', rows: Object.values(hop) },
        {
          title: 'c. The hop as a ratio to the main-thread client (per round, then the median)',
          kind: 'custom',
          rows: [ratio],
          columns: [
            { key: 'reqPerSec', label: 'req/s ×', unit: 'ratio' }, { key: 'p50', label: 'p50 ×', unit: 'ratio' },
            { key: 'p99', label: 'p99 ×', unit: 'ratio' }, { key: 'p999', label: 'p99.9 ×', unit: 'ratio' },
            { key: 'extraP50', label: 'p50 added by the hop', unit: 'ns' }
          ]
        }
      ],
      notes: [
        'a, b: poll jobs (policy skip), response time from the intended send time; one fresh gateway process per measurement (default worker count), its summaries after pool.reset() are the measured ones. ' +
          'Connections are counted half-way through the measured interval: established sockets on the server port (`ss -tn state established`), and the device\'s `health.connections.open` as the pool last heard it.',
        'a: "rate ÷ configured" is (ok + errors + timeouts) per second over the job\'s measured intervals, over its configured rate; a seq gap is a summary number missing or repeated, an interval gap an interval that does not start where the one before ended.',
        `b: the device refusing has its server process killed as the measured interval starts (its connection drops, reconnects are refused); the device stalling has its simulator frozen (the fault engine's stall: requests are read, replies held) for the whole interval, so its requests time out (1 s). Ratios are to the all-healthy row of the same round.`,
        'c: closed loop, timed around each call on the main thread; the pool\'s worker holds the device\'s one connection. Both paths get the op as plain data, so each validates it per request (an op crossing threads loses the validated mark anyway).'
      ],
      cmdlines: [...cmdlines]
    };
  } finally {
    await Promise.all(sims.map((s) => s.stop()));
    await server.stop();
  }
});
