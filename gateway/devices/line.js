'use strict';

/**
 * A line of units: many Modbus unit ids (slaves) behind one serial port, one RTU-over-TCP socket to a
 * serial server, or one Modbus TCP gateway, all sharing the line. This module owns what a line is:
 * - its discipline: a serial line (RTU, RTU over TCP) is one connection carrying one request at a
 *   time, and one device owns it (no two devices on one port);
 * - its units: each with a unit id in the line's range, a name, its own re-probe backoff and quirks
 *   over the line's (buildUnits);
 * - which unit a job names (resolveUnit), and the target its requests and summaries carry (unitTarget).
 * Each unit's health at runtime is devices/unit-health.js; the Node-RED dialog's unit list is read by
 * resources/nines-units.js, which holds the unit-id rule the editor and this module share.
 */

const C = require('../base/constants');
const { formatTarget, isMbap } = require('../drivers/target');
const unitList = require('../../resources/nines-units');
const F = require('./fields');
const { isName, NAME_RULE } = require('../base/names');
const L = require('./limits');

/** Units one line may hold (Modbus unit ids 1-247; the editor's list reads the same number) */
const MAX_UNITS = unitList.MAX_UNITS;
/** What a unit of a line may set for itself; the rest it takes from its device */
const UNIT_KEYS = Object.freeze(['name', 'unitId', 'backoff', 'maxGap', 'maxRegistersPerRequest', 'maxBitsPerRequest', 'addressBase', 'order', 'unsupportedFunctionCodes']);
/** Quirks a unit inherits from its line unless it sets its own */
const UNIT_INHERITS = Object.freeze(['maxGap', 'maxRegistersPerRequest', 'maxBitsPerRequest', 'addressBase', 'order', 'unsupportedFunctionCodes']);
/**
 * A silent unit is probed after this, doubling to the max: each probe holds the line for a timeout,
 * so they must be rare (industrial masters demote a silent slave for about 10 s too)
 */
const UNIT_BACKOFF = Object.freeze({ initialMs: C.UNIT_BACKOFF_INITIAL_MS, maxMs: C.UNIT_BACKOFF_MAX_MS });

/**
 * @param {{protocol: string}} target
 * @returns {boolean} whether the target is a serial line (RTU, or RTU frames through a serial server)
 */
function isSerialLine (target) {
  return target.protocol === 'modbus+rtu' || target.protocol === 'modbus+rtutcp';
}

/** The unit-id rule's transport (resources/nines-units.js) of a target */
function transportOf (target) {
  return isMbap(target) ? 'tcp' : target.protocol === 'modbus+rtutcp' ? 'rtutcp' : 'rtu';
}

/**
 * The serial-line discipline of a device's connections: one connection, one request in flight.
 * A serial port opens once; a serial server's port is one line too: most take one client, and
 * those that take several send every reply to all of them (drivers/modbus/rtutcp-transport.js).
 * Pipelining needs Modbus TCP's transaction id to match replies.
 * @param {{protocol: string}} target
 * @param {number} maxConnections
 * @param {number} maxInflight
 * @throws {import('../base/errors').NinesError} NINES_ERR_INVALID_ARG naming the field
 */
function checkDiscipline (target, maxConnections, maxInflight) {
  if (isSerialLine(target) && maxConnections !== 1) throw F.invalid('maxConnections', maxConnections, `must be 1 for a ${target.protocol} target (one serial line)`);
  if (maxInflight !== 1 && !isMbap(target)) throw F.invalid('maxInflight', maxInflight, 'must be 1 unless the target is modbus+tcp or modbus+tls (only Modbus TCP matches replies by transaction id)');
}

/**
 * The one line a serial target uses, as messages name it; null when the target is no serial line.
 * @param {object} target parsed
 * @returns {string|null}
 */
function lineOf (target) {
  if (target.protocol === 'modbus+rtu') return `serial port ${target.path}`;
  if (target.protocol === 'modbus+rtutcp') return `serial server port ${target.host.toLowerCase()}:${target.port}`;
  return null;
}

