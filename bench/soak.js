'use strict';

/**
 * Soak: does the gateway's memory stay flat over an hour? (issue 12; not in CI)
 *
 *   node bench/soak.js [--duration 1h] [--sample 1m] [--devices 10] [--rate 100/s] [--out file.json]
 *                      [--inline] [--no-spool]
 *
 * Runs a gateway (bench/lib/soak-gateway.js, its own process) with its embedded broker and a disk
 * spool, polling --devices simulated Modbus devices (each in its own process) at --rate each, with
 * values on every poll capped at 10/s and a 1 s summary interval. Every summary and value goes
 * through the spool (written, fdatasync'd, acknowledged, segments rolled and deleted), so an hour
 * of it exercises what an outage would, bar the replay (test/long/faults.test.js has that). An
 * independent subscriber here checks each job's seq stays contiguous. Every --sample it prints the
 * gateway's RSS and live heap (after a full collection). The live heap is the main thread's: in the
 * default worker mode the jobs' heap is in RSS only; --inline polls on the main thread, so that the
 * heap figure covers the jobs too. --no-spool leaves the spool out (memory buffers only).
 *
 * The bound (fails, exit 1, past it): after the warm-up (the first 10 % of the run, at least one
 * sample), no sample may exceed the warm-up's highest RSS by more than 50 MB, nor its highest live
 * heap by more than 20 MB. A leak of one summary per interval (about 2 KB × 10 jobs per second)
 * would pass 50 MB in under an hour, so the bound catches what matters and leaves room for the
 * allocator's own breathing.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { fork, spawn } = require('node:child_process');
const { parseArgs } = require('node:util');
const mqtt = require('mqtt');
const { parseDuration, parseRate } = require('../gateway/base/quantities');

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '1h' },
    sample: { type: 'string', default: '1m' },
    devices: { type: 'string', default: '10' },
    rate: { type: 'string', default: '100/s' },
    out: { type: 'string' },
    inline: { type: 'boolean', default: false },
    'no-spool': { type: 'boolean', default: false }
  }
});
const DURATION_MS = parseDuration(args.duration, '--duration');
const SAMPLE_MS = parseDuration(args.sample, '--sample');
const DEVICES = Number(args.devices);
const RATE = parseRate(args.rate, '--rate');
const RSS_BOUND = 50e6;
const HEAP_BOUND = 20e6;
const NINES = path.join(__dirname, '..', 'bin', 'nines.js');
const MB = (b) => +(b / 1e6).toFixed(1);

function startSim () {
  const child = spawn(process.execPath, [NINES, 'sim', 'modbus', '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /modbus\+tcp:\/\/\S+/.exec(out);
      if (m) resolve({ url: m[0], child });
    });
    child.once('exit', (code) => reject(new Error(`nines sim exited with ${code}`)));
  });
}

const ask = (child, type, want) => new Promise((resolve) => {
  const on = (m) => { if (m.type === want) { child.off('message', on); resolve(m); } };
  child.on('message', on);
  child.send({ type });
});

async function main () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-soak-'));
  const sims = [];
  for (let i = 0; i < DEVICES; i++) sims.push(await startSim());
  const config = {
    gateway: { id: 'soak', interval: '1s', workers: 1, mode: args.inline ? 'inline' : 'worker' },
    mqtt: { embedded: { port: 0 }, ...(args['no-spool'] ? {} : { spool: { dir: path.join(dir, 'spool'), maxBytes: '64MiB' } }), reconnect: { initial: '500ms', max: '5s' } },
    devices: Object.fromEntries(sims.map((s, i) => [`d${i}`, { target: s.url, timeout: '200ms' }])),
    jobs: sims.map((s, i) => ({ name: `j${i}`, device: `d${i}`, read: { fc: 3, address: 0, quantity: 10 }, rate: `${RATE}/s`, values: { mode: 'every', maxRate: '10/s' } }))
  };
  const gw = fork(path.join(__dirname, 'lib', 'soak-gateway.js'), [], { execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const brokerUrl = await new Promise((resolve) => {
    gw.on('message', (m) => { if (m.type === 'broker') resolve(m.url); });
    gw.send({ type: 'config', config });
  });

  // the independent subscriber: seq per job, gaps must match the status's drop counts
  const sub = await mqtt.connectAsync(brokerUrl, { reconnectPeriod: 1000 });
  const lastSeq = new Map();
  let gaps = 0;
  let summaries = 0;
  sub.on('message', (topic, payload) => {
    if (!topic.endsWith('/latency')) return;
    const p = JSON.parse(payload.toString());
    summaries++;
    const prev = lastSeq.get(p.job);
    if (prev !== undefined && p.seq > prev + 1) gaps += p.seq - prev - 1;
    if (prev === undefined || p.seq > prev) lastSeq.set(p.job, p.seq);
  });
  await sub.subscribeAsync('nines/soak/+/latency', { qos: 1 });

  const samples = [];
  const t0 = Date.now();
  const warmupMs = Math.max(SAMPLE_MS, DURATION_MS * 0.1);
  let failed = null;
  console.log(`soak: ${DEVICES} devices at ${RATE}/s for ${args.duration}${args.inline ? ', inline' : ''}${args['no-spool'] ? ', no spool' : ''}, a sample every ${args.sample}; bound: warm-up max + ${MB(RSS_BOUND)} MB RSS, + ${MB(HEAP_BOUND)} MB live heap`);
  while (Date.now() - t0 < DURATION_MS) {
    await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
    const s = await ask(gw, 'sample', 'sample');
    const atMin = +((Date.now() - t0) / 60000).toFixed(1);
    samples.push({ atMin, rssMB: MB(s.rss), heapMB: MB(s.heapUsed), externalMB: MB(s.external), published: s.stats.published, dropped: s.stats.dropped, summaries, gaps });
    const warm = samples.filter((x) => x.atMin * 60000 <= warmupMs);
    const rssMax = Math.max(...warm.map((x) => x.rssMB));
    const heapMax = Math.max(...warm.map((x) => x.heapMB));
    const last = samples[samples.length - 1];
    console.log(`${String(atMin).padStart(6)} min  rss ${last.rssMB} MB  heap ${last.heapMB} MB  external ${last.externalMB} MB  summaries ${summaries}  seq gaps ${gaps}  dropped ${last.dropped}`);
    if (atMin * 60000 > warmupMs) {
      if (last.rssMB > rssMax + MB(RSS_BOUND)) failed = `RSS ${last.rssMB} MB passed the warm-up's ${rssMax} MB + ${MB(RSS_BOUND)} MB`;
      if (last.heapMB > heapMax + MB(HEAP_BOUND)) failed = `live heap ${last.heapMB} MB passed the warm-up's ${heapMax} MB + ${MB(HEAP_BOUND)} MB`;
    }
  }
  await ask(gw, 'stop', 'stopped');
  await sub.endAsync();
  for (const s of sims) s.child.kill('SIGTERM');
  fs.rmSync(dir, { recursive: true, force: true });
  const result = { duration: args.duration, devices: DEVICES, ratePerSec: RATE, samples, bound: { rssMB: MB(RSS_BOUND), heapMB: MB(HEAP_BOUND) }, failed, gaps };
  if (args.out) fs.writeFileSync(args.out, JSON.stringify(result, null, 2));
  if (gaps > 0 && samples.length && samples[samples.length - 1].dropped < gaps) failed = failed || `${gaps} seq gaps but only ${samples[samples.length - 1].dropped} counted drops`;
  console.log(failed ? `FAILED: ${failed}` : 'soak passed: memory within the bound, seq contiguous');
  process.exitCode = failed ? 1 : 0;
}

main().catch((err) => { console.error(err); process.exitCode = 1; });
