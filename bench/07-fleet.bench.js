'use strict';

/**
 * Question 7: what does a fleet cost one gateway? 10, 100 and 1,000 simulated devices (one
 * connection each to the reference server, which stands in for the devices) polled at 10–100 Hz by
 * one gateway process (WorkerPool, default worker count): CPU %, RSS, bytes per job and dispatch-lag
 * p99 over the measured interval. Rates are chosen so the total stays within what 2 cores serve.
 */

const path = require('node:path');
const { options, Row, interleave, run } = require('./lib/question');
const { startReferenceModbusServer } = require('./lib/servers');
const { runJson } = require('./lib/procs');

const FLEETS = [
  { devices: 10, hz: [100] },
  { devices: 100, hz: [10, 20, 30, 40, 50, 60, 70, 80, 90, 100] },
  { devices: 1000, hz: [10] }
];

run(async () => {
  const o = options();
  const warmupMs = o.quick ? 500 : 2000;
  const measureMs = o.quick ? 800 : 5000;
  const server = await startReferenceModbusServer();
  const child = path.join(__dirname, 'lib', 'fleet-child.js');
  const cmdlines = [server.cmdline];
  const rows = FLEETS.map((f) => new Row(`fleet-${f.devices}`, `${f.devices.toLocaleString('en-US')} devices at ${f.hz.length > 1 ? `${f.hz[0]}–${f.hz[f.hz.length - 1]}` : f.hz[0]} Hz`));
  await interleave(Math.min(o.rounds, 3), FLEETS.map((f, i) => ({
    row: rows[i],
    run: async () => {
      const args = [child, String(server.port), String(f.devices), f.hz.join(','), String(warmupMs), String(measureMs)];
      if (cmdlines.length <= FLEETS.length) cmdlines.push(['node', ...args].join(' '));
      const r = await runJson(process.execPath, args, { timeoutMs: warmupMs + measureMs + 60000 });
      delete r.hist;
      rows[i].add(r);
    }
  })));
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
    }],
    notes: ['Bytes per job: RSS growth from before the pool started to the measured interval, over the number of jobs (includes the worker thread\'s fixed cost, so it shrinks as the fleet grows).',
      'The devices are connections to one server process; it shares the 2 cores with the gateway.'],
    cmdlines
  };
});
