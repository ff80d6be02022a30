'use strict';

/**
 * The one place a device spec is checked: config (YAML devices:), Node-RED device config nodes and
 * the CLI all build it here, once, at the edge. The result is plain data (it crosses to worker
 * threads with postMessage) that Device trusts as it is.
 */

const { parseTarget } = require('../drivers/target');
const L = require('./limits');
const F = require('./fields');
const line = require('./line');

const KEYS = Object.freeze(['name', 'label', 'target', 'maxConnections', 'maxInflight', 'timeoutMs', 'connectTimeoutMs', 'backoff', 'queueMax',
  'maxGap', 'maxRegistersPerRequest', 'maxBitsPerRequest', 'addressBase', 'order', 'unsupportedFunctionCodes',
  'interFrameDelayMs', 'delayAfterConnectMs', 'units', 'diagnosticsMs', 'tls']);
/** Fields that shape Modbus requests, with their defaults: an ASCII device has none of them */
const MODBUS_DEFAULTS = Object.freeze({
  maxInflight: L.MAX_INFLIGHT_DEFAULT,
  maxGap: L.MAX_GAP_DEFAULT,
  maxRegistersPerRequest: L.MAX_REGISTERS_PER_REQUEST,
  maxBitsPerRequest: L.MAX_BITS_PER_REQUEST,
  addressBase: 0,
  order: 'ABCD',
  diagnosticsMs: 0
});
const MODBUS_KEYS = Object.freeze([...Object.keys(MODBUS_DEFAULTS), 'unsupportedFunctionCodes']);
const DEVICE_BACKOFF = Object.freeze({ initialMs: L.BACKOFF_INITIAL_MS, maxMs: L.BACKOFF_MAX_MS });
/**
 * The specs this thread built (or was handed by the pool, which built them): a Device takes them as
 * they are. A WeakSet, not a flag on the spec, so raw input cannot claim to be built.
 */
const BUILT = new WeakSet();

/**
 * @typedef {object} DeviceSpec
 * @property {string} name the device's key (in a pool, in YAML)
 * @property {string} label what messages call it: its name, or the name a user gave it
 * @property {import('../drivers/target').Target} target parsed, never parsed again
 * @property {number} maxConnections connections (sockets) the device accepts from us, 1-64
 * @property {number} maxInflight requests one connection may carry at once: 1, or up to 64 on a
 *   Modbus TCP device that serves pipelined requests (replies matched by transaction id)
 * @property {number} timeoutMs per request, counted from the request() call
 * @property {number} connectTimeoutMs per connection attempt
 * @property {{initialMs: number, maxMs: number}} backoff reconnect delays (capped exponential with jitter)
 * @property {number} queueMax requests that may wait per user
 * @property {number} maxGap registers (or bits) a coalesced tag read may read past between two tags
 * @property {number} maxRegistersPerRequest largest register read the device takes (≤ 125, the protocol's)
 * @property {number} maxBitsPerRequest largest coil / discrete-input read the device takes (≤ 2000)
 * @property {0|1} addressBase 1: the device's tag addresses count from 1 (data sheets that number from 1)
 * @property {string} order the device's word and byte order (ABCD, CDAB, BADC, DCBA) for tags that give none
 * @property {number[]} unsupportedFunctionCodes write function codes the device lacks (5, 6, 15, 16,
 *   22), sorted; writes by tag use the one that stands in (FC6 per register for FC16, …); FC22 has
 *   none: a part of a register is then not written
 * @property {number} interFrameDelayMs a pause the line needs between a reply and the next request
 *   (devices that drop a request that comes too soon after their last reply); 0: none
 * @property {number} delayAfterConnectMs a pause after a connection opens before the first request
 *   (serial servers and PLCs that drop what comes right after the connect); 0: none
 * @property {number} diagnosticsMs Modbus: the period of FC8 counter reads shown in the health
 *   (devices/diagnostics.js); 0: none (the default)
 * @property {UnitSpec[]|null} units the units of a line (a serial bus, an RTU-over-TCP socket or a Modbus
 *   TCP gateway): each polled by unit id, with its own health; null: one unit, the target's unitId
 * @property {{ca?: string, cert?: string, key?: string, servername?: string}|null} tls modbus+tls (Modbus/TCP
 *   Security): the PEM texts of the CA(s), the client certificate and its key, and the name the device's
 *   certificate must carry (drivers/tls-options.js); null: Node's bundled root CAs and no client certificate
 */

