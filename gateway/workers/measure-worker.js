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
// a measurement that waits for its caller to take each event (the sweep's steps: run.taken) asks
// for an acknowledgement, which in-worker.js sends once the event's listeners have run
const ack = typeof run.taken === 'function';
for (const name of m.events) run.on(name, (payload) => parentPort.postMessage({ type: 'event', name, payload, ack }));
parentPort.on('message', (msg) => {
  if (msg && msg.type === 'stop') run.stop();
  else if (msg && msg.type === 'taken' && ack) run.taken();
});
run.promise.then(
  (result) => { parentPort.postMessage({ type: 'done', result }); parentPort.close(); },
  (err) => { parentPort.postMessage({ type: 'error', error: toNinesError(err, 'NINES_ERR_WORKER').toJSON() }); parentPort.close(); }
);