/**
 * Devices that use a line another device has: a serial port opens once, so the second could never
 * connect; a serial server's port takes one client (or sends every reply to all of them, where
 * nothing can tell whose it is). One device owns a line; the line's slaves are its units.
 * @param {Array<{name: string, target: object}>} devices
 * @returns {Array<{name: string, owner: string, line: string, rule: string}>}
 */
function sharedLines (devices) {
  const owners = new Map();
  const out = [];
  for (const d of devices) {
    const line = lineOf(d.target);
    if (line === null) continue;
    const owner = owners.get(line);
    if (owner === undefined) { owners.set(line, d.name); continue; }
    out.push({
      name: d.name,
      owner,
      line,
      rule: `uses the ${line}, as device "${owner}" does: one serial line is one device, ` +
        (d.target.protocol === 'modbus+rtu' ? 'and a serial port opens once' : 'and a serial server port takes one client (or sends every reply to all of them)') +
        `; list the line's slaves as units of one device (devices.${owner}.units)`
    });
  }
  return out;
}

/**
 * Whether a unit id may be on this line: 1-247 on a serial line (0 is broadcast, which nobody
 * answers; 248-255 are reserved); 0-247 or 255 behind a Modbus TCP gateway, as the TCP
 * implementation guide allows (0 and 255 address the gateway itself).
 * @param {unknown} id @param {{protocol: string}} target
 * @returns {boolean}
 */
function unitIdAllowed (id, target) {
  return Number.isInteger(id) && unitList.allowed(id, transportOf(target));
}

/** @returns {string} the unit-id rule of this line, as messages state it */
function unitIdRule (target) {
  return isSerialLine(target) ? 'must be an integer from 1 to 247 on a serial line (0 is broadcast, which nobody answers)' : 'must be an integer from 0 to 247, or 255';
}

/**
 * The units of a line, checked: names unique, unit ids unique and in the line's range, each with
 * its backoff (default 1 s to 10 s, not the line's reconnect backoff) and quirks over the line's.
 * @param {unknown} raw a list of {name, unitId, backoff?, quirks?}, or undefined for a single-unit device
 * @param {object} device the device spec being built (its target and quirks)
 * @returns {import('./spec').UnitSpec[]|null}
 * @throws {import('../base/errors').NinesError} NINES_ERR_INVALID_ARG naming `units[i].<field>`
 */
function buildUnits (raw, device) {
  if (raw === undefined || raw === null) return null;
  if (device.target.protocol === 'ascii') throw F.invalid('units', raw, 'applies to Modbus devices only (a line of units with unit ids)');
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_UNITS) throw F.invalid('units', raw, `must be a list of 1 to ${MAX_UNITS} units {name, unitId}`);
  const names = new Set();
  const ids = new Set();
  return raw.map((u, i) => {
    const at = `units[${i}]`;
    if (u === null || typeof u !== 'object' || Array.isArray(u)) throw F.invalid(at, u, 'must be an object {name, unitId}');
    for (const key of Object.keys(u)) {
      if (!UNIT_KEYS.includes(key) && u[key] !== undefined) throw F.invalid(`${at}.${key}`, u[key], `is not a unit option (known: ${UNIT_KEYS.join(', ')})`);
    }
    // a unit's name is a name as any other (it names the unit in topics and statuses)
    if (!isName(u.name)) throw F.invalid(`${at}.name`, u.name, NAME_RULE);
    if (names.has(u.name)) throw F.invalid(`${at}.name`, u.name, 'is the name of another unit of this device');
    names.add(u.name);
    if (!unitIdAllowed(u.unitId, device.target)) throw F.invalid(`${at}.unitId`, u.unitId, unitIdRule(device.target));
    if (ids.has(u.unitId)) throw F.invalid(`${at}.unitId`, u.unitId, 'is the unit id of another unit of this device');
    ids.add(u.unitId);
    const unit = { name: u.name, unitId: u.unitId, backoff: F.backoff(u.backoff, `${at}.backoff`, UNIT_BACKOFF) };
    for (const key of UNIT_INHERITS) unit[key] = device[key];
    unit.maxGap = F.intIn(u.maxGap, `${at}.maxGap`, 0, L.MAX_GAP, device.maxGap);
    unit.maxRegistersPerRequest = F.intIn(u.maxRegistersPerRequest, `${at}.maxRegistersPerRequest`, 1, L.MAX_REGISTERS_PER_REQUEST, device.maxRegistersPerRequest);
    unit.maxBitsPerRequest = F.intIn(u.maxBitsPerRequest, `${at}.maxBitsPerRequest`, 1, L.MAX_BITS_PER_REQUEST, device.maxBitsPerRequest);
    unit.addressBase = F.addressBase(u.addressBase, `${at}.addressBase`, device.addressBase);
    unit.order = F.order(u.order, `${at}.order`, device.order);
    if (u.unsupportedFunctionCodes !== undefined) unit.unsupportedFunctionCodes = F.functionCodes(u.unsupportedFunctionCodes, `${at}.unsupportedFunctionCodes`);
    return unit;
  });
}

