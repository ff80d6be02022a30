'use strict';

/**
 * nines-modbus-device: a Modbus TCP server or a Modbus RTU serial line. Owns the ModbusClient
 * used by nines-modbus-read and nines-modbus-write, and holds the "allow writes" switch, off
 * by default so a flow imported from elsewhere cannot move a real actuator by accident.
 */

const { DeviceHub } = require('./lib/device-hub');
const { modbusDevice } = require('./lib/device-config');
const { formatTarget } = require('../gateway/drivers/target');

module.exports = function (RED) {
  function NinesModbusDeviceNode (config) {
    RED.nodes.createNode(this, config);
    const node = this;
    node.name = config.name;

    let settings = null;
    let configError = null;
    try {
      settings = modbusDevice(config);
    } catch (err) {
      configError = err;
      node.error(RED._('nines-modbus-device.errors.config', { message: err.message }));
    }
    node.protocol = 'modbus';
    node.target = settings ? formatTarget(settings.target) : null;
    node.unitId = settings ? settings.target.unitId : 1;
    node.timeoutMs = settings ? settings.timeoutMs : null;
    node.allowWrites = settings ? settings.allowWrites : false;
    node.configError = configError;

    node.hub = new DeviceHub({
      configError,
      // RTU is one bus: one connection. TCP: one, as most PLCs serve few connections
      connections: 1,
      createClient: () => {
        const { createClient } = require('../gateway/drivers/modbus');
        return createClient(settings.target, { timeoutMs: settings.timeoutMs, reconnect: true });
      },
      onError: (err) => node.warn(RED._('nines-modbus-device.errors.connection', { target: node.target, code: err.code, message: err.message }))
    });

    node.on('close', (removed, done) => {
      node.hub.close().then(() => done(), () => done());
    });
  }

  RED.nodes.registerType('nines-modbus-device', NinesModbusDeviceNode);
};
