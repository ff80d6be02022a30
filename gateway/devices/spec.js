'use strict';

/**
 * The one place a device spec is checked: config (YAML devices:), Node-RED device config nodes and
 * the CLI all build it here, once, at the edge. The result is plain data (it crosses to worker
 * threads with postMessage) that Device trusts as it is.
 */

const { NinesError } = require('../base/errors');
const { parseDuration } = require('../base/units');
const { parseTarget } = require('../drivers/target');
const C = require('../base/constants');

/** setTimeout's ceiling: longer delays fire at once */
const MAX_TIMER_MS = 2 ** 31 - 1;
const MAX_CONNECTIONS = 64;
const MAX_QUEUE = 100000;
const MAX_NAME_LENGTH = 256;
/** Requests one Modbus TCP connection may carry at once (pipelining), when the device allows it */
const MAX_INFLIGHT = 64;
/** Registers or bits a coalesced read may skip between two tags (gateway/tags/plan.js) */
const DEFAULT_MAX_GAP = C.TAGS_MAX_GAP;
const MAX_GAP = C.MODBUS_MAX_READ_BITS;
const KEYS = Object.freeze(['name', 'label', 'target', 'maxConnections', 'maxInflight', 'timeoutMs', 'connectTimeoutMs', 'backoff', 'queueMax',
  'maxGap', 'maxRegistersPerRequest', 'maxBitsPerRequest', 'addressBase', 'order', 'unsupportedFunctionCodes',
  'interFrameDelayMs', 'delayAfterConnectMs', 'units']);
/** What a unit of a line may set for itself; the rest it takes from its device */
const UNIT_KEYS = Object.freeze(['name', 'unitId', 'backoff', 'maxGap', 'maxRegistersPerRequest', 'maxBitsPerRequest', 'addressBase', 'order', 'unsupportedFunctionCodes']);
/** Quirks a unit inherits from its line unless it sets its own */
const UNIT_INHERITS = Object.freeze(['maxGap', 'maxRegistersPerRequest', 'maxBitsPerRequest', 'addressBase', 'order', 'unsupportedFunctionCodes']);
const MAX_UNITS = 247;
/** A unit's name, as config names are (runtime/config/defaults.js NAME_PATTERN) */
const UNIT_NAME_RE = new RegExp(`^${C.NOT_RESERVED}[A-Za-z0-9_.-]{1,64}$`);
/** Longest line quirk delay (ms): beyond it a device is not a device that needs a pause, it is down */
const MAX_QUIRK_DELAY_MS = 60000;
/** Write function codes a device may lack, each with the one that stands in for it (tags/write.js) */
const OPTIONAL_FUNCTION_CODES = Object.freeze([5, 6, 15, 16]);
const ORDERS = Object.freeze(['ABCD', 'CDAB', 'BADC', 'DCBA']);
/** Fields that shape Modbus requests, with their defaults: an ASCII device has none of them */
const MODBUS_DEFAULTS = Object.freeze({ maxInflight: 1, maxGap: C.TAGS_MAX_GAP, maxRegistersPerRequest: C.MODBUS_MAX_READ_REGISTERS, maxBitsPerRequest: C.MODBUS_MAX_READ_BITS, addressBase: 0, order: 'ABCD' });
const MODBUS_KEYS = Object.freeze([...Object.keys(MODBUS_DEFAULTS), 'unsupportedFunctionCodes']);
const BACKOFF_KEYS = Object.freeze(['initialMs', 'maxMs']);

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
 * @property {number[]} unsupportedFunctionCodes write function codes the device lacks (5, 6, 15, 16),
 *   sorted; writes by tag use the one that stands in (FC6 per register for FC16, …)
 * @property {number} interFrameDelayMs a pause the line needs between a reply and the next request
 *   (devices that drop a request that comes too soon after their last reply); 0: none
 * @property {number} delayAfterConnectMs a pause after a connection opens before the first request
 *   (serial servers and PLCs that drop what comes right after the connect); 0: none
 * @property {UnitSpec[]|null} units the units of a line (a serial bus, an RTU-over-TCP socket or a Modbus
 *   TCP gateway): each polled by unit id, with its own health; null: one unit, the target's unitId
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
 * Validates and defaults a device spec. A spec that is already built (every field present and
 * valid, the target parsed) is returned as is, so building twice costs nothing and changes nothing.
 * @param {object} input {name, target, maxConnections?, maxInflight?, timeoutMs?, connectTimeoutMs?, backoff?,
 *   queueMax?, maxGap?, maxRegistersPerRequest?, maxBitsPerRequest?};
 *   durations are ms or strings such as "500ms", "1s"
 * @returns {DeviceSpec}
 * @throws {NinesError} NINES_ERR_INVALID_ARG naming the field, or NINES_ERR_INVALID_TARGET from parseTarget
 */
