'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { parse, intList, posInt, countOrText, oneOp, flagErrors, OP_OPTIONS } = require('./args');
const { parseDuration } = require('../base/quantities');
const { NinesError } = require('../base/errors');
const { errorLines } = require('../latency/outcome');

const USAGE = `Usage: nines sweep <target> (--command CMD | --generator NAME | --read FC:ADDR:QTY) [options]

Offered-load sweep: hold each offered rate for a step, measure every request from its intended send
time, and report per step the achieved rate, min/mean/p50/p99/p99.9/max (ms), errors, the sweep's
own lateness (own p99: the dispatch lag, from when a request was due to go to its send, the error
the sweep itself adds), and the saturation point (achieved < 95 % of offered, or p99 more than
doubling). A step with failures is followed by its failures per error code, each with a sample
message.

Options:
  --rates <list>     offered rates in requests/s (default 100,500,1000,2000)
  --step <d>         how long each step lasts (default 5s)
  --workers <n>      connections (default 20; fewer are used at low rates, at least 10 req/s each)
  --timeout <d>      per-request timeout (default 1s)
  --policy <p>       catch-up after a stall: burst (default: the full offered load), capped, skip
  --precision <p>    how each send waits for its intended time: spin (default: the last 100-200 µs
                     spun, a few µs late, for CPU) or sleep (no spinning, 30-110 µs late at p50)
  --warmup <n>       requests sent first and not recorded (default 0): a closed loop on every
                     connection, then 0.3 s at 200/s, then up to n again paced at half the rate
                     the loop achieved: at least a second, and 10,000 if they take at most 5 s
                     (so V8 has compiled the pacing before the first step; 10000 is a good value)
  --main-thread      run on the main thread, for comparison: a sweep runs in a worker thread of
                     its own, since on the main thread its sends go late (own p99 0.14-0.20 ms
                     spinning, 1.1 ms sleeping, against 0.015-0.14 ms in the worker), and the
                     sweep would count that as the device's
  --hgrm <dir>       write each step's percentile distribution as it ends, named like
                     sweep-fc3-0+10-1000-per-s.hgrm (for nines plot)
  --json             print JSON (each step's response-time histogram in "hist": HdrHistogram V2,
                     compressed, base64, ns)
`;

/** @param {string[]} argv @returns {Promise<number>} */
async function main (argv) {
  const { values, positionals } = parse(argv, {
    ...OP_OPTIONS,
    rates: { type: 'string', default: '100,500,1000,2000' },
    step: { type: 'string', default: '5s' },
    workers: { type: 'string', default: '20' },
    timeout: { type: 'string' },
    policy: { type: 'string', default: 'burst' },
    precision: { type: 'string' },
    warmup: { type: 'string' },
    'main-thread': { type: 'boolean', default: false },
    hgrm: { type: 'string' },
    json: { type: 'boolean', default: false }
  }, USAGE);
  if (values.help) { process.stdout.write(USAGE); return 0; }
  if (positionals.length !== 1) throw new NinesError('NINES_ERR_INVALID_ARG', `nines sweep takes one target URL\n\n${USAGE}`);
  oneOp(values, 'sweep');
  // each rate is read by the job-spec builder, as a job's rate in the gateway config is
  const rates = values.rates.split(',').map((s) => s.trim());
  intList(values.workers, 'workers');
  // not setMeasuringFlags() (v8-flags.js): a sweep's warm-up is paced at its first rate, and the
  // paths its later steps first run were then compiled inside those steps. A sweep of 100, 35,200
  // and 39,700/s, one core beside the C server, 3 interleaved rounds: p99 at 35,200/s 2.0-5.1 ms
  // without the setting, 4.4-18.8 ms with it
  const { runSweep } = require('../measure/sweep');
  const run = flagErrors(() => runSweep({
    target: positionals[0],
    command: values.command,
    generator: values.generator,
    read: values.read,
    write: values.write,
    rates,
    stepMs: parseDuration(values.step, '--step'),
    workers: posInt(values.workers, 'workers', 1024),
    timeoutMs: values.timeout,
    policy: values.policy,
    precision: values.precision,
    warmup: values.warmup === undefined ? 0 : countOrText(values.warmup),
    inWorker: !values['main-thread']
  }), { ratePerSec: '--rates', timeoutMs: '--timeout', precision: '--precision', warmup: '--warmup' });
  if (!values.json) {
    process.stdout.write(header() + '\n');
    run.on('step', (s) => process.stdout.write([row(s), ...errorLines(s.errorsByCode, ' '.repeat(11))].join('\n') + '\n'));
  }
  // each step's file is written as the step ends: a sweep stopped midway keeps the steps it finished
  const written = [];
  if (values.hgrm !== undefined) {
    fs.mkdirSync(values.hgrm, { recursive: true });
    const { toHgrm } = require('../latency');
    const { fileStem } = require('../measure/probe');
    run.on('step', (s) => {
      const file = path.join(values.hgrm, `${fileStem(`sweep-${s.label}-${s.offered}-per-s`)}.hgrm`);
      fs.writeFileSync(file, toHgrm(s.histogram));
      written.push(file);
    });
  }
  process.once('SIGINT', () => run.stop());
  const result = await run.promise;
  if (values.json) {
    const strip = (s) => (s ? { ...s, histogram: undefined } : s);
    process.stdout.write(JSON.stringify({ steps: result.steps.map(strip), saturation: strip(result.saturation), files: written }, null, 2) + '\n');
  } else {
    for (const f of written) process.stdout.write(`wrote ${f}\n`);
    process.stdout.write(result.saturation
      ? `saturation at ${result.saturation.offered}/s offered (achieved ${result.saturation.achieved.toFixed(0)}/s, p99 ${fmt(result.saturation.p99)} ms)\n`
      : 'no saturation within the offered rates\n');
  }
  return 0;
}

const COLS = ['offered/s', 'achieved/s', 'conns', 'min', 'mean', 'p50', 'p99', 'p99.9', 'max', 'errors', 'timeouts', 'unsent', 'own p99'];
function header () { return COLS.map((c) => c.padStart(10)).join(' '); }
function row (s) {
  return [String(s.offered), s.achieved.toFixed(0), String(s.workers), fmt(s.min), fmt(s.mean), fmt(s.p50), fmt(s.p99), fmt(s.p99_9), fmt(s.max), String(s.errors), String(s.timeouts), String(s.unsent), fmt(s.lag && s.lag.p99)]
    .map((c) => c.padStart(10)).join(' ');
}
function fmt (v) { return v === null || v === undefined ? '-' : Number(v).toFixed(3); }

module.exports = { main, USAGE };
