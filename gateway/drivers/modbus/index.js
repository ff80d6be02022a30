'use strict';

/**
 * Modbus driver entry point: createClient(target, opts) is the factory the scheduler, the gateway and
 * the Node-RED nodes use; the rest is re-exported for callers that validate ops up front or decode PDUs.
 */

const { NinesError } = require('../../base/errors');
const { parseTarget } = require('../target');
const { ModbusClient, Reply } = require('./client');
const { validateOp, parseOpString, toOp, describeOp, formatOp, changesDevice, FC_NAMES, DIAGNOSTICS } = require('./op');
const { readDeviceIdentification } = require('./device-id');
const { encodeRequestPdu, decodeResponsePdu, responsePduLength } = require('./pdu');
const frame = require('./frame');

/**
 * Creates a client for a modbus+tcp://, modbus+tls://, modbus+rtu:// or modbus+rtutcp:// target (not connected yet: call connect(),
 * or just request(), which connects).
 * @param {string|object} target URL or parsed Target (gateway/drivers/target.js)
 * @param {import('./client-options').ClientOptions} [opts]
 * @returns {ModbusClient}
 * @throws {NinesError} NINES_ERR_INVALID_TARGET for another scheme; NINES_ERR_INVALID_ARG for a bad option
 */
function createClient (target, opts) {
  const t = parseTarget(target);
  if (t.protocol === 'ascii') {
    throw new NinesError('NINES_ERR_INVALID_TARGET', `createClient (modbus) takes modbus+tcp://, modbus+tls://, modbus+rtu:// or modbus+rtutcp:// targets; got ${t.protocol}://`, { target: t.url });
  }
  return new ModbusClient(t, opts);
}

module.exports = {
  createClient,
  ModbusClient,
  Reply,
  validateOp,
  parseOpString,
  toOp,
  describeOp,
  formatOp,
  changesDevice,
  readDeviceIdentification,
  FC_NAMES,
  DIAGNOSTICS,
  encodeRequestPdu,
  decodeResponsePdu,
  responsePduLength,
  frame
};