function buildDeviceSpec (input) {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) throw invalid('device', input, 'must be an object {name, target, ...}');
  for (const key of Object.keys(input)) {
    // A typo such as `timeout: 500` must not silently run with the default
    if (!KEYS.includes(key) && input[key] !== undefined) throw invalid(key, input[key], `is not a device option (known: ${KEYS.join(', ')})`);
  }
  const name = input.name;
  if (typeof name !== 'string' || name.trim() === '' || name.length > MAX_NAME_LENGTH) {
    throw invalid('name', name, `must be a non-empty string of at most ${MAX_NAME_LENGTH} characters`);
  }
  // what messages call the device: its name unless another is given (Node-RED names a device by
  // its config node's id, which a user never sees; issue 21)
  const label = input.label === undefined ? name : input.label;
  if (typeof label !== 'string' || label.trim() === '' || label.length > MAX_NAME_LENGTH) {
    throw invalid('label', label, `must be a non-empty string of at most ${MAX_NAME_LENGTH} characters`);
  }
  if (input.target === undefined) throw invalid('target', input.target, 'is required (ascii://host:port, modbus+tcp://host:port?unitId=1, modbus+rtu:///dev/tty..., modbus+rtutcp://host:port)');
  const target = parseTarget(input.target);
  const maxConnections = intIn(input.maxConnections, 'maxConnections', 1, MAX_CONNECTIONS, 1);
  // A serial port opens once: a second client on the same line could only fail or interleave frames.
  // A serial server's port is one line too: most take one client, and those that take several send
  // every reply to all of them (drivers/modbus/rtutcp-transport.js)
  if ((target.protocol === 'modbus+rtu' || target.protocol === 'modbus+rtutcp') && maxConnections !== 1) throw invalid('maxConnections', maxConnections, `must be 1 for a ${target.protocol} target (one serial line)`);
  const timeoutMs = ms(input.timeoutMs, 'timeoutMs', C.DEFAULT_TIMEOUT_MS);
  const connectTimeoutMs = ms(input.connectTimeoutMs, 'connectTimeoutMs', C.DEFAULT_CONNECT_TIMEOUT_MS);
  const backoff = buildBackoff(input.backoff);
  const queueMax = intIn(input.queueMax, 'queueMax', 1, MAX_QUEUE, C.DEFAULT_QUEUE_MAX);
  if (target.protocol === 'ascii') {
    // the defaults pass (a built spec is rebuilt in its worker as it is); anything else has no meaning here
    for (const key of MODBUS_KEYS) {
      const v = input[key];
      const isDefault = v === MODBUS_DEFAULTS[key] || (key === 'unsupportedFunctionCodes' && Array.isArray(v) && v.length === 0);
      if (v !== undefined && !isDefault) throw invalid(key, v, 'applies to Modbus devices only');
    }
  }
  const maxInflight = intIn(input.maxInflight, 'maxInflight', 1, MAX_INFLIGHT, 1);
  // Pipelining needs transaction ids to match replies; RTU has none, one frame is on the line at a time
  if (maxInflight !== 1 && target.protocol !== 'modbus+tcp') throw invalid('maxInflight', maxInflight, 'must be 1 unless the target is modbus+tcp (only Modbus TCP matches replies by transaction id)');
  const maxGap = intIn(input.maxGap, 'maxGap', 0, MAX_GAP, DEFAULT_MAX_GAP);
  const maxRegistersPerRequest = intIn(input.maxRegistersPerRequest, 'maxRegistersPerRequest', 1, C.MODBUS_MAX_READ_REGISTERS, C.MODBUS_MAX_READ_REGISTERS);
  const maxBitsPerRequest = intIn(input.maxBitsPerRequest, 'maxBitsPerRequest', 1, C.MODBUS_MAX_READ_BITS, C.MODBUS_MAX_READ_BITS);
  const addressBase = input.addressBase === undefined ? 0 : input.addressBase;
  if (addressBase !== 0 && addressBase !== 1) throw invalid('addressBase', addressBase, 'must be 0 (protocol addresses) or 1 (data sheets that count registers from 1)');
  const order = input.order === undefined ? 'ABCD' : input.order;
  if (!ORDERS.includes(order)) throw invalid('order', order, `must be one of ${ORDERS.join(', ')}`);
  const unsupportedFunctionCodes = functionCodes(input.unsupportedFunctionCodes);
  const interFrameDelayMs = delay(input.interFrameDelayMs, 'interFrameDelayMs');
  const delayAfterConnectMs = delay(input.delayAfterConnectMs, 'delayAfterConnectMs');
  // A request waits the pause out inside its own timeout; and a device that needs one between a reply
  // and the next request does not take overlapping requests (drivers/connection.js)
  if (interFrameDelayMs >= timeoutMs) throw invalid('interFrameDelayMs', input.interFrameDelayMs, `must be shorter than the request timeout (${timeoutMs} ms): a request waits the pause out inside its own timeout`);
  if (interFrameDelayMs !== 0 && maxInflight !== 1) throw invalid('interFrameDelayMs', input.interFrameDelayMs, `must be 0 with maxInflight ${maxInflight}: a device that needs a pause between a reply and the next request takes one request at a time`);
  const out = {
    name, label, target, maxConnections, maxInflight, timeoutMs, connectTimeoutMs, backoff, queueMax, maxGap, maxRegistersPerRequest,
    maxBitsPerRequest, addressBase, order, unsupportedFunctionCodes, interFrameDelayMs, delayAfterConnectMs, units: null
  };
  out.units = buildUnits(input.units, out);
  // Already built: hand back the same object (a worker receiving a spec must not pay twice)
  return target === input.target && sameFields(input, out) ? input : out;
}

