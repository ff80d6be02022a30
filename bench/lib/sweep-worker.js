'use strict';

/**
 * Question 4's nines side, in a worker thread as the gateway runs its jobs (worker/pool.js): there
 * the scheduler waits for sub-millisecond deadlines with Atomics.wait, where the main thread only has
 * 1 ms timers. One nines driver connection, one schedule per offered rate, each measured from the
 * intended send time by the nines Recorder. Posts one message per step and 'done'.
 */

const path = require('node:path');
const { parentPort, workerData } = require('node:worker_threads');

const ROOT = path.join(__dirname, '..', '..');

async function main () {
  const { createClient } = require(path.join(ROOT, 'gateway/drivers'));
  const { validateOp } = require(path.join(ROOT, 'gateway/drivers/modbus'));
  const { startSchedule } = require(path.join(ROOT, 'gateway/scheduler'));
  const { Recorder, encodeHistogram } = require(path.join(ROOT, 'gateway/latency'));
  const { port, rates, stepMs, warmup } = workerData;
  const client = createClient(`modbus+tcp://127.0.0.1:${port}?unitId=1`, { timeoutMs: 1000 });
  client.on('error', () => {});
  await client.connect();
  const op = validateOp({ fc: 3, address: 0, quantity: 10 });
  for (let i = 0; i < warmup; i++) await client.request(op);
  for (const rate of rates) {
    const recorder = new Recorder({ policy: 'capped' });
    const s = startSchedule({ clients: [client], nextOp: () => op, ratePerSec: rate, durationMs: stepMs, policy: 'capped', precision: 'spin', timeoutMs: 1000, recorder });
    const out = await s.done;
    const snap = recorder.snapshot();
    const secs = Math.max(Number(out.endNs - out.startNs) / 1e9, stepMs / 1000);
    parentPort.postMessage({
      type: 'step',
      rate,
      hist: encodeHistogram(snap.response),
      lag: encodeHistogram(snap.lag),
      errors: snap.errors + snap.timeouts,
      reqPerSec: (snap.ok + snap.errors + snap.timeouts) / secs
    });
  }
  await client.close();
  parentPort.postMessage({ type: 'done' });
}

main().catch((err) => parentPort.postMessage({ type: 'error', message: err.stack || String(err) }));
