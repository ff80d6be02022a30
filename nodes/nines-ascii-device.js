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
      // not node.error: the hub says it through the device's first user node (see device-hub.js)
      configError = err;
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

    // A config node never logs itself: the editor's debug sidebar cannot place a config node's
    // warning (path "global", no flow). A user node of the device says it, once per change of code.
    const poolWarnings = [];
    const device = node.name || node.target || node.id;
    node.hub = new DeviceHub({
      spec: node.spec,
      configError,
      configText: configError ? RED._('nines-ascii-device.errors.config', { device, message: configError.message }) : undefined,
      pool: poolSettings(RED, (text) => poolWarnings.push(text)),
      describe: (err) => RED._('nines-ascii-device.errors.connection', { device, code: err.code, message: err.message })
    });
    for (const text of poolWarnings) node.hub.report('warn', text);

    // The module's model, asked once (`$AAM`, as the vendor's tools do) when a node first needs
    // it: outputs given as data are checked against the lines it has (nines-ascii). A failed ask
    // is not kept, so the next need asks again; a name it does not recognise is null.
    let model = null;
    /**
     * @param {string} user the asking node's id
     * @returns {Promise<string|null>} the module's `$AAM` name, or null when it does not give one
     */
    node.model = (user) => {
      if (model === null) {
        model = node.hub.request(`$${node.address}M`, user).then((reply) => reply.name || null, (err) => { model = null; throw err; });
      }
      return model;
    };

    node.on('close', (removed, done) => {
      node.hub.close().then(() => done(), () => done());
    });
  }

  RED.nodes.registerType('nines-ascii-device', NinesAsciiDeviceNode);
};
