'use strict';

const { parse } = require('./args');
const { parseDuration } = require('../base/quantities');
const { NinesError } = require('../base/errors');
const { renderTable, summaryLine } = require('./table');
const { CONFIG_WATCH_SETTLE_MS } = require('../runtime/config/defaults');

const USAGE = `Usage: nines run [config.yaml|config.json] [options]

Runs the gateway: polls the configured devices in worker threads at fixed rates, and publishes
latency summaries (p50 to p99.99 and max, with mergeable histograms) over MQTT under
<prefix>/<gateway>/<job>/latency. With no config: the demo (simulated ED-588, ED-560 and Modbus
devices, an embedded MQTT broker on 127.0.0.1:1883, example jobs) with a live percentile table.
Subscribe with: mosquitto_sub -h 127.0.0.1 -t 'nines/#' -v

Options:
  --duration <d>     stop after this long (e.g. 30s); default: until Ctrl-C
  --mqtt <url>       publish to this broker instead (demo) or override the config's mqtt.url
  --interval <d>     summary interval (overrides gateway.interval)
  --inline           poll on the main thread instead of worker threads (for comparison; its
                     1 ms timers hold about 800 req/s per connection: a job that sends less than
                     95 % of its rate in an interval is shown as FELL BEHIND, in worker mode too)
  --workers <n>      worker threads (default: cores - 1)
  --hlog <dir>       write each job's intervals as an HdrHistogram log (.hlog) in this directory
  --quiet            no live table (errors are still reported)
  --check            validate the config and exit
  --watch            reload the config when its file changes (as on SIGHUP), once it has not
                     changed for ${CONFIG_WATCH_SETTLE_MS / 1000} s (a file written in pieces is never applied half-written)

Reload: SIGHUP (or --watch) reloads the config file. Unchanged jobs go on without a gap; changed
and new jobs start, removed ones publish their last summary and stop. A config that is invalid, or
that changes mqtt, gateway.id, workers, mode, hlog, metrics or http (they apply at a restart), is
refused whole
and the running one goes on.
`;

