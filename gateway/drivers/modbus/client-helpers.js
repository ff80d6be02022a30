'use strict';

/**
 * Thin convenience wrappers on ModbusClient: one method per function code, each building an op and
 * calling request(). They validate the op on every call; a polling loop should validate once
 * (validateOp / parseOpString) and pass the normalized op to request().
 */

const { readDeviceIdentification } = require('./device-id');

/**
 * @typedef {{unitId?: number, timeoutMs?: number}} CallOptions
 */

/** @param {number} fc @param {number} address @param {object} extra @param {CallOptions} [opts] @returns {object} */
function makeOp (fc, address, extra, opts) {
  const op = { fc, address, ...extra };
  if (opts && opts.unitId !== undefined) op.unitId = opts.unitId;
  return op;
}

/** @param {CallOptions} [opts] */
function reqOpts (opts) {
  return opts && opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : undefined;
}

const helpers = {
  /** FC1. @param {number} address @param {number} quantity @param {CallOptions} [opts] @returns {Promise<import('./client').Reply>} data: boolean[] */
  readCoils (address, quantity, opts) { return this.request(makeOp(1, address, { quantity }, opts), reqOpts(opts)); },
  /** FC2. @param {number} address @param {number} quantity @param {CallOptions} [opts] @returns {Promise<import('./client').Reply>} data: boolean[] */
  readDiscreteInputs (address, quantity, opts) { return this.request(makeOp(2, address, { quantity }, opts), reqOpts(opts)); },
  /** FC3. @param {number} address @param {number} quantity @param {CallOptions} [opts] @returns {Promise<import('./client').Reply>} data: uint16[] */
  readHoldingRegisters (address, quantity, opts) { return this.request(makeOp(3, address, { quantity }, opts), reqOpts(opts)); },
  /** FC4. @param {number} address @param {number} quantity @param {CallOptions} [opts] @returns {Promise<import('./client').Reply>} data: uint16[] */
  readInputRegisters (address, quantity, opts) { return this.request(makeOp(4, address, { quantity }, opts), reqOpts(opts)); },
  /** FC5. @param {number} address @param {boolean|0|1} value @param {CallOptions} [opts] @returns {Promise<import('./client').Reply>} */
  writeCoil (address, value, opts) { return this.request(makeOp(5, address, { value }, opts), reqOpts(opts)); },
  /** FC6. @param {number} address @param {number} value uint16 or int16 @param {CallOptions} [opts] @returns {Promise<import('./client').Reply>} */
  writeRegister (address, value, opts) { return this.request(makeOp(6, address, { value }, opts), reqOpts(opts)); },
  /** FC15. @param {number} address @param {Array<boolean|0|1>} values @param {CallOptions} [opts] @returns {Promise<import('./client').Reply>} */
  writeCoils (address, values, opts) { return this.request(makeOp(15, address, { values }, opts), reqOpts(opts)); },
  /** FC16. @param {number} address @param {number[]|Buffer} values @param {CallOptions} [opts] @returns {Promise<import('./client').Reply>} */
  writeRegisters (address, values, opts) { return this.request(makeOp(16, address, { values }, opts), reqOpts(opts)); },
  /**
   * FC22: sets the register to (current AND andMask) OR (orMask AND NOT andMask), in the device: one
   * bit written without a read-modify-write race.
   * @param {number} address @param {number} andMask 0-65535 @param {number} orMask 0-65535 @param {CallOptions} [opts]
   * @returns {Promise<import('./client').Reply>}
   */
  maskWriteRegister (address, andMask, orMask, opts) { return this.request(makeOp(22, address, { andMask, orMask }, opts), reqOpts(opts)); },
  /**
   * FC23: writes values at writeAddress, then reads quantity registers at readAddress, in one request.
   * @param {number} readAddress @param {number} quantity 1-125 @param {number} writeAddress @param {number[]|Buffer} values 1-121
   * @param {CallOptions} [opts] @returns {Promise<import('./client').Reply>} data: uint16[] read
   */
  readWriteRegisters (readAddress, quantity, writeAddress, values, opts) {
    return this.request(makeOp(23, readAddress, { quantity, writeAddress, values }, opts), reqOpts(opts));
  },
  /**
   * FC8 diagnostics.
   * @param {number} subFunction one of op.js DIAGNOSTICS @param {number} [data=0] @param {CallOptions} [opts]
   * @returns {Promise<import('./client').Reply>} data: the reply's data word (the echo, or the counter)
   */
  diagnostics (subFunction, data, opts) {
    const op = { fc: 8, subFunction };
    if (data !== undefined) op.data = data;
    if (opts && opts.unitId !== undefined) op.unitId = opts.unitId;
    return this.request(op, reqOpts(opts));
  },
  /**
   * FC43/14: the device's identification, every piece (several requests when it says more follows).
   * @param {{readCode?: number, objectId?: number} & CallOptions} [opts] readCode 1 basic, 2 regular (default), 3 extended, 4 one object
   * @returns {Promise<import('./device-id').DeviceIdentification>}
   */
  readDeviceIdentification (opts) { return readDeviceIdentification(this, opts); }
};

/**
 * Adds the wrappers to a client class.
 * @param {Function} ClientClass
 */
function install (ClientClass) {
  for (const [name, fn] of Object.entries(helpers)) {
    Object.defineProperty(ClientClass.prototype, name, { value: fn, writable: true, configurable: true });
  }
}

module.exports = { install, helpers };
