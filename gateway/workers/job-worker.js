'use strict';

/**
 * Worker-thread side of the pool: a Host (devices and their jobs) fed by the pool's messages.
 * Everything crosses as plain data: specs in; summaries (percentiles computed and the histogram
 * encoded here), values, health and replies out; errors as {code, message, details}, since a posted
 * Error keeps only message and stack. The worker never waits on the main thread: it only posts.
 */

const { parentPort, workerData } = require('node:worker_threads');
const { Host } = require('./host');

const host = new Host({
  post: (msg) => {
    parentPort.postMessage(msg);
    if (msg.type === 'stopped') parentPort.close();
  },
  gateway: workerData.gateway,
  hlog: workerData.hlog,
  allHistograms: workerData.allHistograms
});

parentPort.on('message', (m) => host.handle(m));