/** @param {string[]} argv @returns {Promise<number>} */
async function main (argv) {
  const { values, positionals } = parse(argv, {
    duration: { type: 'string' },
    mqtt: { type: 'string' },
    interval: { type: 'string' },
    inline: { type: 'boolean', default: false },
    workers: { type: 'string' },
    hlog: { type: 'string' },
    quiet: { type: 'boolean', default: false },
    check: { type: 'boolean', default: false },
    watch: { type: 'boolean', default: false }
  }, USAGE);
  if (values.help) { process.stdout.write(USAGE); return 0; }
  if (positionals.length > 1) throw new NinesError('NINES_ERR_INVALID_ARG', `nines run takes at most one config file\n\n${USAGE}`);
  const durationMs = values.duration === undefined ? undefined : parseDuration(values.duration, '--duration');
  const say = (line) => process.stderr.write(line + '\n');
  const { loadConfig, validateConfig } = require('../runtime/config');

  let raw;
  let sims = [];
  let config;
  if (positionals[0]) {
    config = await loadConfig(positionals[0]);
    if (values.check) { process.stdout.write(`${positionals[0]}: valid (${config.jobs.length} jobs, ${Object.keys(config.devices).length} devices)\n`); return 0; }
  } else {
    if (values.check) throw new NinesError('NINES_ERR_INVALID_ARG', 'nines run --check needs a config file');
    // --mqtt replaces the embedded broker: say what will really happen
    const demo = require('./demo');
    // 1883 taken (a system broker): publish to that broker if it is open, else move the embedded one
    const broker = values.mqtt ? null : await demo.demoBroker({ say });
    if (broker !== null && 'url' in broker) values.mqtt = broker.url;
    say(`nines demo: no config given, starting simulators and ${values.mqtt ? `publishing to ${values.mqtt}` : 'an embedded MQTT broker'}`);
    ({ config: raw, sims } = await demo.startDemo({ say }));
    config = validateConfig(raw);
    if (broker !== null && 'embeddedPort' in broker) config.mqtt.embedded.port = broker.embeddedPort;
  }
  if (values.watch && !positionals[0]) throw new NinesError('NINES_ERR_INVALID_ARG', 'nines run --watch needs a config file');
  applyOverrides(config, values);

  const { Gateway } = require('../runtime/gateway');
  const gw = new Gateway(config, { mode: values.inline ? 'inline' : undefined });
  const tty = process.stdout.isTTY && !values.quiet;
  const errors = [];
  gw.on('broker', (b) => {
    say(`${b.embedded ? 'embedded MQTT broker' : 'MQTT broker'} ${b.url}, topics ${config.mqtt.prefix}/${config.gateway.id}/<job>/latency|value|error`);
    if (!b.embedded) return;
    // what the embedded broker lets in, said once at start (never the password)
    const where = b.loopback ? `listening on ${b.host} (this machine only)` : `listening on ${b.host}, reachable from the network`;
    const login = b.login === null
      ? 'no login: any local client may connect and subscribe'
      : `clients must log in as "${b.login}" (password from ${b.passwordSource === 'env' ? 'NINES_MQTT_EMBEDDED_PASSWORD' : 'mqtt.embedded.password'})`;
    say(`embedded broker: ${where}; ${login}; only this gateway may publish under ${b.prefix}/ and use its client id; a connected client id cannot be taken over`);
  });
  gw.on('listening', (l) => say(`${l.what} ${l.url}${l.login ? ` (login ${l.login})` : ''}`));
  gw.on('broker-refused', (r) => say(`${new Date().toISOString()} embedded broker ${r.message}${r.repeated ? ` (and ${r.repeated} more like it in the last 10 s)` : ''}`));
  gw.on('job-error', (job, err) => {
    const line = `${new Date().toISOString()} ${job || 'gateway'}: ${err.code || 'error'}: ${err.message}${err.details && err.details.repeated ? ` (×${err.details.repeated} more)` : ''}`;
    errors.push(line);
    if (errors.length > 5) errors.shift();
    if (!tty) say(line);
  });
  gw.on('worker-exit', (info) => say(`worker ${info.worker} exited (code ${info.code}); restarting ${info.jobs.join(', ')} in ${info.restartInMs} ms`));
  let redraw = null;
  gw.on('summary', (job, payload) => {
    if (values.quiet) return;
    if (!tty) { process.stdout.write(summaryLine(payload) + '\n'); return; }
    // redraw once per interval, after the burst of summaries of that interval
    if (!redraw) redraw = setTimeout(() => { redraw = null; draw(); }, 50);
  });
  const started = Date.now();
  function draw () {
    const rows = config.jobs.map((j) => gw.latest.get(j.name)).filter(Boolean);
    const stats = gw.publisher ? gw.publisher.stats : {};
    process.stdout.write('\x1b[H\x1b[2J' +
      `nines gateway "${config.gateway.id}"  ${gw.mode} mode  up ${Math.round((Date.now() - started) / 1000)}s  ` +
      `mqtt ${stats.connected ? 'connected' : 'DISCONNECTED'} (published ${stats.published || 0}, buffered ${stats.buffered || 0}, dropped ${stats.dropped || 0})\n` +
      `latency in ms over the last ${config.gateway.intervalMs / 1000}s, measured from each request's intended send time\n\n` +
      renderTable(rows) + '\n' +
      (rows.some((p) => p.fellBehind) ? 'FELL BEHIND: the job sent less than 95 % of its rate over the interval (device too slow for its connections, or this machine too busy)\n' : '') +
      '\n' + (errors.length ? 'recent errors:\n' + errors.join('\n') + '\n' : '') + 'Ctrl-C to stop\n');
  }

  let stopping = false;
  let finish;
  const finished = new Promise((resolve) => { finish = resolve; });
  const shutdown = (why) => {
    if (stopping) return;
    stopping = true;
    if (why) say(why);
    finish();
  };
  const onSignal = (sig) => {
    if (stopping) { say('second signal: exiting now'); process.exit(130); }
    shutdown(`${sig}: stopping (last interval flushed, status offline)`);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // reloads: SIGHUP, and with --watch a change of the file; one at a time, the last one wins
  const reload = async (why) => {
    if (stopping) return;
    if (!positionals[0]) { say(`${why}: the demo has no config file to reload`); return; }
    try {
      const next = await loadConfig(positionals[0]);
      applyOverrides(next, values);
      const r = await gw.reload(next);
      config = next;
      const list = (names) => (names.length ? ` (${names.join(', ')})` : '');
      say(`${why}: config reloaded: ${r.kept.length} jobs unchanged, ${r.changed.length} changed${list(r.changed)}, ${r.added.length} added${list(r.added)}, ${r.removed.length} removed${list(r.removed)}`);
    } catch (err) {
      say(`${why}: config not reloaded, the running one goes on: ${err.code ? `${err.code}: ` : ''}${err.message}`);
    }
  };
  const onHup = () => { reload('SIGHUP'); };
  process.on('SIGHUP', onHup);
  const watcher = values.watch && positionals[0]
    ? require('./config-watcher').watchConfigFile(positionals[0], {
      onSettled: () => { reload('config file changed'); },
      onProblem: (err) => say(`config file: ${err.code}: ${err.message}; the running config goes on`)
    })
    : null;
  // Fault drills (test/faults): with NINES_FAULT_DRILLS=1, SIGUSR2 ends worker 0 abruptly, as a
  // crash would; it is reported and restarted with its jobs. Off unless asked for.
  const onDrill = () => { if (gw.pool) gw.pool.killWorker(0).catch(() => {}); };
  if (process.env.NINES_FAULT_DRILLS === '1') process.on('SIGUSR2', onDrill);
  try {
    await gw.start();
    if (!values.quiet) say(`${config.jobs.length} jobs running in ${gw.mode} mode; summaries every ${config.gateway.intervalMs / 1000}s`);
    gw.on('end', () => { if (gw.allEnded) shutdown('all jobs finished'); });
    const timer = durationMs === undefined ? null : setTimeout(() => shutdown(), durationMs);
    await finished;
    if (timer) clearTimeout(timer);
  } finally {
    if (redraw) clearTimeout(redraw);
    await gw.stop().catch((err) => say(`stop: ${err.message}`));
    await Promise.allSettled(sims.map((s) => s.close()));
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    process.removeListener('SIGHUP', onHup);
    if (watcher) watcher.close();
    process.removeListener('SIGUSR2', onDrill);
  }
  return 0;
}

/** The command line's overrides of a config (also applied to each reloaded one). */
function applyOverrides (config, values) {
  if (values.mqtt) config.mqtt = { ...config.mqtt, url: values.mqtt, embedded: null };
  if (values.interval) config.gateway.intervalMs = parseDuration(values.interval, '--interval');
  if (values.hlog) config.gateway.hlog = require('node:path').resolve(values.hlog);
  if (values.workers) {
    const n = Number(values.workers);
    if (!Number.isInteger(n) || n < 1) throw new NinesError('NINES_ERR_INVALID_ARG', `--workers must be a whole number ≥ 1; got "${values.workers}"`);
    config.gateway.workers = n;
  }
}

module.exports = { main, USAGE };
