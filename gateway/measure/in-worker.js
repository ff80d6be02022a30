'use strict';

const path = require('node:path');
const { Worker } = require('node:worker_threads');
const { NinesError, fromJSON } = require('../base/errors');
const { withPreciseSlack } = require('../scheduler/timer-slack');

/**
 * Runs a measurement (the probe, the sweep) in a worker thread of its own and relays it: the
 * worker script (workers/measure-worker.js) posts its events and its result, and takes 'stop'.
 * There the scheduler's precise waits block the worker (Atomics.wait, a spin) where on the main
 * thread they would be 1 ms timers, and nothing on the caller's event loop (a Node-RED flow)
 * delays a send, nor does the measurement delay the caller. An event posted with `ack` (a sweep's
 * step) is answered with 'taken' once its listeners have run: the worker holds its next step until
 * then, so the caller's work on a step never runs beside the measurement.
 * @param {'probe'|'sweep'} kind which measurement (workers/measure-worker.js)
 * @param {object} options its checked options, with inWorker false (they cross by structured clone)
 * @param {import('node:events').EventEmitter} ee gets the worker's events, as emitted in it
 * @param {(name: string, payload: any) => any} [revive] turns an event's or the result's payload back
 *   into what the caller expects (a histogram crosses encoded)
 * @returns {{promise: Promise<any>, stop: () => void}}
 */
function runInWorker (kind, options, ee, revive = (name, x) => x) {
  // its sleeps end when asked (timer-slack.js)
  const worker = withPreciseSlack(() => new Worker(path.join(__dirname, '..', 'workers', 'measure-worker.js'), { workerData: { kind, options } }));
  const promise = new Promise((resolve, reject) => {
    let settled = false;
    const fail = (err) => { if (!settled) { settled = true; reject(err); } };
    worker.on('message', (m) => {
      if (m.type === 'event') {
        // an event the worker waits on (m.ack) is taken once its listeners have run, or have thrown
        try {
          ee.emit(m.name, revive(m.name, m.payload));
        } finally {
          if (m.ack) worker.postMessage({ type: 'taken' });
        }
      }
      else if (m.type === 'done') { settled = true; resolve(revive('done', m.result)); }
      else if (m.type === 'error') fail(fromJSON(m.error));
    });
    worker.on('error', (err) => fail(new NinesError('NINES_ERR_WORKER', `${kind} worker failed: ${err.message}`)));
    worker.on('exit', (code) => fail(new NinesError('NINES_ERR_WORKER', `${kind} worker exited with code ${code} before finishing`)));
  });
  return { promise, stop: () => worker.postMessage({ type: 'stop' }) };
}

module.exports = { runInWorker };