/**
 * The unit a job (or a write by tag) names on a line: required there, refused elsewhere. The one
 * place a unit's name is resolved, whoever asks (the config, a poll node, writes by tag, the API).
 * @param {string|null|undefined} name
 * @param {{name: string, label?: string, units: import('./spec').UnitSpec[]|null}|undefined} device the device spec
 * @returns {import('./spec').UnitSpec|null} null: a device of one unit
 * @throws {import('../base/errors').NinesError} NINES_ERR_INVALID_ARG with field `unit`
 */
function resolveUnit (name, device) {
  const units = device && device.units ? device.units : null;
  const given = name !== undefined && name !== null;
  // the job's field, not the device's: worded without "device"
  const fail = (rule) => F.invalidRef('unit', name, rule);
  if (units === null) {
    if (given) throw fail(device ? `names a unit, but device "${device.name}" is not a line of units (devices.${device.name}.units)` : 'needs a device that is a line of units');
    return null;
  }
  const names = units.map((u) => u.name);
  if (!given) throw fail(`is required: device "${device.name}" is a line of units (${names.join(', ')})`);
  const unit = units.find((u) => u.name === name);
  if (unit === undefined) throw fail(`is not a unit of device "${device.name}"; units: ${names.join(', ')}`);
  return unit;
}

/**
 * A line's target for one of its units: the unit's id, in the fields and in the URL, so a summary
 * names the unit it polled (issue 19: the URL kept the line's ?unitId=1 for unit 5).
 * @param {object} target the line's (parsed)
 * @param {number} unitId
 * @returns {object}
 */
function unitTarget (target, unitId) {
  const t = { ...target, unitId };
  t.url = formatTarget(t);
  return t;
}

/**
 * A unit's key where it stands beside devices (a Sparkplug device id, a health map): `<device>.<unit>`.
 * @param {string} device @param {string|null|undefined} unit
 * @returns {string}
 */
function unitKey (device, unit) {
  return unit ? `${device}.${unit}` : device;
}

module.exports = {
  buildUnits,
  resolveUnit,
  unitTarget,
  unitKey,
  checkDiscipline,
  isSerialLine,
  lineOf,
  sharedLines,
  unitIdAllowed,
  unitIdRule,
  /** The name of the unit of a unit id where only ids are given (the Node-RED dialog's list): unit-<id> */
  unitName: unitList.unitName,
  /** Reads a unit list "1-10, 12" for a transport ('tcp', 'rtu', 'rtutcp') */
  parseUnitList: unitList.parse,
  formatUnitList: unitList.format,
  transportOf,
  MAX_UNITS,
  UNIT_BACKOFF
};
