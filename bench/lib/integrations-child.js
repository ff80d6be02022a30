'use strict';

/**
 * One gateway (gateway/runtime/gateway.js, worker threads, embedded MQTT broker) polling a fleet,
 * in its own process so its CPU and RSS are its own, with the metrics endpoint and the status page
 * on or off:
 *   node integrations-child.js <port> <jobs> <hz> <intervalMs> <warmupMs> <measureMs> <off|metrics|http|both|tags|sparkplug>
 * Each job has its own device (one connection to the server at <port>), FC3 ×10 at <hz>. While
 * measuring, a scraper reads /metrics as Prometheus does (protobuf, gzip) every second, and a
 * reader loads status.json and every job's plot once per interval, as an open status page does
 * (its plots are lazy: this is the worst case, every plot in view). Prints one JSON line.
 */

const path = require('node:path');
const zlib = require('node:zlib');

const ROOT = path.join(__dirname, '..', '..');
/** The tags of each device in the tag variants, over holding registers 0-9 */
const TAGS = [
  { name: 'counter', table: 'holding', address: 0, type: 'uint16' },
  { name: 'wave', table: 'holding', address: 1, type: 'int16', scale: 0.01 },
  { name: 'total', table: 'holding', address: 2, type: 'uint32' },
  { name: 'level', table: 'holding', address: 4, type: 'float32' },
  { name: 'run', table: 'holding', address: 6, type: 'bit', bit: 0 }
];
const [port, jobsArg, hz, intervalMs, warmupMs, measureMs, variant] = process.argv.slice(2);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const PROTOBUF = 'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3';

async function main () {
  const { Gateway } = require(path.join(ROOT, 'gateway/runtime/gateway'));
  const { validateConfig } = require(path.join(ROOT, 'gateway/runtime/config'));
  const n = Number(jobsArg);
  const devices = {};
  const jobs = [];
  const tagVariant = variant === 'tags' || variant === 'sparkplug';
  for (let i = 0; i < n; i++) {
    devices[`dev-${i}`] = { target: `modbus+tcp://127.0.0.1:${port}?unitId=1`, timeout: '1s' };
    if (tagVariant) {
      // registers 0 and 1 of the animated simulator move: two of the five tags change at every poll
      devices[`dev-${i}`].tags = { main: TAGS };
      jobs.push({ name: `job-${i}`, device: `dev-${i}`, tags: 'main', rate: `${hz}/s`, values: { mode: 'on-change', maxRate: '1/s' } });
    } else {
      jobs.push({ name: `job-${i}`, device: `dev-${i}`, read: { fc: 3, address: 0, quantity: 10 }, rate: `${hz}/s` });
    }
  }
  const gateway = { id: 'bench', interval: `${intervalMs}ms` };
  if (variant === 'metrics' || variant === 'both') gateway.metrics = { listen: '127.0.0.1:0' };
  if (variant === 'http' || variant === 'both') gateway.http = { listen: '127.0.0.1:0' };
  const mqtt = { embedded: { port: 0 } };
  if (variant === 'sparkplug') mqtt.sparkplug = { group: 'bench', node: 'bench' };
  if (global.gc) global.gc();
  const rssBefore = process.memoryUsage().rss;
  const gw = new Gateway(validateConfig({ gateway, mqtt, devices, jobs }, { env: {} }));
  let summaries = 0;
  gw.on('summary', () => { summaries++; });
  await gw.start();
  await sleep(Number(warmupMs));

  const sparkplugSent = () => {
    if (!gw.sparkplug) return 0;
    const c = gw.sparkplug.edge.counts;
    return c.NBIRTH + c.DBIRTH + c.DDATA + c.DDEATH + c.NDATA;
  };
  const sp0 = sparkplugSent();
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const s0 = summaries;
  let rssMax = 0;
  const sampler = setInterval(() => { rssMax = Math.max(rssMax, process.memoryUsage().rss); }, 100);
  const scrapes = [];
  const pages = [];
  let stop = false;
  const scraper = (async () => {
    if (!gw.metrics) return;
    while (!stop) {
      const t = process.hrtime.bigint();
      const res = await fetch(gw.metrics.url, { headers: { accept: PROTOBUF, 'accept-encoding': 'gzip' } });
      const body = Buffer.from(await res.arrayBuffer()); // fetch inflates gzip itself
      scrapes.push({ ms: Number(process.hrtime.bigint() - t) / 1e6, bytes: body.length, gzipBytes: zlib.gzipSync(body, { level: 1 }).length });
      await sleep(1000);
    }
  })();
  const reader = (async () => {
    if (!gw.status) return;
    while (!stop) {
      const t = process.hrtime.bigint();
      const s = await (await fetch(`${gw.status.url}status.json`)).json();
      for (const j of s.jobs) await (await fetch(`${gw.status.url}plot/${j.name}.svg?seq=${j.seq}`)).arrayBuffer();
      pages.push({ ms: Number(process.hrtime.bigint() - t) / 1e6 });
      await sleep(Number(intervalMs));
    }
  })();
  await sleep(Number(measureMs));
  stop = true;
  clearInterval(sampler);
  const wallUs = Number(process.hrtime.bigint() - t0) / 1e3;
  const cpu = process.cpuUsage(cpu0);
  const rss = Math.max(rssMax, process.memoryUsage().rss);
  const measuredSummaries = summaries - s0;
  const sparkplugMessages = sparkplugSent() - sp0;
  await Promise.all([scraper, reader]);
  await gw.stop();
  const median = (list, k) => { const v = list.map((x) => x[k]).sort((a, b) => a - b); return v.length ? v[Math.floor(v.length / 2)] : null; };
  process.stdout.write(JSON.stringify({
    variant,
    jobs: n,
    summaries: measuredSummaries,
    cpuPct: (cpu.user + cpu.system) / wallUs * 100,
    rssMB: rss / 2 ** 20,
    rssGrowthMB: (rss - rssBefore) / 2 ** 20,
    scrapeMs: median(scrapes, 'ms'),
    scrapeKB: scrapes.length ? median(scrapes, 'bytes') / 1024 : null,
    scrapeGzipKB: scrapes.length ? median(scrapes, 'gzipBytes') / 1024 : null,
    pageMs: median(pages, 'ms'),
    sparkplugPerSec: gw.sparkplug === null ? null : sparkplugMessages / (wallUs / 1e6)
  }) + '\n');
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
}).finally(() => setTimeout(() => process.exit(), 200).unref()); // eslint-disable-line n/no-process-exit
