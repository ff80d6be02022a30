'use strict';

/**
 * Question 10: what do the metrics endpoint, the status page and the Sparkplug B edge node cost a
 * gateway of 1,000 jobs? One gateway process (worker threads, embedded broker), 1,000 jobs on 1,000
 * devices at 10 Hz against the reference server, with the integrations off, the metrics endpoint on
 * (scraped every second as Prometheus would, protobuf with native histograms), the status page on
 * (status.json and every job's plot read once per interval), and both: the process's CPU and RSS,
 * and the time and size of a scrape and of a page refresh.
 * Sparkplug publishes tags, so its pair of rows reads tag jobs (5 tags per device, two of them
 * changing: the nines simulator, animated, in its own process) with values at most 1/s per job, with
 * Sparkplug off and on: births, a DDATA per device per second and the latency NDATA.
 */

const path = require('node:path');
const { options, Row, interleave, run } = require('./lib/question');
const { startReferenceModbusServer, startSimProcess } = require('./lib/servers');
const { runJson } = require('./lib/procs');

const VARIANTS = [
  ['off', 'integrations off'],
  ['metrics', 'metrics endpoint, scraped every 1 s'],
  ['http', 'status page, refreshed every interval'],
  ['both', 'both'],
  ['tags', 'tag jobs, values changing, integrations off'],
  ['sparkplug', 'tag jobs, values changing, Sparkplug B edge node']
];
/** Variants that read tags from the animated simulator */
const TAG_VARIANTS = new Set(['tags', 'sparkplug']);

run(async () => {
  const o = options();
  const jobs = o.quick ? 100 : 1000;
  const hz = 10;
  const intervalMs = o.quick ? 1000 : 2000;
  const warmupMs = o.quick ? 1500 : 4000;
  const measureMs = o.quick ? 2500 : 10000;
  const server = await startReferenceModbusServer();
  const animated = await startSimProcess('modbus-animated');
  const child = path.join(__dirname, 'lib', 'integrations-child.js');
  const cmdlines = [server.cmdline, animated.cmdline];
  const rows = VARIANTS.map(([v, label]) => new Row(`integrations-${v}`, label));
  await interleave(Math.min(o.rounds, 3), VARIANTS.map(([v], i) => ({
    row: rows[i],
    run: async () => {
      const args = [child, String(TAG_VARIANTS.has(v) ? animated.port : server.port), String(jobs), String(hz), String(intervalMs), String(warmupMs), String(measureMs), v];
      const cmdline = ['node', ...args].join(' ');
      if (!cmdlines.includes(cmdline)) cmdlines.push(cmdline);
      rows[i].add(await runJson(process.execPath, args, { timeoutMs: warmupMs + measureMs + 120000 }));
    }
  })));
  await server.stop();
  await animated.stop();
  return {
    question: 10,
    name: 'integrations',
    title: `Cost of the metrics endpoint, the status page and Sparkplug B: ${jobs.toLocaleString('en-US')} jobs at ${hz} Hz`,
    server: server.name,
    sections: [{
      title: `One gateway process, ${measureMs / 1000} s measured after ${warmupMs / 1000} s warm-up, interval ${intervalMs / 1000} s`,
      kind: 'custom',
      rows,
      columns: [
        { key: 'cpuPct', label: 'CPU % (of one core)', unit: 'pct' }, { key: 'rssMB', label: 'RSS', unit: 'MB' },
        { key: 'summaries', label: 'summaries', unit: 'int' },
        { key: 'scrapeMs', label: 'scrape time (ms)', unit: 'int' }, { key: 'scrapeGzipKB', label: 'scrape KB (gzip)', unit: 'int' },
        { key: 'pageMs', label: 'page refresh (ms)', unit: 'int' },
        { key: 'sparkplugPerSec', label: 'Sparkplug msgs/s', unit: 'int' }
      ]
    }],
    notes: ['CPU and RSS are the whole gateway process (main thread and its worker threads); the scraper and the page reader run inside it too, so their requests are counted with it.',
      'The page reader fetches all 1,000 plots each interval, the worst case: a browser loads only the plots in view (they are lazy images).',
      'scrape KB: the protobuf exposition gzip-compressed at level 1, as sent to a Prometheus that accepts gzip.',
      'The tag rows poll the nines Modbus simulator (animated, its own process), not the C server: compare Sparkplug with its own "tags" row. Sparkplug msgs/s counts what the edge node published (DBIRTH, DDATA, NDATA); nobody subscribes, so the embedded broker only routes them.'],
    cmdlines
  };
});