/** Whether a spec given as input already holds exactly what building it gives (the target aside). */
function sameFields (input, out) {
  for (const key of KEYS) {
    if (key === 'target') continue;
    const a = input[key];
    const b = out[key];
    if (a === b) continue;
    if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object' || JSON.stringify(a) !== JSON.stringify(b)) return false;
  }
  return true;
}

/**
 * The units of a line: a serial bus of RTU slaves, an RTU-over-TCP socket to a serial server, or a
 * Modbus TCP gateway with many unit ids behind one address. Each unit is polled by its unit id and
 * has its own health: one that stops answering is left alone for its backoff while the others keep
 * their rate (devices/units.js).
 * @param {unknown} raw a list of {name, unitId, backoff?, quirks?}, or undefined for a single-unit device
 * @param {object} device the device spec being built
 * @returns {UnitSpec[]|null}
 */
function buildUnits (raw, device) {
  if (raw === undefined || raw === null) return null;
  if (device.target.protocol === 'ascii') throw invalid('units', raw, 'applies to Modbus devices only (a line of units with unit ids)');
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_UNITS) throw invalid('units', raw, `must be a list of 1 to ${MAX_UNITS} units {name, unitId}`);
  const rtu = device.target.protocol !== 'modbus+tcp';
  const names = new Set();
  const ids = new Set();
  return raw.map((u, i) => {
    const at = `units[${i}]`;
    if (u === null || typeof u !== 'object' || Array.isArray(u)) throw invalid(at, u, 'must be an object {name, unitId}');
    for (const key of Object.keys(u)) {
      if (!UNIT_KEYS.includes(key) && u[key] !== undefined) throw invalid(`${at}.${key}`, u[key], `is not a unit option (known: ${UNIT_KEYS.join(', ')})`);
    }
    if (typeof u.name !== 'string' || !UNIT_NAME_RE.test(u.name)) throw invalid(`${at}.name`, u.name, `must be 1-64 letters, digits, _ . or -, not ${C.RESERVED_NAME} (it names the unit in topics and statuses)`);
    if (names.has(u.name)) throw invalid(`${at}.name`, u.name, 'is the name of another unit of this device');
    names.add(u.name);
    // RTU: 0 is broadcast (no replies) and 248-255 are reserved; over TCP 255 (and 0) address the
    // device itself, as the TCP implementation guide allows
    const okId = Number.isInteger(u.unitId) && (rtu ? u.unitId >= 1 && u.unitId <= 247 : (u.unitId >= 0 && u.unitId <= 247) || u.unitId === 255);
    if (!okId) throw invalid(`${at}.unitId`, u.unitId, rtu ? 'must be an integer from 1 to 247 on a serial line (0 is broadcast, which nobody answers)' : 'must be an integer from 0 to 247, or 255');
    if (ids.has(u.unitId)) throw invalid(`${at}.unitId`, u.unitId, 'is the unit id of another unit of this device');
    ids.add(u.unitId);
    const unit = { name: u.name, unitId: u.unitId, backoff: u.backoff === undefined ? { initialMs: C.UNIT_BACKOFF_INITIAL_MS, maxMs: C.UNIT_BACKOFF_MAX_MS } : buildBackoff(u.backoff, `${at}.backoff`) };
    for (const key of UNIT_INHERITS) unit[key] = device[key];
    if (u.maxGap !== undefined) unit.maxGap = intIn(u.maxGap, `${at}.maxGap`, 0, MAX_GAP, device.maxGap);
    if (u.maxRegistersPerRequest !== undefined) unit.maxRegistersPerRequest = intIn(u.maxRegistersPerRequest, `${at}.maxRegistersPerRequest`, 1, C.MODBUS_MAX_READ_REGISTERS, device.maxRegistersPerRequest);
    if (u.maxBitsPerRequest !== undefined) unit.maxBitsPerRequest = intIn(u.maxBitsPerRequest, `${at}.maxBitsPerRequest`, 1, C.MODBUS_MAX_READ_BITS, device.maxBitsPerRequest);
    if (u.addressBase !== undefined) {
      if (u.addressBase !== 0 && u.addressBase !== 1) throw invalid(`${at}.addressBase`, u.addressBase, 'must be 0 or 1');
      unit.addressBase = u.addressBase;
    }
    if (u.order !== undefined) {
      if (!ORDERS.includes(u.order)) throw invalid(`${at}.order`, u.order, `must be one of ${ORDERS.join(', ')}`);
      unit.order = u.order;
    }
    if (u.unsupportedFunctionCodes !== undefined) unit.unsupportedFunctionCodes = functionCodes(u.unsupportedFunctionCodes, `${at}.unsupportedFunctionCodes`);
    return unit;
  });
}

