'use strict';

/**
 * nines-latency-probe: the Brainboxes latency test as a node. On msg (topic start, or any topic
 * but stop/reset) it runs gateway/measure/probe.js in a worker thread, so the flow neither disturbs the
 * measurement nor is disturbed by it; progress shows in the status; per run (one per connection
 * count) it sends the summary, the .hgrm text and the encoded histogram. The .hgrm msg names its
 * file, `<directory>/<run>-<probe start>.hgrm` under the Node-RED user directory, for a write file
 * node: never Node-RED's working directory, and a later probe never overwrites an earlier one.
 */

const { nodeError, invalidArg } = require('./lib/errors');
const { errorStatus, showStatus } = require('./lib/status');
const { probeOptions, runPayload, hgrmDirectory, hgrmFilename, fileStamp } = require('./lib/probe-run');

/** How long close() waits for a stopped probe to wind down (Node-RED allows 15 s in all) */
const STOP_WAIT_MS = 10000;

module.exports = function (RED) {
  function NinesLatencyProbeNode (config) {
    RED.nodes.createNode(this, config);
    const node = this;
    /** @type {{probe: object, stopping: boolean}|null} */
    let running = null;
    /** next seq per job (run name): contiguous per stream and never reused, so nines-latency-merge
     * neither drops a later run as a redelivery nor counts gaps between runs of other sizes */
    const seqs = new Map();
    /** the payloads' `gateway`: this node, so two probes of the same device stay apart */
    const source = `node-red/${config.name || node.id}`;

    const idle = () => showStatus(node, { fill: 'grey', shape: 'ring', text: 'nines-latency-probe.status.idle' });
    // checked at deploy for the status and the log; checked again on every start, which reports by done(err)
    try {
      probeOptions(RED, config);
      hgrmDirectory(RED, config);
      idle();
    } catch (err) {
      const e = nodeError(err, 'NINES_ERR_INVALID_ARG');
      node.error(e);
      showStatus(node, errorStatus(e));
    }

    function start (msg, send, done) {
      let opts;
      let dir;
      try {
        opts = probeOptions(RED, config);
        dir = hgrmDirectory(RED, config);
      } catch (err) {
        done(nodeError(err, 'NINES_ERR_INVALID_ARG'));
        return;
      }
      const { runProbe } = require('../gateway/measure/probe');
      let probe;
      try {
        probe = runProbe(opts);
      } catch (err) {
        done(nodeError(err, 'NINES_ERR_INVALID_ARG'));
        return;
      }
      running = { probe, stopping: false };
      // one stamp per probe: its runs' files sort together, and the next probe writes new ones
      const stamp = fileStamp(Date.now());
      showStatus(node, { fill: 'blue', shape: 'ring', text: 'nines-latency-probe.status.starting' });
      probe.on('progress', (p) => {
        const pct = p.total ? `${Math.floor((100 * p.done) / p.total)}%` : `${p.done}`;
        showStatus(node, { fill: 'blue', shape: 'dot', text: `${p.connections || ''}x ${pct}` });
      });
      probe.on('run', (run) => {
        const seq = seqs.get(run.name) || 0;
        seqs.set(run.name, seq + 1);
        const payload = runPayload(run, { seq, gateway: source, target: opts.target });
        const summary = RED.util.cloneMessage(msg);
        summary.topic = run.name;
        summary.payload = payload;
        const hgrm = { topic: run.name, payload: run.hgrm, filename: hgrmFilename(dir, run.name, stamp) };
        const hist = { topic: run.name, payload: run.hist };
        send([summary, hgrm, hist]);
      });
      probe.promise.then((result) => {
        const last = result.runs[result.runs.length - 1];
        running = null;
        const p99 = last && typeof last.summary.p99 === 'number' ? Number(last.summary.p99.toPrecision(3)) : null;
        showStatus(node, p99 !== null
          ? { fill: 'green', shape: 'dot', text: `p99 ${p99} ms` }
          : { fill: 'grey', shape: 'ring', text: 'nines-latency-probe.status.stopped' });
        done();
      }, (err) => {
        running = null;
        const e = nodeError(err, 'NINES_ERR_WORKER');
        showStatus(node, errorStatus(e));
        done(e);
      });
    }

    /** Stops the run under way; resolves when it has wound down (or after STOP_WAIT_MS). */
    function stop () {
      if (!running) return Promise.resolve();
      const { probe } = running;
      running.stopping = true;
      probe.stop();
      let timer;
      const limit = new Promise((resolve) => { timer = setTimeout(resolve, STOP_WAIT_MS); });
      return Promise.race([probe.promise.catch(() => {}), limit]).then(() => clearTimeout(timer));
    }

    node.on('input', (msg, send, done) => {
      if (msg.topic === 'stop' || msg.topic === 'reset') {
        stop().then(() => {
          if (msg.topic === 'reset') idle();
          done();
        });
        return;
      }
      if (running) {
        done(invalidArg('msg.topic', 'a probe is already running; send msg.topic "stop" first'));
        return;
      }
      start(msg, send, done);
    });

    node.on('close', (removed, done) => {
      stop().then(() => done(), () => done());
    });
  }

  RED.nodes.registerType('nines-latency-probe', NinesLatencyProbeNode);
};
