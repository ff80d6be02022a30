'use strict';

/**
 * nines-poll: a poll job in the process's shared worker pool (gateway/workers/poll-job), on the
 * connections of its device config node: values on output 1 (decoded and gated in the worker: on
 * change beyond a deadband, or every N polls, rate-capped), a latency summary per interval on
 * output 2. msg.topic start / stop / reset control the job. With a tag list (source "tags") the
 * values come named: msg.payload {tag: value}, msg.quality {tag: 'ok'|code}, msg.ts the read time,
 * msg.changed the tags that moved, msg.units.
 *
 * The status follows the device's health at once (connecting, the error code, connected), the same
 * as every other node of the device, and shows the last p99 only while the device is up, from an
 * interval that ran entirely while it was up. On a line of units it follows its own unit's health
 * too: a red ring "unit 3 down" while its unit is left alone (its polls skipped and counted in the
 * summaries, never sent), green again when the unit answers its probe; a p99 only from an interval
 * that began after the unit came back.
 */

const { PollJob } = require('../gateway/workers/poll-job');
const { nodeError, invalidArg } = require('./lib/errors');
const { errorStatus, fromHealth, isConnectionError, showStatus: setStatus, unitHealth, unitDownStatus, CONNECTED } = require('./lib/status');
const { pollSettings } = require('./lib/poll-spec');
const { poolSettings } = require('./lib/pool-settings');
const { registerTagAdmin } = require('./lib/tag-admin');

/** How long close() waits for the job to stop (Node-RED allows 15 s in all) */
const STOP_WAIT_MS = 10000;
const STOPPED = Object.freeze({ fill: 'grey', shape: 'ring', text: 'nines-poll.status.stopped' });

/** @param {string} iso @returns {string} the local time of day, HH:MM:SS */
function clock (iso) {
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return String(iso);
  const p = (n) => String(n).padStart(2, '0');
  return `${p(t.getHours())}:${p(t.getMinutes())}:${p(t.getSeconds())}`;
}

module.exports = function (RED) {
  registerTagAdmin(RED);

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
      setStatus(node, errorStatus(configError));
    }
    const topic = settings ? settings.spec.label : 'poll';
    const unitId = settings ? settings.unitId : undefined;

    let job = null;
    let running = false;
    /** resolves when the last stop() has finished; a start waits for it */
    let stopped = Promise.resolve();
    /** what the status is made of */
    let health = null;
    let p99 = null;
    let ownError = null;

    /** @returns {{state: string, since: number}|null} the health of the unit it polls, on a line of units */
    function unit () {
      return unitHealth(health, unitId);
    }

    function showStatus () {
      const u = unit();
      if (!running) setStatus(node, STOPPED);
      else if (!health || health.state !== 'up') setStatus(node, fromHealth(health));
      else if (u !== null && u.state === 'down') setStatus(node, unitDownStatus(unitId));
      else if (ownError) setStatus(node, errorStatus(ownError));
      else if (p99 !== null) setStatus(node, { fill: 'green', shape: 'dot', text: `p99 ${Number(p99.toPrecision(3))} ms` });
      else setStatus(node, CONNECTED);
    }

    function createJob () {
      const pool = poolSettings(RED, (text) => node.warn(text));
      const j = new PollJob(settings.spec, { device: settings.device.spec, mode: settings.mode, workers: pool.workers, gateway: pool.gateway });
      j.on('values', (v) => {
        // a tag list's values come named, with each tag's quality, the read time and what changed
        const msg = settings.units === null
          ? { topic, payload: v.values, ts: v.ts, polls: v.polls }
          : { topic, payload: v.values, quality: v.quality, ts: v.ts, changed: v.changed, units: settings.units, polls: v.polls };
        node.send([msg, null]);
      });
      j.on('summary', (payload) => {
        node.send([null, { topic, payload }]);
        // an interval that began before the device (or its unit) came up holds the outage, not the
        // device's latency
        const u = unit();
        if (health && health.state === 'up' && payload.start >= health.since && (u === null || (u.state !== 'down' && payload.start >= u.since))) {
          p99 = typeof payload.p99 === 'number' ? payload.p99 : null;
          if (payload.ok > 0) ownError = null;
        }
        showStatus();
      });
      j.on('health', (h) => {
        const before = unit();
        const after = unitHealth(h, unitId);
        if (!health || h.state !== health.state || (before !== null && after !== null && before.state !== after.state)) { p99 = null; ownError = null; }
        health = h;
        showStatus();
      });
      j.on('error', (err) => {
        const e = nodeError(err, 'NINES_ERR_WORKER');
        const d = e.details || {};
        if (d.repeated) {
          // the interval's count of failures reported once already: it comes at the interval's end,
          // maybe long after the device came back, so it says when they happened (issue 21: a
          // NINES_ERR_NOT_CONNECTED logged 7-10 s after the device was up again read as a new one)
          e.message = `${d.repeated} more between ${clock(d.firstAt)} and ${clock(d.lastAt)}, the last: ${e.message}`;
          e.stack = `${e.code}: ${e.message}`;
        } else if (!isConnectionError(e) && e.code !== 'NINES_ERR_UNIT_DOWN') {
          // a lost connection shows through the device's health, a unit left alone through its own
          // (its polls are skipped, not failed); the job's own failures here
          ownError = e;
          showStatus();
        }
        // with a msg, so Catch nodes see it; the job already coalesces repeats per interval
        node.error(e, { topic, payload: e.toJSON(), error: e.toJSON() });
      });
      return j;
    }

    function start () {
      if (running) return;
      running = true;
      health = null;
      p99 = null;
      ownError = null;
      showStatus();
      stopped.then(() => {
        if (!running) return;
        if (!job) job = createJob();
        // failures to start arrive as 'error' events
        job.start();
      });
    }

    /** @returns {Promise<void>} resolves when the job has stopped (or after STOP_WAIT_MS) */
    function stop () {
      if (!running) return stopped;
      running = false;
      const j = job;
      let timer;
      const limit = new Promise((resolve) => { timer = setTimeout(resolve, STOP_WAIT_MS); });
      stopped = stopped.then(() => Promise.race([j ? j.stop().catch(() => {}) : null, limit])).then(() => clearTimeout(timer));
      return stopped.then(() => { if (!running) showStatus(); });
    }

    if (settings) {
      if (settings.autostart) start();
      else showStatus();
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
          if (!running) start();
          else if (job) job.reset(); // (no job yet: the one about to start is fresh anyway)
          done();
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
