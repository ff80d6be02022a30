'use strict';

const { parse } = require('./args');
const { NinesError } = require('../base/errors');
const { parseDuration } = require('../base/units');
const { renderTable } = require('./table');

const USAGE = `Usage: nines watch [mqtt-url] [options]

Subscribes to <prefix>/+/+/latency and shows a live table: one row per job, the latest interval of
every gateway running it merged by adding histograms (percentiles are never averaged).

Options:
  --prefix <p>       topic prefix (default nines)
  --refresh <d>      redraw period (default 1s)
  --duration <d>     stop after this long
  --json             print each merged table as one JSON line instead
`;

/** @param {string[]} argv @returns {Promise<number>} */
async function main (argv) {
  const { values, positionals } = parse(argv, {
    prefix: { type: 'string', default: 'nines' },
    refresh: { type: 'string', default: '1s' },
    duration: { type: 'string' },
    json: { type: 'boolean', default: false }
  }, USAGE);
  if (values.help) { process.stdout.write(USAGE); return 0; }
  if (positionals.length > 1) throw new NinesError('NINES_ERR_INVALID_ARG', `nines watch takes at most one broker URL\n\n${USAGE}`);
  const url = positionals[0] || 'mqtt://127.0.0.1:1883';
  const refreshMs = parseDuration(values.refresh, '--refresh');
  const durationMs = values.duration === undefined ? undefined : parseDuration(values.duration, '--duration');
  const mqtt = require('mqtt');
  const { FleetView } = require('../measure/watch');
  const view = new FleetView();
  const client = mqtt.connect(url, { reconnectPeriod: 2000, connectTimeout: 5000 });
  const topic = `${values.prefix}/+/+/latency`;
  client.on('connect', () => client.subscribe(topic, { qos: 1 }));
  client.on('error', (err) => process.stderr.write(`nines watch: ${url}: ${err.message}\n`));
  client.on('message', (_t, payload) => view.add(payload));
  const tty = process.stdout.isTTY && !values.json;
  const timer = setInterval(() => {
    const rows = view.rows();
    if (values.json) { process.stdout.write(JSON.stringify({ at: new Date().toISOString(), gaps: view.gaps, rejected: view.rejected, rows }) + '\n'); return; }
    const text = `nines watch ${url} ${topic}  (seq gaps ${view.gaps}, rejected ${view.rejected})\nlatency in ms, gateways merged by adding histograms\n\n${rows.length ? renderTable(rows, { withGateway: true }) : 'waiting for latency summaries…'}\n`;
    process.stdout.write(tty ? '\x1b[H\x1b[2J' + text : text);
  }, refreshMs);
  await new Promise((resolve) => {
    const t = durationMs === undefined ? null : setTimeout(resolve, durationMs);
    process.once('SIGINT', () => { if (t) clearTimeout(t); resolve(); });
  });
  clearInterval(timer);
  await client.endAsync();
  return 0;
}

module.exports = { main, USAGE };
