'use strict';

/**
 * Worker-thread side of the pool: a Host (devices and their jobs) fed by the pool's messages.
 * Everything crosses as plain data: specs in; interval snapshots (counts and a copy of the
 * histograms, summarized on the pool's thread), values, health and replies out; errors as {code, message, details}, since a posted
 * Error keeps only message and stack. The worker never waits on the main thread: it only posts.
 */

const { parentPort } = require('node:worker_threads');
const { Host } = require('./host');

const host = new Host({
  post: (msg, transfer) => {
    parentPort.postMessage(msg, transfer);
    if (msg.type === 'stopped') parentPort.close();
  }
});

parentPort.on('message', (m) => host.handle(m));
