'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { parse, intList, posInt, countOrText, OP_OPTIONS, oneOp, flagErrors, readOptionFiles } = require('./args');
const { parseDuration } = require('../base/quantities');
const { NinesError } = require('../base/errors');
const { errorLines } = require('../latency/outcome');

/** Exit statuses besides 0 (done) and 1 (invalid arguments, or the probe could not run) */
const EXIT_NO_SUCCESS = 2;
const EXIT_FELL_BEHIND = 3;

const USAGE = `Usage: nines probe <target> (--command CMD | --generator NAME | --read FC:ADDR:QTY | --write OP) [options]

Latency test in the style of the Brainboxes tests: for each connection count, open that many
connections, send --count requests split over them (each connection strictly one at a time) and
print one row per run: mean, p50, p99, p99.9, p99.99 and max in ms, with errors and timeouts,
and below the table the failures per error code with a sample message.

Targets:  ascii://127.0.0.1:9500   modbus+tcp://127.0.0.1:5020?unitId=1
          modbus+tls://10.0.4.7:802?unitId=1 (Modbus/TCP Security: --ca, --cert, --key)
          modbus+rtu:///dev/ttyUSB0?baudRate=19200&parity=even&unitId=1
          modbus+rtutcp://10.0.0.9:4001?unitId=1 (RTU frames through a serial server)
Operations:
  --command <cmd>       ASCII command, e.g. @01, '#010', '$01M'
  --generator <name>    vendor latency-test commands: @AA, @AA(Data), #AAN (ED-588 and other
                        digital models); #AA1N0F, #AA1NVVData (ED-560). A generator the device's
                        model refuses is an error before the run
  --read <fc:addr:qty>  Modbus read, e.g. 3:0:10 (FC3, address 0, 10 registers)
  --write <op>          Modbus write, e.g. 6:10=123, 16:0=1,2,3, 5:3=on
Options:
  --connections <list>  connection counts, one run each (default 1; the vendor uses 1,2,4,8)
  --inflight <list>     requests in flight per connection, one run each per connection count
                        (default 1; above 1 pipelines on Modbus TCP only: each connection carries
                        that many requests at once, replies matched by transaction id). A device
                        that takes one at a time makes the client fall back to 1, and the table says so
  --count <n>           requests per run (default 10000 unless --duration is given)
  --duration <d>        run length instead of a count, e.g. 10s
  --rate <r>            max (closed loop, default) or a fixed rate such as 1000/s (runs in a
                        worker thread); a run that achieves < 95 % of it is marked "fell behind"
  --policy <p>          catch-up after a stall at a fixed rate: capped (default), burst, skip
  --precision <p>       how each send waits for its intended time at a fixed rate: spin (default:
                        sleeps most of the gap and spins the last 100-200 µs, a few µs late, for CPU)
                        or sleep (no spinning, 30-110 µs late at p50 in a worker thread)
  --timeout <d>         per-request timeout (default 1s)
  --warmup <n>          requests per run sent first and not recorded (default 0); at a fixed
                        rate all of them in a closed loop, then up to n again paced: at least a
                        second, and 10,000 if they take at most 5 s (so V8 has compiled the
                        pacing before the run; at 5,000/s and above give at least 10000, and
                        near the device's capacity enough for a second paced, e.g. 40000)
  --hgrm <dir>          write one .hgrm per run, named like ED-588-@AA-1x.hgrm
  --progress <d>        on a terminal, count the requests done every <d> (at least 100ms), e.g. 1s.
                        Off by default: each count wakes this process's main thread, which on one
                        core takes the CPU from the probe (at 10,000/s on one core, one a second
                        raised p99.9 from 89-102 µs to 146-223 µs)
  --json                print the results as JSON instead of a table
  --worker              run in a worker thread (the default at a fixed rate; with max, too)
  --main-thread         run on the main thread even at a fixed rate, for comparison: its 1 ms
                        timers hold only about 800 req/s per connection
  --reconnect-each      open a new connection for every request, to see what that costs
  --ca <file>           modbus+tls: the PEM CA that signs the device's certificate (always verified)
  --cert <file>         modbus+tls: the client certificate (PEM; it carries the role), with --key
  --key <file>          modbus+tls: its private key (PEM)
  --servername <name>   modbus+tls: the name the device's certificate carries, when dialling an address

Exit status: 0 every run done and held its rate; 1 invalid arguments, or the probe could not run;
2 a run got no successful reply; 3 a fixed-rate run fell behind (achieved < 95 % of --rate).
`;

