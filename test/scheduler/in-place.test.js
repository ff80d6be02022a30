'use strict';

/**
 * A worker thread's deadline driver waits in place when nothing of the thread is in flight
 * (scheduler/wait.js waitInPlace). A request refused at once fails in a microtask,
 * and microtasks run until none is left: a lane that failed, waited in place, sent and failed again
 * would chain microtasks for as long as its device was away, and the thread's event loop, which
 * holds the reconnect that brings the device back, would never go on. Found by the outage test
 * (test/gateway/outage.test.js: no reply at all after the device came back). Here a timer of the
 * same thread must fire while every request of a fixed-rate schedule is refused.
 */

const assert = require('node:assert/strict');
const path = require('node:path');
const { Worker } = require('node:worker_threads');

const SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const { startSchedule } = require(workerData.scheduler);
const { Recorder } = require(workerData.latency);
const refused = Object.assign(new Error('refused'), { code: 'NINES_ERR_CONNECTION' });
// refused before anything is written, as a client whose device is away refuses: in a microtask
const client = { submit (op, timeoutMs, handler) { queueMicrotask(() => handler.onError(refused)); }, request () {} };
const t0 = Date.now();
let timerLateMs = null;
setTimeout(() => { timerLateMs = Date.now() - t0 - 20; }, 20);
const rec = new Recorder();
startSchedule({ clients: [client], nextOp: () => 0, ratePerSec: workerData.ratePerSec, durationMs: 400,
  policy: 'skip', precision: workerData.precision, recorder: rec }).done.then(() => {
  parentPort.postMessage({ timerLateMs, errors: rec.snapshot().errors });
});
`;

/**
 * @param {{ratePerSec: number, precision: string}} o
 * @returns {Promise<{timerLateMs: number|null, errors: number}>}
 */
function runRefused (o) {
  const root = path.join(__dirname, '..', '..', 'gateway');
  const w = new Worker(SOURCE, { eval: true, workerData: { ...o, scheduler: path.join(root, 'scheduler'), latency: path.join(root, 'latency') } });
  return new Promise((resolve, reject) => {
    w.once('message', (m) => { resolve(m); w.terminate(); });
    w.once('error', reject);
  });
}

describe('scheduler: waits in place never hold up the thread\'s loop', function () {
  this.timeout(20000);

  // sleep at 1,000/s: a wait not yet due; spin at 20,000/s: a spin window already
  // open
  for (const o of [{ ratePerSec: 1000, precision: 'sleep' }, { ratePerSec: 20000, precision: 'spin' }]) {
    it(`every request refused at once, ${o.precision} at ${o.ratePerSec}/s: a 20 ms timer of the same thread still fires on time`, async () => {
      const r = await runRefused(o);
      assert.ok(r.errors > 0.5 * o.ratePerSec * 0.4, `${r.errors} requests refused in 400 ms`);
      assert.notEqual(r.timerLateMs, null, 'the timer never fired while the schedule ran');
      assert.ok(r.timerLateMs < 200, `the timer fired ${r.timerLateMs} ms late`);
    });
  }
});