/**
 * @typedef {object} UnitSpec one unit (slave) on a line
 * @property {string} name
 * @property {number} unitId 1-247 (RTU), 0-247 or 255 (Modbus TCP)
 * @property {{initialMs: number, maxMs: number}} backoff how long a unit that stopped answering is left
 *   alone before it is probed again (growing up to maxMs), while its neighbours keep polling; default
 *   1 s to 10 s, not the line's reconnect backoff: each probe of a silent unit holds the line for a
 *   timeout, so probes must be rare
 * @property {number} maxGap
 * @property {number} maxRegistersPerRequest
 * @property {number} maxBitsPerRequest
 * @property {0|1} addressBase
 * @property {string} order
 * @property {number[]} unsupportedFunctionCodes
 */

/**
 * Validates and defaults a device spec. A spec this module built (or one marked by trustDeviceSpec)
 * is returned as is, so building twice costs nothing and changes nothing.
 * @param {object} input {name, target, maxConnections?, maxInflight?, timeoutMs?, connectTimeoutMs?, backoff?,
 *   queueMax?, maxGap?, maxRegistersPerRequest?, maxBitsPerRequest?};
 *   durations are ms or strings such as "500ms", "1s"
 * @returns {DeviceSpec}
 * @throws {NinesError} NINES_ERR_INVALID_ARG naming the field, or NINES_ERR_INVALID_TARGET from parseTarget
 */