/** @param {string[]} argv @returns {Promise<number>} */
async function main (argv) {
  const { values, positionals } = parse(argv, {
    ...OP_OPTIONS,
    connections: { type: 'string', default: '1' },
    inflight: { type: 'string', default: '1' },
    count: { type: 'string' },
    duration: { type: 'string' },
    rate: { type: 'string' },
    policy: { type: 'string', default: 'capped' },
    precision: { type: 'string' },
    timeout: { type: 'string' },
    warmup: { type: 'string' },
    hgrm: { type: 'string' },
    json: { type: 'boolean', default: false },
    progress: { type: 'string' },
    worker: { type: 'boolean', default: false },
    'main-thread': { type: 'boolean', default: false },
    'reconnect-each': { type: 'boolean', default: false },
    ca: { type: 'string' },
    cert: { type: 'string' },
    key: { type: 'string' },
    servername: { type: 'string' }
  }, USAGE);
  if (values.help) { process.stdout.write(USAGE); return 0; }
  if (positionals.length !== 1) throw new NinesError('NINES_ERR_INVALID_ARG', `nines probe takes one target URL; got ${positionals.length}\n\n${USAGE}`);
  oneOp(values, 'probe');
  if (values.worker && values['main-thread']) throw new NinesError('NINES_ERR_INVALID_ARG', 'give --worker or --main-thread, not both');
  // a measuring process: V8 compiles the request path during the warm-up, not while measured
  require('../base/v8-flags').setMeasuringFlags();
  const { runProbe, progressInterval } = require('../measure/probe');
  const tty = process.stderr.isTTY && !values.json;
  // checked even where nothing would show it
  const pace = values.progress === undefined ? 0 : progressInterval(values.progress, '--progress');
  const opts = {
    target: positionals[0],
    command: values.command,
    generator: values.generator,
    read: values.read,
    write: values.write,
    connections: intList(values.connections, 'connections'),
    inflight: intList(values.inflight, 'inflight'),
    count: posInt(values.count, 'count'),
    durationMs: values.duration === undefined ? undefined : parseDuration(values.duration, '--duration'),
    // read, defaulted and checked by the job-spec builder, as a job's in the gateway config are
    ratePerSec: values.rate,
    policy: values.policy,
    precision: values.precision,
    timeoutMs: values.timeout,
    warmup: values.warmup === undefined ? 0 : countOrText(values.warmup),
    // counted only when asked for, and where someone watches (a terminal): see --progress
    progressMs: tty ? pace : 0,
    // a fixed rate runs in a worker unless told otherwise (runProbe's default); --worker moves closed loop there too
    inWorker: values.worker ? true : (values['main-thread'] ? false : undefined),
    reconnectEach: values['reconnect-each']
  };
  // Modbus/TCP Security: the files are read here, the PEM checked by the probe (drivers/tls-options.js)
  const tls = readOptionFiles(values, ['ca', 'cert', 'key']);
  if (values.servername !== undefined) tls.servername = values.servername;
  if (Object.keys(tls).length !== 0) opts.tls = tls;
  if (opts.count === undefined && opts.durationMs === undefined) opts.count = 10000;
  if (opts.count !== undefined && opts.durationMs !== undefined) {
    throw new NinesError('NINES_ERR_INVALID_ARG', 'give --count or --duration, not both');
  }
  if (values.hgrm) fs.mkdirSync(values.hgrm, { recursive: true });

  const run = flagErrors(() => runProbe(opts), { ratePerSec: '--rate', timeoutMs: '--timeout', precision: '--precision' });
  if (tty) {
    run.on('progress', (p) => {
      const lanes = `${p.connections}x${p.inflight > 1 ? ` ×${p.inflight} in flight` : ''}`;
      // as a run starts, without --progress: what runs, and nothing more until it ends
      if (p.done === 0 && opts.progressMs === 0) {
        process.stderr.write(`\r  ${lanes}: running${p.total ? ` ${p.total} requests` : ''}…   `);
        return;
      }
      const of = p.total ? `/${p.total} (${Math.floor(100 * p.done / p.total)}%)` : ` in ${(p.elapsedMs / 1000).toFixed(1)}s`;
      process.stderr.write(`\r  ${lanes}: ${p.done}${of}   `);
    });
  }
  const stopOnSignal = () => run.stop();
  process.once('SIGINT', stopOnSignal);
  let result;
  try {
    result = await run.promise;
  } finally {
    process.removeListener('SIGINT', stopOnSignal);
    if (tty) process.stderr.write('\r\x1b[K');
  }
  const written = [];
  if (values.hgrm) {
    for (const r of result.runs) {
      const file = path.join(values.hgrm, `${r.name}.hgrm`);
      fs.writeFileSync(file, r.hgrm);
      written.push(file);
    }
  }
  if (values.json) {
    process.stdout.write(JSON.stringify({ target: String(positionals[0]), runs: result.runs.map(({ hgrm, ...r }) => r), files: written }, null, 2) + '\n');
  } else {
    process.stdout.write(formatTable(result.runs) + '\n');
    for (const f of written) process.stdout.write(`wrote ${f}\n`);
  }
  if (result.runs.some((r) => r.ok === 0)) return EXIT_NO_SUCCESS;
  return result.runs.some((r) => r.fellBehind) ? EXIT_FELL_BEHIND : 0;
}

