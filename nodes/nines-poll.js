'use strict';

/**
 * nines-poll: a poll loop in a worker thread (gateway/jobs/poll-job), values on output 1 (on change beyond a
 * deadband, or every N polls, rate-capped), a latency summary per interval on output 2.
 * msg.topic start / stop / reset control the loop.
 */

const { decodeRegisters } = require('../gateway/values/registers');
const { changed } = require('../gateway/values/gate');
const { createPollJob } = require('../gateway/jobs/poll-job');
const { nodeError, invalidArg } = require('./lib/errors');
const { errorStatus } = require('./lib/status');
const { pollSettings } = require('./lib/poll-spec');

/** How long close() waits for the worker to stop (Node-RED allows 15 s in all) */
const STOP_WAIT_MS = 10000;

module.exports = function (RED) {
  function NinesPollNode (config) {
    RED.nodes.createNode(this, config);
    const node = this;
    let settings = null;
    let configError = null;
    try {
      settings = pollSettings(RED, config, node.id);
    } catch (err) {
      configError = nodeError(err, 'NINES_ERR_INVALID_ARG');
      node.error(configError);
      node.status(errorStatus(configError));
    }
    const topic = settings ? settings.spec.name : 'poll';

    let job = null;
    let running = false;
    /** the last values sent, decoded: the deadband is applied to engineering values */
    let lastSent;
    let hasSent = false;

    function createJob () {
      const j = createPollJob(settings.spec, { mode: settings.mode, intervalMs: settings.intervalMs, gateway: 'node-red' });
      j.on('values', onValues);
      j.on('summary', (payload) => {
        node.send([null, { topic, payload }]);
        node.status(payload.p99 === null || payload.p99 === undefined
          ? { fill: 'green', shape: 'dot', text: 'nines-poll.status.polling' }
          : { fill: 'green', shape: 'dot', text: `p99 ${Number(payload.p99.toPrecision(3))} ms` });
      });
      j.on('error', (err) => {
        const e = nodeError(err, 'NINES_ERR_WORKER');
        node.status(errorStatus(e));
        // with a msg, so Catch nodes see it; the job already coalesces repeats per interval
        node.error(e, { topic, payload: e.toJSON(), error: e.toJSON() });
      });
      return j;
    }

    function onValues (v) {
      let values;
      try {
        values = settings.decode ? decodeRegisters(v.values, settings.decode) : v.values;
      } catch (err) {
        const e = nodeError(err, 'NINES_ERR_INVALID_ARG');
        node.error(e, { topic, payload: v.values });
        return;
      }
      if (settings.valuesMode === 'on-change' && hasSent && !changed(lastSent, values, settings.deadband)) return;
      lastSent = values;
      hasSent = true;
      node.send([{ topic, payload: values, ts: v.ts, polls: v.polls }, null]);
    }

    function start () {
      if (running) return;
      if (!job) job = createJob();
      // failures to start arrive as 'error' events
      job.start();
      running = true;
      node.status({ fill: 'green', shape: 'ring', text: 'nines-poll.status.polling' });
    }

    /** @returns {Promise<void>} resolves when the loop has stopped (or after STOP_WAIT_MS) */
    function stop () {
      if (!job || !running) return Promise.resolve();
      running = false;
      let timer;
      const limit = new Promise((resolve) => { timer = setTimeout(resolve, STOP_WAIT_MS); });
      return Promise.race([Promise.resolve(job.stop()).catch(() => {}), limit]).then(() => {
        clearTimeout(timer);
        node.status({ fill: 'grey', shape: 'ring', text: 'nines-poll.status.stopped' });
      });
    }

    if (settings) {
      if (settings.autostart) {
        try {
          start();
        } catch (err) {
          const e = nodeError(err, 'NINES_ERR_WORKER');
          node.error(e);
          node.status(errorStatus(e));
        }
      } else {
        node.status({ fill: 'grey', shape: 'ring', text: 'nines-poll.status.stopped' });
      }
    }

    node.on('input', (msg, send, done) => {
      if (configError) { done(configError); return; }
      try {
        if (msg.topic === 'start') {
          start();
          done();
        } else if (msg.topic === 'stop') {
          stop().then(() => done(), done);
        } else if (msg.topic === 'reset') {
          // a fresh interval and a fresh value gate: the current values go out again
          if (job && running) job.reset();
          stop().then(() => {
            hasSent = false;
            start();
            done();
          }, done);
        } else {
          done(invalidArg('msg.topic', `msg.topic must be "start", "stop" or "reset"; got ${JSON.stringify(msg.topic)}`));
        }
      } catch (err) {
        done(nodeError(err, 'NINES_ERR_WORKER'));
      }
    });

    node.on('close', (removed, done) => {
      stop().then(() => done(), () => done());
    });
  }

  RED.nodes.registerType('nines-poll', NinesPollNode);
};
