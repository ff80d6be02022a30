'use strict';

/**
 * nines-device-status: the health of one device (an ASCII or Modbus device config node) as msgs, at
 * deploy and on every change: `{topic: <device name or target>, payload: {state, since, lastError,
 * connections}}`. For a dashboard, an alarm flow or an MQTT out node. The node is a user of the
 * device like any other: deployed alone, it opens the device's connections to watch them.
 *
 * A line of units (the Modbus device's "Units on this line") adds `payload.units`, each unit's health
 * by name: `{"unit-3": {unitId: 3, state: 'down', since, lastError, retryInMs}}`, and a msg goes out
 * whenever a unit changes state, as for the device. A failed probe of a unit that stays down sends
 * none: only the time of its next probe (retryInMs) has changed.
 */

const { nodeError } = require('./lib/errors');
const { errorStatus, fromLineHealth, showStatus } = require('./lib/status');
const { pickDevice } = require('./lib/job-spec');

module.exports = function (RED) {
  function NinesDeviceStatusNode (config) {
    RED.nodes.createNode(this, config);
    const node = this;
    let device = null;
    try {
      device = pickDevice(RED, config).device;
    } catch (err) {
      const e = nodeError(err, 'NINES_ERR_INVALID_ARG');
      node.error(e);
      showStatus(node, errorStatus(e));
      return;
    }
    const topic = device.name || device.target;
    let last = null;

    device.hub.register(node, (health) => {
      showStatus(node, fromLineHealth(health));
      if (!health) return; // the pool has not reported yet: the first report follows
      const payload = {
        state: health.state,
        since: health.since,
        lastError: health.lastError ? { code: health.lastError.code, message: health.lastError.message } : null,
        connections: { open: health.connections.open, max: health.connections.max },
        // requests per connection, as set and as used (1 after a pipelining fallback); older health reports have none
        inflight: health.inflight ? { max: health.inflight.max, effective: health.inflight.effective } : { max: 1, effective: 1 },
        warning: health.warning ? { code: health.warning.code, message: health.warning.message } : null
      };
      if (health.units) payload.units = units(health.units, false);
      // one msg per change of a unit's state: a failed probe of a unit that stays down changes its next
      // probe's time and the wait in its error's message, not its state
      const key = JSON.stringify(health.units ? { ...payload, units: units(health.units, true) } : payload);
      if (key === last) return;
      last = key;
      node.send({ topic, payload });
    });

    node.on('close', (removed, done) => {
      device.hub.deregister(node).then(() => done(), () => done());
    });
  }

  /**
   * @param {Record<string, {unitId: number, state: string, since: number, lastError: object|null, retryInMs?: number}>} list
   * @param {boolean} forKey only what a change of state changes: no retryInMs, the error's code only
   * @returns {object} each unit's health, by name, as the payload carries it
   */
  function units (list, forKey) {
    const out = {};
    for (const [name, u] of Object.entries(list)) {
      const h = { unitId: u.unitId, state: u.state, since: u.since, lastError: u.lastError ? { code: u.lastError.code, message: u.lastError.message } : null };
      if (forKey) h.lastError = u.lastError ? u.lastError.code : null;
      else if (u.retryInMs !== undefined) h.retryInMs = u.retryInMs;
      out[name] = h;
    }
    return out;
  }

  RED.nodes.registerType('nines-device-status', NinesDeviceStatusNode);
};
