'use strict';

/**
 * What nines-poll, nines-latency-probe and nines-device-status share: the device (ASCII or Modbus
 * config node, by the node's protocol) and, for the first two, the operation to run, built from the
 * node's settings and checked. A poll runs on the device's connections (its spec); a probe takes the
 * device's target and opens connections of its own for the length of a test.
 */

const { invalidArg } = require('./errors');
const { intField } = require('./modbus-msg');

/**
 * @param {object} RED
 * @param {object} config {protocol, asciiDevice, modbusDevice}
 * @returns {{device: object, protocol: 'ascii'|'modbus'}}
 * @throws {NinesError} NINES_ERR_INVALID_ARG when the protocol or device is missing or broken
 */
function pickDevice (RED, config) {
  const protocol = config.protocol || 'ascii';
  if (protocol !== 'ascii' && protocol !== 'modbus') throw invalidArg('protocol', `protocol must be "ascii" or "modbus"; got ${JSON.stringify(protocol)}`);
  const id = protocol === 'ascii' ? config.asciiDevice : config.modbusDevice;
  const device = id ? RED.nodes.getNode(id) : null;
  if (!device) throw invalidArg(protocol === 'ascii' ? 'asciiDevice' : 'modbusDevice', `no nines-${protocol}-device is selected (protocol is ${protocol})`);
  if (device.configError) throw device.configError;
  return { device, protocol };
}

/**
 * The operation of the job or probe: `{command}` / `{generator}` for ASCII, `{read}` for Modbus.
 * @param {object} config {command, generator, fc, address, quantity}
 * @param {'ascii'|'modbus'} protocol
 * @returns {{command?: string, generator?: string, read?: {fc: number, address: number, quantity: number}}}
 */
function operation (config, protocol) {
  if (protocol === 'ascii') {
    if (config.generator) return { generator: String(config.generator) };
    const command = typeof config.command === 'string' ? config.command.trim() : '';
    if (!command) throw invalidArg('command', 'command is empty; give an ASCII command such as @01');
    return { command };
  }
  const fc = intField(config.fc, 'fc', 1, 4);
  return {
    read: {
      fc,
      address: intField(config.address, 'address', 0, 65535),
      quantity: intField(config.quantity, 'quantity', 1, fc <= 2 ? 2000 : 125)
    }
  };
}

/**
 * A list of connection counts, "1,2,4,8" → [1, 2, 4, 8].
 * @param {string|number} text
 * @returns {number[]}
 */
function connectionList (text) {
  const parts = String(text === undefined || text === '' ? '1' : text).split(',').map((s) => s.trim());
  return parts.map((p) => intField(p, 'connections', 1, 64));
}

module.exports = { pickDevice, operation, connectionList };
