'use strict';

// Runs one probe in a worker thread and reports to the parent (see probe.js). Errors cross as
// {code, message, details}: structured clone would keep only message and stack.
const { parentPort, workerData } = require('node:worker_threads');
const { runProbe } = require('../measure/probe');
const { toNinesError } = require('../base/errors');

const run = runProbe(workerData);
run.on('progress', (progress) => parentPort.postMessage({ type: 'progress', progress }));
run.on('run', (r) => parentPort.postMessage({ type: 'run', run: r }));
parentPort.on('message', (m) => { if (m && m.type === 'stop') run.stop(); });
run.promise.then(
  (result) => { parentPort.postMessage({ type: 'done', result }); parentPort.close(); },
  (err) => { parentPort.postMessage({ type: 'error', error: toNinesError(err, 'NINES_ERR_WORKER').toJSON() }); parentPort.close(); }
);