function buildDeviceSpec (input) {
  if (BUILT.has(input)) return input;
  if (input === null || typeof input !== 'object' || Array.isArray(input)) throw F.invalid('device', input, 'must be an object {name, target, ...}');
  for (const key of Object.keys(input)) {
    // A typo such as `timeout: 500` must not silently run with the default
    if (!KEYS.includes(key) && input[key] !== undefined) throw F.invalid(key, input[key], `is not a device option (known: ${KEYS.join(', ')})`);
  }
  const name = input.name;
  if (typeof name !== 'string' || name.trim() === '' || name.length > L.MAX_NAME_LENGTH) {
    throw F.invalid('name', name, `must be a non-empty string of at most ${L.MAX_NAME_LENGTH} characters`);
  }
  // what messages call the device: its name unless another is given (Node-RED names a device by
  // its config node's id, which a user never sees; issue 21)
  const label = input.label === undefined ? name : input.label;
  if (typeof label !== 'string' || label.trim() === '' || label.length > L.MAX_NAME_LENGTH) {
    throw F.invalid('label', label, `must be a non-empty string of at most ${L.MAX_NAME_LENGTH} characters`);
  }
  if (input.target === undefined) throw F.invalid('target', input.target, 'is required (ascii://host:port, modbus+tcp://host:port?unitId=1, modbus+rtu:///dev/tty..., modbus+rtutcp://host:port)');
  const target = parseTarget(input.target);
  const maxConnections = F.intIn(input.maxConnections, 'maxConnections', 1, L.MAX_CONNECTIONS, L.MAX_CONNECTIONS_DEFAULT);
  const timeoutMs = F.ms(input.timeoutMs, 'timeoutMs', L.TIMEOUT_MS);
  const connectTimeoutMs = F.ms(input.connectTimeoutMs, 'connectTimeoutMs', L.CONNECT_TIMEOUT_MS);
  const backoff = F.backoff(input.backoff, 'backoff', DEVICE_BACKOFF);
  const queueMax = F.intIn(input.queueMax, 'queueMax', 1, L.MAX_QUEUE, L.QUEUE_MAX);
  if (target.protocol === 'ascii') {
    // the defaults pass (a spec copied field by field builds again); anything else has no meaning here
    for (const key of MODBUS_KEYS) {
      const v = input[key];
      const isDefault = v === MODBUS_DEFAULTS[key] || (key === 'unsupportedFunctionCodes' && Array.isArray(v) && v.length === 0);
      if (v !== undefined && !isDefault) throw F.invalid(key, v, 'applies to Modbus devices only');
    }
  }
  const maxInflight = F.intIn(input.maxInflight, 'maxInflight', 1, L.MAX_INFLIGHT, L.MAX_INFLIGHT_DEFAULT);
  line.checkDiscipline(target, maxConnections, maxInflight);
  const maxGap = F.intIn(input.maxGap, 'maxGap', 0, L.MAX_GAP, L.MAX_GAP_DEFAULT);
  const maxRegistersPerRequest = F.intIn(input.maxRegistersPerRequest, 'maxRegistersPerRequest', 1, L.MAX_REGISTERS_PER_REQUEST, L.MAX_REGISTERS_PER_REQUEST);
  const maxBitsPerRequest = F.intIn(input.maxBitsPerRequest, 'maxBitsPerRequest', 1, L.MAX_BITS_PER_REQUEST, L.MAX_BITS_PER_REQUEST);
  const addressBase = F.addressBase(input.addressBase, 'addressBase', 0);
  const order = F.order(input.order, 'order', 'ABCD');
  const unsupportedFunctionCodes = F.functionCodes(input.unsupportedFunctionCodes, 'unsupportedFunctionCodes');
  const interFrameDelayMs = F.delay(input.interFrameDelayMs, 'interFrameDelayMs');
  const delayAfterConnectMs = F.delay(input.delayAfterConnectMs, 'delayAfterConnectMs');
  // 0 (or none): no FC8 counters in the health
  const diagnosticsMs = input.diagnosticsMs === undefined || input.diagnosticsMs === 0 ? 0 : F.ms(input.diagnosticsMs, 'diagnosticsMs', 0, L.DIAGNOSTICS_MIN_MS, L.DIAGNOSTICS_MAX_MS);
  const tls = F.tls(input.tls, 'tls', target);
  // A request waits the pause out inside its own timeout; and a device that needs one between a reply
  // and the next request does not take overlapping requests (drivers/connection.js)
  if (interFrameDelayMs >= timeoutMs) throw F.invalid('interFrameDelayMs', input.interFrameDelayMs, `must be shorter than the request timeout (${timeoutMs} ms): a request waits the pause out inside its own timeout`, { bound: 'timeoutMs' });
  if (interFrameDelayMs !== 0 && maxInflight !== 1) throw F.invalid('interFrameDelayMs', input.interFrameDelayMs, `must be 0 with maxInflight ${maxInflight}: a device that needs a pause between a reply and the next request takes one request at a time`, { bound: 'maxInflight' });
  const out = {
    name, label, target, maxConnections, maxInflight, timeoutMs, connectTimeoutMs, backoff, queueMax, maxGap, maxRegistersPerRequest,
    maxBitsPerRequest, addressBase, order, unsupportedFunctionCodes, interFrameDelayMs, delayAfterConnectMs, diagnosticsMs, units: null, tls
  };
  out.units = line.buildUnits(input.units, out);
  return trustDeviceSpec(out);
}

/**
 * Marks a spec as built: one the pool built on another thread and posted here (postMessage copies
 * it, and a copy is not in this thread's set), so the worker's Device takes it as it is.
 * @param {DeviceSpec} spec
 * @returns {DeviceSpec} the same object
 */
function trustDeviceSpec (spec) {
  BUILT.add(spec);
  return spec;
}

/**
 * @param {unknown} spec
 * @returns {boolean} whether buildDeviceSpec built it (or it was trusted as built)
 */
function isBuiltDeviceSpec (spec) {
  return spec !== null && typeof spec === 'object' && BUILT.has(spec);
}

module.exports = {
  buildDeviceSpec,
  trustDeviceSpec,
  isBuiltDeviceSpec,
  // the limits as this module exported them before they had a home of their own (limits.js)
  MAX_CONNECTIONS: L.MAX_CONNECTIONS,
  MAX_INFLIGHT: L.MAX_INFLIGHT,
  MAX_QUEUE: L.MAX_QUEUE,
  DEFAULT_MAX_GAP: L.MAX_GAP_DEFAULT
};
