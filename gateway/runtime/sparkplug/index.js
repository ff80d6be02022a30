'use strict';

const { buildModel, sparkplugDeviceId } = require('./model');

/** A unit's state as its Sparkplug device has it: its line's, unless the line is up */
function unitState (line, unit) {
  if (line !== 'up') return line;
  return unit === 'up' ? 'up' : unit === 'down' ? 'down' : 'connecting';
}
const { EdgeNode } = require('./edge-node');
const { SparkplugSession } = require('./session');

/**
 * The gateway as a Sparkplug B edge node (`mqtt.sparkplug`), beside its nines topics: it listens to
 * the gateway's events ('values', 'health', 'summary', 'reload') and publishes them in its own MQTT
 * session. Required only when configured, so a gateway without it loads no protobuf code.
 */

/**
 * @param {import('../gateway').Gateway} gw started up to its publisher; its pool not yet, so the
 *   first health reports and values are seen
 * @param {object} conn
 * @param {string} conn.url the broker (the embedded one's URL when no mqtt.url is set)
 * @param {{username: string, password: string}} [conn.auth] the embedded broker's credential for
 *   the gateway's own clients (the config's login is used otherwise)
 * @returns {Promise<{edge: EdgeNode, session: SparkplugSession, stop: () => Promise<void>}>}
 */
async function startSparkplug (gw, { url, auth }) {
  const m = gw.config.mqtt;
  const sp = m.sparkplug;
  let session = null;
  const edge = new EdgeNode({
    group: sp.group,
    node: sp.node,
    model: buildModel(gw.config),
    writes: sp.writes,
    // a Sparkplug device is a nines device, or a unit of a line (model.js)
    writeTags: (id, values) => {
      const d = edge.model.devices.get(id);
      return d === undefined ? gw.writeTags(id, values) : gw.writeTags(d.device, values, d.unit || undefined);
    },
    publish: (topic, payload) => session.publish(topic, payload),
    // one NDATA per burst of interval ends, however many jobs: their summaries come within ms of each other
    ndataWindowMs: Math.min(1000, Math.max(50, gw.config.gateway.intervalMs / 10))
  });
  const login = auth || (m.username !== null ? { username: m.username, password: m.password === null ? undefined : m.password } : null);
  session = new SparkplugSession({
    url,
    clientId: sp.clientId,
    edge,
    ...(login ? { username: login.username, password: login.password } : {}),
    tls: m.tls ? Object.fromEntries(Object.entries(m.tls).filter(([k, v]) => !/Path$/.test(k) && v !== undefined)) : undefined,
    protocolVersion: m.protocolVersion,
    keepaliveMs: m.keepaliveMs,
    connectTimeoutMs: m.connectTimeoutMs,
    reconnectInitialMs: m.reconnectInitialMs,
    reconnectMaxMs: m.reconnectMaxMs
  });
  const report = (err) => gw.emit('job-error', null, err);
  edge.on('refused', report);
  edge.on('command-error', report);
  session.on('error', report);
  const listeners = {
    values: (job, v) => edge.onValues(job, v),
    health: (device, h) => {
      edge.onHealth(device, h);
      // each unit of a line is a Sparkplug device of its own: down when it or its line is
      if (h.units) for (const [unit, u] of Object.entries(h.units)) edge.onHealth(sparkplugDeviceId(device, unit), { ...h, state: unitState(h.state, u.state) });
    },
    summary: (job, payload) => edge.onSummary(job, payload),
    // gw.config is the new config by the time 'reload' is emitted
    reload: () => edge.setModel(buildModel(gw.config))
  };
  for (const [event, fn] of Object.entries(listeners)) gw.on(event, fn);
  await session.start();
  gw.emit('listening', { what: 'Sparkplug B edge node', url: `spBv1.0/${sp.group}/+/${sp.node} on ${url} (client ${sp.clientId}, bdSeq ${session.bdSeq === null ? 'pending' : session.bdSeq})`, login: null });
  return {
    edge,
    session,
    stop: async () => {
      for (const [event, fn] of Object.entries(listeners)) gw.off(event, fn);
      await session.stop();
    }
  };
}

module.exports = { startSparkplug };