/**
 * The Brainboxes table: one row per run, latencies in ms.
 * @param {Array<object>} runs ProbeRunResult[]
 * @returns {string}
 */
function formatTable (runs) {
  const pipelined = runs.some((r) => r.inflight > 1);
  const head = ['conns', ...(pipelined ? ['inflight'] : []), 'count', 'req/s', 'mean', 'p50', 'p99', 'p99.9', 'p99.99', 'max', 'errors', 'timeouts'];
  const behind = runs.some((r) => r.fellBehind);
  if (behind) head.push('rate');
  // "16→1": asked for 16 in flight, the device took one at a time and the client fell back
  const inflight = (r) => (r.inflightEffective < r.inflight ? `${r.inflight}→${r.inflightEffective}` : String(r.inflight));
  const rows = runs.map((r) => {
    const row = [
      String(r.connections), ...(pipelined ? [inflight(r)] : []), String(r.ok + r.errors + r.timeouts), r.ratePerSec.toFixed(0),
      ms(r.summary.mean), ms(r.summary.p50), ms(r.summary.p99), ms(r.summary.p99_9), ms(r.summary.p99_99), ms(r.summary.max),
      String(r.errors), String(r.timeouts)
    ];
    if (behind) row.push(r.fellBehind ? 'FELL BEHIND' : 'held');
    return row;
  });
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells) => cells.map((c, i) => c.padStart(widths[i])).join('  ');
  const first = runs[0];
  const how = first ? [first.policy, first.offered ? `${first.offered}/s offered` : null, first.reconnectEach ? 'a new connection per request' : null].filter(Boolean).join(', ') : '';
  const title = first ? `${first.model} ${first.label} (${how}), latency in ms` : 'no runs';
  const notes = [];
  for (const r of runs) {
    // the instrument's own error beside its figures: how late the probe itself sent (design.md)
    if (r.offered && r.lag && typeof r.lag.p99 === 'number') {
      notes.push(`${r.connections}x${r.inflight > 1 ? ` ×${r.inflight}` : ''} the probe's own lateness (dispatch lag, precision ${r.precision}): p50 ${ms(r.lag.p50)}, p99 ${ms(r.lag.p99)}, max ${ms(r.lag.max)} ms${typeof r.cpuPct === 'number' ? `; CPU ${r.cpuPct.toFixed(1)} % of a core` : ''}`);
    }
    if (r.inflightEffective < r.inflight) {
      notes.push(`${r.connections}x ×${r.inflight}: the device did not serve pipelined requests (NINES_ERR_PIPELINE_UNSUPPORTED); the client fell back to ${r.inflightEffective} in flight, and the requests it dropped count as timeouts.`);
    }
    if (r.fellBehind) {
      notes.push(`${r.connections}x fell behind: achieved ${r.ratePerSec.toFixed(0)}/s of ${r.offered}/s offered (< 95 %)${r.thread === 'main' ? ' on the main thread, whose timers hold about 800 req/s per connection (drop --main-thread)' : ''}; ` +
        'its latencies are those of a slower test. Give more connections or a lower --rate.');
    }
    const lines = errorLines(r.errorsByCode, '  ');
    if (lines.length) notes.push(`${r.connections}x failures by code:`, ...lines);
  }
  return [title, line(head), ...rows.map(line), ...notes].join('\n');
}

function ms (v) {
  return v === null || v === undefined ? '-' : Number(v).toFixed(3);
}

module.exports = { main, USAGE, formatTable, EXIT_NO_SUCCESS, EXIT_FELL_BEHIND };
