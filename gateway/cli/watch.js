'use strict';

const { parse } = require('./args');
const { NinesError } = require('../base/errors');
const { parseDuration } = require('../base/quantities');
const { Backoff } = require('../base/backoff');
const { renderTable, rowLine } = require('./table');

const USAGE = `Usage: nines watch [mqtt-url] [options]

Subscribes to <prefix>/+/+/latency and shows a live table: one row per job, the latest interval of
every gateway running it merged by adding histograms (percentiles are never averaged). "lag p99" is
the highest of the gateways' dispatch-lag p99. Broker URLs: mqtt://, mqtts://, tcp://, ssl://, ws://,
wss:// (default mqtt://127.0.0.1:1883). When the broker cannot be reached it retries with a growing
delay (up to 30 s) and says so once per kind of error. Redirected to a file or a pipe, it prints
one line per new summary instead of redrawing the table.

Options:
  --prefix <p>       topic prefix (default nines)
  --refresh <d>      redraw period (default 1s)
  --duration <d>     stop after this long
  --json             print the merged table as one JSON line whenever a summary arrived
`;

/** Reconnect delays: first and longest, ms (jittered, capped exponential) */
const RECONNECT_INITIAL_MS = 500;
const RECONNECT_MAX_MS = 30000;

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
  const stop = new AbortController();
  const onSigint = () => stop.abort();
  process.once('SIGINT', onSigint);
  try {
    return await runWatch({
      url: positionals[0],
      prefix: values.prefix,
      refreshMs: parseDuration(values.refresh, '--refresh'),
      durationMs: values.duration === undefined ? undefined : parseDuration(values.duration, '--duration'),
      json: values.json,
      signal: stop.signal
    });
  } finally {
    process.removeListener('SIGINT', onSigint);
  }
}

/**
 * The watch itself, with its outputs and clock injectable (tests).
 * @param {object} o
 * @param {string} [o.url='mqtt://127.0.0.1:1883'] broker URL (MQTT schemes only)
 * @param {string} [o.prefix='nines']
 * @param {number} [o.refreshMs=1000]
 * @param {number} [o.durationMs] stop after this long; default: until the signal
 * @param {boolean} [o.json=false]
 * @param {AbortSignal} [o.signal] stops the watch
 * @param {{write: (s: string) => any, isTTY?: boolean}} [o.stdout=process.stdout]
 * @param {{write: (s: string) => any}} [o.stderr=process.stderr]
 * @param {object} [o.view] FleetView options (bounds)
 * @param {{initialMs?: number, maxMs?: number, random?: () => number}} [o.backoff] reconnect delays
 * @returns {Promise<number>} exit code
 * @throws {NinesError} NINES_ERR_INVALID_ARG for a URL that is not an MQTT broker URL
 */
async function runWatch (o) {
  const { parseBrokerUrl } = require('../runtime/mqtt/broker-url');
  const broker = parseBrokerUrl(o.url === undefined ? 'mqtt://127.0.0.1:1883' : o.url, 'broker URL');
  const url = broker.url;
  const prefix = o.prefix || 'nines';
  const refreshMs = o.refreshMs || 1000;
  const stdout = o.stdout || process.stdout;
  const stderr = o.stderr || process.stderr;
  const mqtt = require('mqtt');
  const { FleetView } = require('../measure/watch');
  const view = new FleetView(o.view);
  const topic = `${prefix}/+/+/latency`;
  const tty = stdout.isTTY === true && !o.json;
  const backoff = new Backoff({ initialMs: RECONNECT_INITIAL_MS, maxMs: RECONNECT_MAX_MS, ...o.backoff });

  // Broker errors: coded, and said once per change (a broker down for an hour is one line, not 1,800)
  let lastError = null;
  const reportError = (err) => {
    const e = new NinesError('NINES_ERR_MQTT', `${url}: ${err.message}`, { url, cause: err.code });
    const key = `${e.details.cause}|${err.message}`;
    if (key === lastError) return;
    lastError = key;
    stderr.write(`nines watch: ${e.code}: ${e.message} (retrying with backoff up to ${backoff.maxMs / 1000} s)\n`);
  };

  const client = mqtt.connect(url, { reconnectPeriod: 0, connectTimeout: 5000 });
  let stopped = false;
  let retry = null;
  let up = false; // this connection got its CONNACK
  let failed = false; // this attempt already reported an error
  client.on('connect', () => {
    backoff.reset();
    if (lastError !== null) stderr.write(`nines watch: connected to ${url}\n`);
    lastError = null;
    up = true;
    client.subscribe(topic, { qos: 1 });
  });
  client.on('error', (err) => { failed = true; reportError(err); });
  client.on('close', () => {
    if (stopped || retry) return;
    // a broker that drops the connection says nothing else: that is an error too
    if (!failed) reportError({ message: up ? 'connection lost' : 'connection closed before the broker accepted it', code: 'ECONNRESET' });
    up = failed = false;
    retry = setTimeout(() => { retry = null; if (!stopped) client.reconnect(); }, backoff.next());
  });
  client.on('message', (_t, payload) => view.add(payload));

  // Output: a redrawn screen on a terminal; otherwise only what is new (a log or a pipe)
  const printed = new Map(); // job → updates already printed
  let lastCounters = '';
  let said = false;
  const draw = () => {
    const rows = view.rows();
    const fresh = rows.filter((r) => printed.get(r.job) !== r.updates);
    for (const r of fresh) printed.set(r.job, r.updates);
    const counters = `seq gaps ${view.gaps}, resyncs ${view.resyncs}, rejected ${view.rejected}, evicted ${view.evicted}`;
    if (o.json) {
      if (fresh.length) stdout.write(JSON.stringify({ at: new Date().toISOString(), gaps: view.gaps, resyncs: view.resyncs, rejected: view.rejected, evicted: view.evicted, rows }) + '\n');
      return;
    }
    if (tty) {
      stdout.write('\x1b[H\x1b[2J' + `nines watch ${url} ${topic}  (${counters})\nlatency in ms, gateways merged by adding histograms\n\n` +
        `${rows.length ? renderTable(rows, { withGateway: true }) : 'waiting for latency summaries…'}\n`);
      return;
    }
    if (!said) {
      said = true;
      stdout.write(`# nines watch ${url} ${topic}: one line per new merged interval, latency in ms\n`);
    }
    const at = new Date().toISOString();
    for (const r of fresh) stdout.write(`${at} ${rowLine(r)}\n`);
    if (counters !== lastCounters && (view.gaps || view.resyncs || view.rejected || view.evicted)) stdout.write(`${at} ${counters}\n`);
    lastCounters = counters;
  };
  const timer = setInterval(draw, refreshMs);
  await new Promise((resolve) => {
    const t = o.durationMs === undefined ? null : setTimeout(done, o.durationMs);
    function done () {
      if (t) clearTimeout(t);
      if (o.signal) o.signal.removeEventListener('abort', done);
      resolve();
    }
    if (o.signal) {
      if (o.signal.aborted) done();
      else o.signal.addEventListener('abort', done, { once: true });
    }
  });
  stopped = true;
  clearInterval(timer);
  if (retry) clearTimeout(retry);
  draw();
  await client.endAsync(true);
  return 0;
}

module.exports = { main, runWatch, USAGE };
