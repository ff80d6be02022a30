'use strict';

/**
 * One question (issue 11, "GC placement"): does a larger or smaller young generation for the
 * worker thread shorten the gateway job's tail? Question 1's worker row (a long-running job, closed
 * loop, FC3 ×10 against the C libmodbus server), with the pool's `resourceLimits`
 * `maxYoungGenerationSizeMb` at V8's default and at each size given, interleaved over rounds; client
 * and server pinned to one core, where the CPU a collection takes shows. Not in `npm run bench`: its
 * answer decides a default, and it takes a minute and a half.
 *
 *   node bench/young-gen.js [--sizes 4,16,64] [--rounds 3] [--cpu 0]
 *
 * Per size: req/s, p99, p99.9 and max of the job's service times, its worker thread's scavenges and
 * their longest pause, each as the median and range over rounds.
 */

const path = require('node:path');
const { parseArgs } = require('node:util');
const { startServer, runJson } = require('./lib/procs');
const { cPath, cSkipReason } = require('./lib/c-peers');
const { decode, stats } = require('./lib/hist');
const { aggregate } = require('./lib/aggregate');
const { pinned } = require('./lib/placement');

const CHILD = path.join(__dirname, 'lib', 'closed-loop-child.js');
const { values: args } = parseArgs({ options: { sizes: { type: 'string', default: '4,16,64' }, rounds: { type: 'string', default: '3' }, cpu: { type: 'string', default: '0' } } });
const sizes = [null, ...args.sizes.split(',').map(Number)];
if (sizes.slice(1).some((s) => !Number.isInteger(s) || s < 1)) throw new Error(`--sizes: whole MB, comma-separated (got ${args.sizes})`);
const rounds = Number(args.rounds);

/** One run of the worker job with one young-generation limit (null: V8's default). */
async function once (size) {
  const server = await startServer(...pinned(args.cpu, cPath('modbus-server'), []), { label: 'modbus-server' });
  try {
    const o = { kind: 'worker', port: server.port, count: 50000, warmup: 60000, durationMs: 8000, allocCount: 0, intervalMs: 500 };
    if (size !== null) o.resourceLimits = { maxYoungGenerationSizeMb: size };
    const r = await runJson(...pinned(args.cpu, process.execPath, [CHILD, JSON.stringify(o)]), { timeoutMs: 120000 });
    const h = stats(decode(r.hist));
    return { rps: r.reqPerSec, p99: h.p99 / 1e3, p999: h.p999 / 1e3, max: h.max / 1e3, scavenges: r.scavenges, gcMax: r.gcPauseMaxNs / 1e3 };
  } finally {
    await server.stop();
  }
}

/** median (min–max) of one figure over rounds */
function spread (runs, key, digits = 0) {
  const a = aggregate(runs)[key];
  const f = (x) => x.toFixed(digits);
  return `${f(a.median)} (${f(a.min)}–${f(a.max)})`;
}

async function main () {
  if (!cPath('modbus-server')) throw new Error(`${cSkipReason('modbus-server')} (node bench/c/build.js builds it)`);
  const runs = new Map(sizes.map((s) => [s, []]));
  for (let i = 0; i < rounds; i++) {
    for (const s of sizes) runs.get(s).push(await once(s));
  }
  console.log(`worker job, closed loop, pinned to CPU ${args.cpu} with the C server; ${rounds} rounds, median (min–max)\n`);
  console.log('| young generation | req/s | p99 µs | p99.9 µs | max µs | scavenges | longest scavenge µs |');
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  for (const [s, r] of runs) {
    console.log(`| ${s === null ? 'V8 default' : `${s} MB`} | ${spread(r, 'rps')} | ${spread(r, 'p99', 1)} | ${spread(r, 'p999', 1)} | ${spread(r, 'max')} | ${spread(r, 'scavenges')} | ${spread(r, 'gcMax')} |`);
  }
}

main().catch((err) => { console.error(err); process.exitCode = 1; });
