'use strict';

/**
 * node-red-contrib-modbus in a real, embedded Node-RED (editor and HTTP off), in its own process:
 *   node node-red-child.js <port> <count> <durationMs> <warmup> <buffer:on|off> [load]
 * The flow is a Modbus-Flex-Getter (FC3, 10 holding registers from 0, unit 1) whose output feeds a
 * function node that hands the next request straight back to the getter: a closed loop through
 * Node-RED's own message routing. Tuned for speed: commandDelay 1 ms (its minimum), logging off, the
 * command queue off or on. Each round trip is timed from the message leaving the function node to
 * the getter's output reaching it. With "load", the main thread also runs the question-5 busy load.
 * Prints one JSON line: {count, errors, reqPerSec, hist (base64), versions}.
 */

const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { createHist, record, encode } = require('./hist');
const { loadPeer, peerVersion } = require('./peers');
const { startLoad } = require('./load');

const now = process.hrtime.bigint;
const [port, count, durationMs, warmup] = process.argv.slice(2, 6).map(Number);
const buffer = process.argv[6] === 'on';
const withLoad = process.argv[7] === 'load';

/** @returns {object[]} the flow */
function flow () {
  return [
    { id: 'tab', type: 'tab', label: 'bench' },
    {
      id: 'client', type: 'modbus-client', name: 'bench', clienttype: 'tcp', bufferCommands: buffer,
      stateLogEnabled: false, queueLogEnabled: false, failureLogEnabled: false,
      tcpHost: '127.0.0.1', tcpPort: String(port), tcpType: 'DEFAULT',
      serialPort: '/dev/null', serialType: 'RTU-BUFFERD', serialBaudrate: '9600', serialDatabits: '8',
      serialStopbits: '1', serialParity: 'none', serialConnectionDelay: '100', serialAsciiResponseStartDelimiter: '0x3A',
      unit_id: '1', commandDelay: '1', clientTimeout: '1000', reconnectOnTimeout: true, reconnectTimeout: '2000',
      parallelUnitIdsAllowed: true, showErrors: false, showWarnings: false, showLogs: false
    },
    {
      id: 'getter', type: 'modbus-flex-getter', z: 'tab', name: 'getter', showStatusActivities: false,
      showErrors: false, showWarnings: false, logIOActivities: false, server: 'client', useIOFile: false,
      ioFile: '', useIOForPayload: false, emptyMsgOnFail: true, keepMsgProperties: false,
      delayOnStart: false, startDelayTime: '', x: 200, y: 100, wires: [['loop'], []]
    },
    {
      id: 'loop', type: 'function', z: 'tab', name: 'next', outputs: 1, noerr: 0, initialize: '', finalize: '', libs: [],
      func: "return global.get('bench').next(msg);", x: 400, y: 100, wires: [['getter']]
    }
  ];
}

/** The closed loop's state, reached from the function node through functionGlobalContext. */
function createBench (done) {
  const hist = createHist();
  const b = { hist, n: 0, errors: 0, retries: 0, warm: 0, t0: 0n, start: 0n, stop: 0n, last: 0n, finished: false };
  const payload = () => ({ payload: { fc: 3, unitid: 1, address: 0, quantity: 10 } });
  b.kick = () => { b.t0 = now(); b.last = b.t0; return payload(); };
  b.next = (msg) => {
    const t = now();
    b.last = t;
    const ok = Array.isArray(msg.payload) && msg.payload.length === 10;
    // "Inject while node is not ready for input": the client is busy (the request in flight, or its
    // commandDelay after it). A flow would send again, so the loop does, and the wait counts as latency.
    if (!ok && msg.error && /not ready/i.test(msg.error.message)) {
      b.retries++;
      return payload();
    }
    if (b.warm < warmup) {
      b.warm++;
      if (b.warm === warmup) { b.start = now(); b.stop = b.start + BigInt(durationMs) * 1000000n; }
    } else {
      record(hist, t - b.t0);
      b.n++;
      if (!ok) { b.errors++; if (process.env.NR_DEBUG && b.errors < 5) console.error('bad reply', msg); }
      if (b.n >= count || t >= b.stop) { b.finished = true; b.end = t; done(); return null; }
    }
    b.t0 = now();
    return payload();
  };
  return b;
}

async function main () {
  const red = loadPeer('node-red');
  if (red.skipped) throw new Error(red.skipped);
  const RED = red.mod;
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-bench-nr-'));
  fs.writeFileSync(path.join(userDir, 'flows.json'), JSON.stringify(flow()));
  // Node-RED finds node packages in <userDir>/node_modules: point it at bench's install
  fs.symlinkSync(path.join(__dirname, '..', 'node_modules'), path.join(userDir, 'node_modules'), 'dir');
  let finish;
  const finished = new Promise((resolve) => { finish = resolve; });
  const bench = createBench(finish);
  RED.init(http.createServer(), {
    userDir,
    flowFile: 'flows.json',
    httpAdminRoot: false,
    httpNodeRoot: false,
    disableEditor: true,
    credentialSecret: false,
    functionGlobalContext: { bench },
    logging: { console: { level: process.env.NR_LOG || 'error', metrics: false, audit: false } }
  });
  const started = new Promise((resolve) => RED.events.once('flows:started', resolve));
  await RED.start();
  await Promise.race([started, new Promise((resolve) => setTimeout(resolve, 10000))]);
  const load = withLoad ? startLoad() : null;
  const getter = RED.nodes.getNode('getter');
  if (!getter) throw new Error('node-red-contrib-modbus did not load: no modbus-flex-getter node');
  // kick the loop; a watchdog re-kicks a stalled loop (a dropped message is counted as an error)
  getter.receive(bench.kick());
  const hardStop = now() + BigInt(durationMs + 20000) * 1000000n;
  const watchdog = setInterval(() => {
    if (bench.finished) return;
    const t = now();
    if (t > hardStop) { bench.finished = true; bench.end = t; if (!bench.start) bench.start = t; finish(); return; }
    if (t - bench.last > 1500000000n) { if (bench.warm >= warmup) bench.errors++; getter.receive(bench.kick()); }
  }, 250);
  await finished;
  clearInterval(watchdog);
  if (load) load.stop();
  const elapsedNs = Number(bench.end - bench.start);
  await RED.stop();
  fs.rmSync(userDir, { recursive: true, force: true });
  process.stdout.write(JSON.stringify({
    count: bench.n,
    errors: bench.errors,
    notReadyRetries: bench.retries,
    elapsedNs,
    reqPerSec: bench.n / (elapsedNs / 1e9),
    hist: encode(bench.hist),
    versions: { 'node-red': red.version, 'node-red-contrib-modbus': peerVersion('node-red-contrib-modbus') }
  }) + '\n');
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
}).finally(() => setTimeout(() => process.exit(), 200).unref()); // eslint-disable-line n/no-process-exit
