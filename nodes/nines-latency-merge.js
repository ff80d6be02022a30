'use strict';

/**
 * nines-latency-merge: latency payloads in (from a core mqtt-in node on nines/+/+/latency, or
 * from nines-latency-probe), fleet percentiles out. Histograms are merged per key over a sliding
 * window; percentiles come from the merged histogram, never from averaging percentiles.
 */

const { nodeError, invalidArg } = require('./lib/errors');
const { errorStatus, showStatus: setStatus } = require('./lib/status');
const { LatencyWindow, chartSeries, KEY_BY, PERCENTILES } = require('./lib/latency-window');
const { num } = require('./lib/device-config');

const CHARTABLE = [...PERCENTILES, 'min', 'mean'];

/**
 * Settings → checked options; throws NINES_ERR_INVALID_ARG naming the field.
 * @param {object} config
 * @returns {{keyBy: string, windowMs: number, output: string, intervalMs: number, percentiles: string[]}}
 */
function mergeSettings (config) {
  const keyBy = config.keyBy || 'job';
  if (!KEY_BY[keyBy]) throw invalidArg('keyBy', `keyBy must be one of ${Object.keys(KEY_BY).join(', ')}; got ${JSON.stringify(keyBy)}`);
  const output = config.output || 'input';
  if (output !== 'input' && output !== 'interval') throw invalidArg('output', `output must be "input" or "interval"; got ${JSON.stringify(output)}`);
  const percentiles = String(config.percentiles === undefined ? 'p50,p99,p99_9,max' : config.percentiles)
    .split(',').map((s) => s.trim()).filter(Boolean);
  for (const p of percentiles) {
    if (!CHARTABLE.includes(p)) throw invalidArg('percentiles', `percentiles must be a comma-separated list of ${CHARTABLE.join(', ')}; got ${JSON.stringify(p)}`);
  }
  return {
    keyBy,
    windowMs: num(config, 'window', 60, 1, 86400, false) * 1000,
    output,
    intervalMs: num(config, 'interval', 10, 0.1, 3600, false) * 1000,
    percentiles
  };
}

module.exports = function (RED) {
  function NinesLatencyMergeNode (config) {
    RED.nodes.createNode(this, config);
    const node = this;
    const latency = require('../gateway/latency');

    let settings = null;
    let configError = null;
    try {
      settings = mergeSettings(config);
    } catch (err) {
      configError = nodeError(err, 'NINES_ERR_INVALID_ARG');
      node.error(configError);
      setStatus(node, errorStatus(configError));
    }
    const win = settings ? new LatencyWindow({ keyBy: settings.keyBy, windowMs: settings.windowMs, latency }) : null;
    let bad = 0;

    function showStatus () {
      const keys = win.keys.size;
      setStatus(node, bad > 0
        ? { fill: 'yellow', shape: 'ring', text: RED._('nines-latency-merge.status.keys-bad', { keys, bad }) }
        : { fill: keys ? 'green' : 'grey', shape: 'dot', text: RED._('nines-latency-merge.status.keys', { keys }) });
    }

    /** [summary msg, chart msgs] for one key, or null */
    function outputsFor (key, msg) {
      const s = win.summary(key);
      if (!s) return null;
      const out = msg || {};
      out.topic = key;
      out.payload = s;
      return [out, chartSeries(s, settings.percentiles)];
    }

    let timer = null;
    if (settings && settings.output === 'interval') {
      // pacing output, not measuring: a plain interval is fine here
      timer = setInterval(() => {
        win.evict();
        for (const key of [...win.keys.keys()].sort()) {
          const o = outputsFor(key);
          if (o) node.send(o);
        }
      }, settings.intervalMs);
    }
    if (win) showStatus();

    node.on('input', (msg, send, done) => {
      if (configError) { done(configError); return; }
      if (msg.topic === 'reset') {
        win.reset();
        bad = 0;
        showStatus();
        done();
        return;
      }
      let added;
      try {
        // an object, or JSON text in a string or Buffer (mqtt-in gives either, per its output setting)
        const parsed = latency.parseLatencyPayload(msg.payload);
        added = win.add(parsed, parsed.histogram);
      } catch (err) {
        bad++;
        showStatus();
        done(nodeError(err, 'NINES_ERR_INVALID_ARG'));
        return;
      }
      showStatus();
      if (settings.output === 'input' && !added.duplicate) {
        const o = outputsFor(added.key, msg);
        if (o) send(o);
      }
      done();
    });

    node.on('close', (removed, done) => {
      if (timer) clearInterval(timer);
      done();
    });
  }

  RED.nodes.registerType('nines-latency-merge', NinesLatencyMergeNode);
};
