'use strict';

/**
 * Thin convenience wrappers on ModbusClient: one method per function code, each building an op and
 * calling request(). They validate the op on every call; a polling loop should validate once
 * (validateOp / parseOpString) and pass the normalized op to request().
 */

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
  writeRegisters (address, values, opts) { return this.request(makeOp(16, address, { values }, opts), reqOpts(opts)); }
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
