'use strict';

/**
 * nines-ascii-device: a Brainboxes ED / DCON device on TCP. Owns the device in the shared worker
 * pool: its connections (at most maxConnections), shared fairly by the nines-ascii and nines-poll
 * nodes and the device status nodes that use it. nines-latency-probe takes its target and opens
 * connections of its own for the length of a test.
 */

const { DeviceHub } = require('./lib/device-hub');
const { asciiDevice } = require('./lib/device-config');
const { poolSettings } = require('./lib/pool-settings');

module.exports = function (RED) {
  function NinesAsciiDeviceNode (config) {
    RED.nodes.createNode(this, config);
    const node = this;
    node.name = config.name;

    let settings = null;
    let configError = null;
    try {
      settings = asciiDevice(config, node.id);
    } catch (err) {
      configError = err;
      node.error(RED._('nines-ascii-device.errors.config', { message: err.message }));
    }
    node.protocol = 'ascii';
    /** the device spec (devices/spec.js) the poll nodes run their jobs on */
    node.spec = settings ? settings.spec : null;
    /** for the latency probe, which opens its own connections: the target URL and timeout */
    node.target = settings ? settings.target.url : null;
    node.address = settings ? settings.target.address : null;
    node.checksum = settings ? settings.target.checksum : false;
    node.timeoutMs = settings ? settings.timeoutMs : null;
    node.configError = configError;

    node.hub = new DeviceHub({
      spec: node.spec,
      configError,
      pool: poolSettings(RED, (text) => node.warn(text)),
      onError: (err) => node.warn(RED._('nines-ascii-device.errors.connection', { target: node.target, code: err.code, message: err.message }))
    });

    node.on('close', (removed, done) => {
      node.hub.close().then(() => done(), () => done());
    });
  }

  RED.nodes.registerType('nines-ascii-device', NinesAsciiDeviceNode);
};
