'use strict';

/**
 * nines-modbus-device: a Modbus TCP server (in clear, or over TLS: Modbus/TCP Security, its certificates
 * from a core tls-config node, the usual Node-RED way), a Modbus RTU serial line, or an RTU line behind a
 * serial server (RTU over TCP). Owns the device in the shared worker pool: its connections (TCP: at most
 * maxConnections; RTU, on a port or behind a serial server: the one line), shared fairly by the
 * nines-modbus-read, nines-modbus-write and nines-poll nodes and the device status nodes that use it;
 * a TCP device may carry several requests per connection (maxInflight, "In flight"); a device that
 * needs a pause between frames or after a connect gets it (interFrameDelay, delayAfterConnect). Holds
 * the "allow writes" switch, off by default so a flow imported from elsewhere cannot move a real
 * actuator by accident. Its dialog's "Scan line" runs `nines scan` on the line it names
 * (lib/scan-admin.js).
 */

const { DeviceHub } = require('./lib/device-hub');
const { modbusDevice } = require('./lib/device-config');
const { poolSettings } = require('./lib/pool-settings');
const { registerScanAdmin } = require('./lib/scan-admin');

module.exports = function (RED) {
  registerScanAdmin(RED);

  function NinesModbusDeviceNode (config) {
    RED.nodes.createNode(this, config);
    const node = this;
    node.name = config.name;

    let settings = null;
    let configError = null;
    try {
      // Modbus/TCP Security: the tls-config node read its files (or holds its uploads) when it started
      const tlsNode = config.transport === 'tls' && config.tls ? RED.nodes.getNode(config.tls) : null;
      settings = modbusDevice(config, node.id, tlsNode);
    } catch (err) {
      // not node.error: the hub says it through the device's first user node (see device-hub.js)
      configError = err;
    }
    node.protocol = 'modbus';
    /** the device spec (devices/spec.js) the poll nodes run their jobs on */
    node.spec = settings ? settings.spec : null;
    node.target = settings ? settings.target.url : null;
    node.unitId = settings ? settings.target.unitId : 1;
    node.timeoutMs = settings ? settings.timeoutMs : null;
    node.allowWrites = settings ? settings.allowWrites : false;
    node.configError = configError;

    // A config node never logs itself: the editor's debug sidebar cannot place a config node's
    // warning (path "global", no flow). A user node of the device says it, once per change of code.
    const poolWarnings = [];
    const device = node.name || node.target || node.id;
    node.hub = new DeviceHub({
      spec: node.spec,
      configError,
      configText: configError ? RED._('nines-modbus-device.errors.config', { device, message: configError.message }) : undefined,
      pool: poolSettings(RED, (text) => poolWarnings.push(text)),
      describe: (err) => RED._('nines-modbus-device.errors.connection', { device, code: err.code, message: err.message }),
      describeWarning: (w) => RED._('nines-modbus-device.errors.warning', { device, code: w.code, message: w.message })
    });
    for (const text of poolWarnings) node.hub.report('warn', text);

    node.on('close', (removed, done) => {
      node.hub.close().then(() => done(), () => done());
    });
  }

  RED.nodes.registerType('nines-modbus-device', NinesModbusDeviceNode);
};
