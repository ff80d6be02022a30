'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { parse, intList, posInt, OP_OPTIONS } = require('./args');
const { parseDuration, parseRate } = require('../base/units');
const { NinesError } = require('../base/errors');

const USAGE = `Usage: nines probe <target> (--command CMD | --generator NAME | --read FC:ADDR:QTY | --write OP) [options]

Latency test in the style of the Brainboxes tests: for each connection count, open that many
connections, send --count requests split over them (each connection strictly one at a time) and
print one row per run: mean, p50, p99, p99.9, p99.99 and max in ms, with errors and timeouts.

Targets:  ascii://127.0.0.1:9500   modbus+tcp://127.0.0.1:5020?unitId=1
          modbus+rtu:///dev/ttyUSB0?baudRate=19200&parity=even&unitId=1
Operations:
  --command <cmd>       ASCII command, e.g. @01, '#010', '$01M'
  --generator <name>    vendor latency-test commands: @AA, @AA(Data), #AAN, #AA1N0F, #AA1NVVData
  --read <fc:addr:qty>  Modbus read, e.g. 3:0:10 (FC3, address 0, 10 registers)
  --write <op>          Modbus write, e.g. 6:10=123, 16:0=1,2,3, 5:3=on
Options:
  --connections <list>  connection counts, one run each (default 1; the vendor uses 1,2,4,8)
  --count <n>           requests per run (default 10000 unless --duration is given)
  --duration <d>        run length instead of a count, e.g. 10s
  --rate <r>            max (closed loop, default) or a fixed rate such as 1000/s
  --policy <p>          catch-up after a stall at a fixed rate: capped (default), burst, skip
  --timeout <d>         per-request timeout (default 1s)
  --warmup <n>          requests per run sent first and not recorded (default 0)
  --hgrm <dir>          write one .hgrm per run, named like ED-588-@AA-1x.hgrm
  --json                print the results as JSON instead of a table
  --worker              run the probe in a worker thread
  --reconnect-each      open a new connection for every request, to see what that costs
`;

/** @param {string[]} argv @returns {Promise<number>} */
async function main (argv) {
  const { values, positionals } = parse(argv, {
    ...OP_OPTIONS,
    connections: { type: 'string', default: '1' },
    count: { type: 'string' },
    duration: { type: 'string' },
    rate: { type: 'string', default: 'max' },
    policy: { type: 'string', default: 'capped' },
    timeout: { type: 'string', default: '1s' },
    warmup: { type: 'string' },
    hgrm: { type: 'string' },
    json: { type: 'boolean', default: false },
    worker: { type: 'boolean', default: false },
    'reconnect-each': { type: 'boolean', default: false }
  }, USAGE);
  if (values.help) { process.stdout.write(USAGE); return 0; }
  if (positionals.length !== 1) throw new NinesError('NINES_ERR_INVALID_ARG', `nines probe takes one target URL; got ${positionals.length}\n\n${USAGE}`);
  const opts = {
    target: positionals[0],
    command: values.command,
    generator: values.generator,
    read: values.read,
    write: values.write,
    connections: intList(values.connections, 'connections'),
    count: posInt(values.count, 'count'),
    durationMs: values.duration === undefined ? undefined : parseDuration(values.duration, '--duration'),
    ratePerSec: parseRate(values.rate, '--rate'),
    policy: values.policy,
    timeoutMs: parseDuration(values.timeout, '--timeout'),
    warmup: values.warmup === undefined ? 0 : Number(values.warmup),
    inWorker: values.worker,
    reconnectEach: values['reconnect-each']
  };
  if (opts.count === undefined && opts.durationMs === undefined) opts.count = 10000;
  if (opts.count !== undefined && opts.durationMs !== undefined) {
    throw new NinesError('NINES_ERR_INVALID_ARG', 'give --count or --duration, not both');
  }
  if (values.hgrm) fs.mkdirSync(values.hgrm, { recursive: true });

  const { runProbe } = require('../measure/probe');
  const run = runProbe(opts);
  const tty = process.stderr.isTTY && !values.json;
  if (tty) {
    run.on('progress', (p) => {
      const of = p.total ? `/${p.total} (${Math.floor(100 * p.done / p.total)}%)` : ` in ${(p.elapsedMs / 1000).toFixed(1)}s`;
      process.stderr.write(`\r  ${p.connections}x: ${p.done}${of}   `);
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
  return result.runs.some((r) => r.ok === 0) ? 2 : 0;
}

/**
 * The Brainboxes table: one row per run, latencies in ms.
 * @param {Array<object>} runs ProbeRunResult[]
 * @returns {string}
 */
function formatTable (runs) {
  const head = ['conns', 'count', 'req/s', 'mean', 'p50', 'p99', 'p99.9', 'p99.99', 'max', 'errors', 'timeouts'];
  const rows = runs.map((r) => [
    String(r.connections), String(r.ok + r.errors + r.timeouts), r.ratePerSec.toFixed(0),
    ms(r.summary.mean), ms(r.summary.p50), ms(r.summary.p99), ms(r.summary.p99_9), ms(r.summary.p99_99), ms(r.summary.max),
    String(r.errors), String(r.timeouts)
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells) => cells.map((c, i) => c.padStart(widths[i])).join('  ');
  const title = runs.length ? `${runs[0].model} ${runs[0].label} (${runs[0].policy}${runs[0].reconnectEach ? ', a new connection per request' : ''}), latency in ms` : 'no runs';
  return [title, line(head), ...rows.map(line)].join('\n');
}

function ms (v) {
  return v === null || v === undefined ? '-' : Number(v).toFixed(3);
}

module.exports = { main, USAGE, formatTable };
