'use strict';

// Runs one probe or sweep in a worker thread and reports to the parent (measure/in-worker.js).
// Errors cross as {code, message, details}: structured clone would keep only message and stack.
const { parentPort, workerData } = require('node:worker_threads');
const { toNinesError } = require('../base/errors');

const MEASUREMENTS = {
  probe: { start: (o) => require('../measure/probe').runProbe(o), events: ['progress', 'run'] },
  sweep: { start: (o) => require('../measure/sweep').runSweep(o), events: ['step'] }
};

const m = MEASUREMENTS[workerData.kind];
const run = m.start(workerData.options);
for (const name of m.events) run.on(name, (payload) => parentPort.postMessage({ type: 'event', name, payload }));
parentPort.on('message', (msg) => { if (msg && msg.type === 'stop') run.stop(); });
run.promise.then(
  (result) => { parentPort.postMessage({ type: 'done', result }); parentPort.close(); },
  (err) => { parentPort.postMessage({ type: 'error', error: toNinesError(err, 'NINES_ERR_WORKER').toJSON() }); parentPort.close(); }
);
