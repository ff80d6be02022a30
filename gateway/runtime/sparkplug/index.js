'use strict';

const { buildModel, sparkplugDeviceId } = require('./model');

/** A unit's state as its Sparkplug device has it: its line's, unless the line is up */
function unitState (line, unit) {
  if (line !== 'up') return line;
  return unit === 'up' ? 'up' : unit === 'down' ? 'down' : 'connecting';
}
const { EdgeNode } = require('./edge-node');
const { SparkplugSession } = require('./session');
const { HeldData } = require('./hold');
const { AliasMap } = require('./aliases');
const { NinesError } = require('../../base/errors');
const { WindowReporter } = require('../../base/window-reporter');
const { MQTT_REPORT_WINDOW_MS } = require('../mqtt/defaults');

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
  const report = (err) => gw.emit('job-error', null, err);
  const { hold, drops, aliases } = storeFor(sp, m.spool, report);
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
    ndataWindowMs: Math.min(1000, Math.max(50, gw.config.gateway.intervalMs / 10)),
    primaryHost: sp.primaryHost,
    hold,
    aliases,
    templates: sp.templates
  });
  if (hold !== null) hold.onDurable = () => edge.resumeReplay();
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
  const host = sp.primaryHost === null ? '' : `, primary host ${sp.primaryHost}${edge.host.online ? '' : ' (waiting for its STATE)'}`;
  gw.emit('listening', { what: 'Sparkplug B edge node', url: `spBv1.0/${sp.group}/+/${sp.node} on ${url} (client ${sp.clientId}, bdSeq ${session.bdSeq === null ? 'pending' : session.bdSeq}${host})`, login: null });
  return {
    edge,
    session,
    stop: async () => {
      for (const [event, fn] of Object.entries(listeners)) gw.off(event, fn);
      await session.stop();
      if (hold !== null) {
        hold.close();
        drops.flush();
      }
      aliases.save();
    }
  };
}

/**
 * Where held DATA and the aliases live: with a primary host, a hold (hold.js) on disk beside the
 * publisher's spool when there is one, else in memory; without one, nothing is held.
 * @param {import('../config/check-sparkplug').SparkplugConfig} sp
 * @param {{dir: string, syncIntervalMs: number}|null} spool mqtt.spool
 * @param {(err: Error) => void} report
 * @returns {{hold: import('./hold').HeldData|null, drops: WindowReporter|null, aliases: AliasMap}} drops: the
 *   reports of held messages dropped
 */
function storeFor (sp, spool, report) {
  if (sp.primaryHost === null) return { hold: null, drops: null, aliases: new AliasMap({ onError: report }) };
  // counted exactly (the status shows it); told at most once per window, with the count since: the
  // drops a window holds back go out when it ends (base/window-reporter.js), not only with a later drop
  const drops = new WindowReporter({
    windowMs: MQTT_REPORT_WINDOW_MS,
    merge: (a, b) => a + b,
    emit: (_key, n) => report(new NinesError('NINES_ERR_QUEUE_FULL', `Sparkplug: ${n} held DATA message(s) dropped while the primary host ${sp.primaryHost} is offline (hold: ${sp.hold.maxMessages} messages, ${sp.hold.maxBytes} bytes)`, { dropped: n, held: hold.count }))
  });
  const hold = new HeldData({
    maxMessages: sp.hold.maxMessages,
    maxBytes: sp.hold.maxBytes,
    spool: spool || null,
    onError: report,
    onDrop: (n) => drops.offer('dropped', n)
  });
  return { hold, drops, aliases: new AliasMap({ dir: hold.dir, onError: report }) };
}

module.exports = { startSparkplug };
