'use strict';

/**
 * nines-ascii-device: a Brainboxes ED / DCON device on TCP. Owns the AsciiClient connections used
 * by nines-ascii nodes and hands its target to nines-poll and nines-latency-probe, which open
 * their own connections in a worker thread.
 */

const { DeviceHub } = require('./lib/device-hub');
const { asciiDevice } = require('./lib/device-config');
const { formatTarget } = require('../gateway/drivers/target');

module.exports = function (RED) {
  function NinesAsciiDeviceNode (config) {
    RED.nodes.createNode(this, config);
    const node = this;
    node.name = config.name;

    let settings = null;
    let configError = null;
    try {
      settings = asciiDevice(config);
    } catch (err) {
      configError = err;
      node.error(RED._('nines-ascii-device.errors.config', { message: err.message }));
    }
    /** For nodes that open their own connections (poll, probe): the target URL and timeout */
    node.protocol = 'ascii';
    node.target = settings ? formatTarget(settings.target) : null;
    node.address = settings ? settings.target.address : null;
    node.checksum = settings ? settings.target.checksum : false;
    node.timeoutMs = settings ? settings.timeoutMs : null;
    node.configError = configError;

    node.hub = new DeviceHub({
      configError,
      connections: settings ? settings.connections : 1,
      // required here, not at the top: the driver loads only when a node uses the device
      createClient: () => {
        const { AsciiClient } = require('../gateway/drivers/ascii');
        return new AsciiClient(settings.target, { timeoutMs: settings.timeoutMs, reconnect: true });
      },
      onError: (err) => node.warn(RED._('nines-ascii-device.errors.connection', { target: node.target, code: err.code, message: err.message }))
    });

    node.on('close', (removed, done) => {
      node.hub.close().then(() => done(), () => done());
    });
  }

  RED.nodes.registerType('nines-ascii-device', NinesAsciiDeviceNode);
};