/** A line quirk delay: whole ms from 0 to a minute (or a duration such as "5ms") */
function delay (v, field) {
  if (v === undefined || v === 0) return 0;
  const n = typeof v === 'string' ? ms(v, field, 0) : v;
  if (!Number.isInteger(n) || n < 0 || n > MAX_QUIRK_DELAY_MS) throw invalid(field, v, `must be a whole number of ms from 0 to ${MAX_QUIRK_DELAY_MS} (or a duration such as "5ms")`);
  return n;
}

/** @returns {number[]} the write function codes a device lacks, sorted; FC5 and FC15 (or FC6 and FC16) not both */
function functionCodes (raw, field = 'unsupportedFunctionCodes') {
  if (raw === undefined) return [];
  if (!Array.isArray(raw) || raw.some((fc) => !OPTIONAL_FUNCTION_CODES.includes(fc))) {
    throw invalid(field, raw, `must be a list of the write function codes the device lacks: ${OPTIONAL_FUNCTION_CODES.join(', ')}`);
  }
  const list = [...new Set(raw)].sort((a, b) => a - b);
  // each write needs one of a pair: FC5 or FC15 for coils, FC6 or FC16 for registers
  if (list.includes(5) && list.includes(15)) throw invalid(field, raw, 'cannot hold both 5 and 15: coils could not be written at all');
  if (list.includes(6) && list.includes(16)) throw invalid(field, raw, 'cannot hold both 6 and 16: registers could not be written at all');
  return list;
}

/** @returns {{initialMs: number, maxMs: number}} */
function buildBackoff (raw, field = 'backoff') {
  if (raw === undefined) return { initialMs: C.BACKOFF_INITIAL_MS, maxMs: C.BACKOFF_MAX_MS };
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw invalid(field, raw, 'must be an object {initialMs, maxMs}');
  for (const key of Object.keys(raw)) {
    if (!BACKOFF_KEYS.includes(key) && raw[key] !== undefined) throw invalid(`${field}.${key}`, raw[key], 'is not a backoff option (known: initialMs, maxMs)');
  }
  const initialMs = ms(raw.initialMs, `${field}.initialMs`, C.BACKOFF_INITIAL_MS);
  // Only initialMs given and above the default cap: the cap follows it rather than failing
  const maxMs = ms(raw.maxMs, `${field}.maxMs`, Math.max(initialMs, C.BACKOFF_MAX_MS));
  if (maxMs < initialMs) throw invalid(`${field}.maxMs`, raw.maxMs, `must be at least ${field}.initialMs (${initialMs})`);
  return { initialMs, maxMs };
}

/** A duration field: integer ms from 1 to the timer ceiling; a string is read by parseDuration. */
function ms (v, field, dflt) {
  if (v === undefined) return dflt;
  let n = v;
  if (typeof v === 'string') {
    try { n = parseDuration(v, field); } catch (err) { throw invalid(field, v, 'must be a whole number of ms or a duration such as "500ms", "1s"'); }
  }
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_TIMER_MS) {
    throw invalid(field, v, `must be a whole number of ms from 1 to ${MAX_TIMER_MS} (or a duration such as "500ms", "1s")`);
  }
  return n;
}

function intIn (v, field, lo, hi, dflt) {
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi) throw invalid(field, v, `must be an integer from ${lo} to ${hi}`);
  return v;
}

function invalid (field, value, rule) {
  return new NinesError('NINES_ERR_INVALID_ARG', `device ${field} ${rule}; got ${show(value)}`, { field, value, rule });
}

/** @returns {string} the value as the message shows it (never throws: BigInt and cycles are possible input) */
function show (value) {
  if (value === undefined) return 'nothing';
  try { return JSON.stringify(value) ?? String(value); } catch (err) { return String(value); }
}

module.exports = { buildDeviceSpec, MAX_CONNECTIONS, MAX_INFLIGHT, MAX_QUEUE, MAX_TIMER_MS, DEFAULT_MAX_GAP };
