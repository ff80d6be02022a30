'use strict';

/**
 * nines-device-status: the health of one device (an ASCII or Modbus device config node) as msgs, at
 * deploy and on every change: `{topic: <device name or target>, payload: {state, since, lastError,
 * connections}}`. For a dashboard, an alarm flow or an MQTT out node. The node is a user of the
 * device like any other: deployed alone, it opens the device's connections to watch them.
 */

const { nodeError } = require('./lib/errors');
const { errorStatus, fromHealth, showStatus } = require('./lib/status');
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
      showStatus(node, fromHealth(health));
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
      const key = JSON.stringify(payload);
      if (key === last) return;
      last = key;
      node.send({ topic, payload });
    });

    node.on('close', (removed, done) => {
      device.hub.deregister(node).then(() => done(), () => done());
    });
  }

  RED.nodes.registerType('nines-device-status', NinesDeviceStatusNode);
};
