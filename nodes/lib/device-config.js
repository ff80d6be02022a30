'use strict';

/**
 * Device config node settings → a device spec (gateway/devices/spec.js buildDeviceSpec), checked at
 * runtime. The editor validates as you type, but flows are also imported and edited as JSON, so this
 * is the authority. Every failure is a NinesError (NINES_ERR_INVALID_ARG or NINES_ERR_INVALID_TARGET)
 * naming the node's field, and nothing is sent to a device.
 */

const { NinesError } = require('../../gateway/base/errors');
const { parseTarget } = require('../../gateway/drivers/target');
const { buildDeviceSpec, MAX_CONNECTIONS, MAX_INFLIGHT } = require('../../gateway/devices/spec');
const { MAX_QUIRK_DELAY_MS } = require('../../gateway/drivers/connection-options');
const C = require('../../gateway/base/constants');
// the dialog reads the field with the same file (Node-RED serves resources/ to the editor)
const unitList = require('../../resources/nines-units');

/** Upper bounds of the dialog's duration fields, ms: a request timeout of a minute, ten minutes for the rest */
const MAX_TIMEOUT_MS = 60000;
const MAX_CONNECT_TIMEOUT_MS = 600000;
const MAX_BACKOFF_MS = 600000;

/** The node's field for each field of the device spec, so a late error still names what the user sees */
const NODE_FIELD = {
  maxConnections: 'maxConnections',
  maxInflight: 'maxInflight',
  timeoutMs: 'timeout',
  connectTimeoutMs: 'connectTimeout',
  'backoff.initialMs': 'backoffMin',
  'backoff.maxMs': 'backoffMax',
  interFrameDelayMs: 'interFrameDelay',
  delayAfterConnectMs: 'delayAfterConnect'
};

/** The Modbus transports of the dialog and their target schemes */
const TRANSPORTS = Object.freeze({ tcp: 'modbus+tcp', rtu: 'modbus+rtu', rtutcp: 'modbus+rtutcp' });

/** Node-RED stores numbers typed into the editor as strings; empty means "use the default". */
function num (config, field, def, lo, hi, integer = true) {
  const raw = config[field];
  if (raw === undefined || raw === null || raw === '') return def;
  const n = Number(raw);
  if (!Number.isFinite(n) || (integer && !Number.isInteger(n)) || n < lo || n > hi) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `${field} must be ${integer ? 'an integer' : 'a number'} from ${lo} to ${hi}; got ${JSON.stringify(raw)}`, { field, value: raw });
  }
  return n;
}

function host (config) {
  const h = typeof config.host === 'string' ? config.host.trim() : '';
  if (!h || /[\s/?#@]/.test(h)) throw new NinesError('NINES_ERR_INVALID_ARG', `host must be a host name or IP address; got ${JSON.stringify(config.host)}`, { field: 'host', value: config.host });
  return h.includes(':') && !h.startsWith('[') ? `[${h}]` : h;
}

/**
 * The settings both device config nodes share, built into a device spec with buildDeviceSpec.
 * @param {object} config the node's config
 * @param {string} name the device's name in the pool (the config node's id)
 * @param {object} target parsed
 * @param {number} maxConnections
 * @param {number} [maxInflight] Modbus only: requests per connection at once
 * @param {{interFrameDelayMs: number, delayAfterConnectMs: number}} [quirks] Modbus only: the line quirks
 * @returns {import('../../gateway/devices/spec').DeviceSpec}
 */
/**
 * What messages call a device: the config node's name, else where it is (host:port, or the serial
 * port), never the node id the pool knows it by (issue 21: `device "17e3c9d4de822a6b"`).
 * @param {object} config @param {import('../../gateway/drivers/target').Target} target parsed
 * @returns {string}
 */
function deviceLabel (config, target) {
  const named = typeof config.name === 'string' ? config.name.trim() : '';
  if (named !== '') return named.slice(0, 200);
  return target.host ? `${target.host}:${target.port}` : target.path;
}

function deviceSpec (config, name, target, maxConnections, maxInflight, quirks) {
  const timeoutMs = num(config, 'timeout', C.DEFAULT_TIMEOUT_MS, 1, MAX_TIMEOUT_MS);
  const connectTimeoutMs = num(config, 'connectTimeout', C.DEFAULT_CONNECT_TIMEOUT_MS, 1, MAX_CONNECT_TIMEOUT_MS);
  const initialMs = num(config, 'backoffMin', C.BACKOFF_INITIAL_MS, 1, MAX_BACKOFF_MS);
  const maxMs = num(config, 'backoffMax', Math.max(initialMs, C.BACKOFF_MAX_MS), 1, MAX_BACKOFF_MS);
  if (maxMs < initialMs) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `backoffMax must be at least backoffMin (${initialMs} ms); got ${JSON.stringify(config.backoffMax)}`, { field: 'backoffMax', value: config.backoffMax });
  }
  try {
    return buildDeviceSpec({ name, label: deviceLabel(config, target), target, maxConnections, maxInflight, timeoutMs, connectTimeoutMs, backoff: { initialMs, maxMs }, ...quirks });
  } catch (err) {
    const at = err.details && typeof err.details.field === 'string' ? err.details.field : '';
    // units[3].unitId and the like are all the dialog's one "Units on this line" field
    const field = NODE_FIELD[at] || (/^units\b/.test(at) ? 'units' : undefined);
    if (field) err.details.field = field;
    throw err;
  }
}

/**
 * maxConnections, or the ASCII node's `connections` of flows saved before it existed.
 * @returns {number}
 */
function maxConnections (config, legacy) {
  const given = (f) => config[f] !== undefined && config[f] !== null && config[f] !== '';
  if (!given('maxConnections') && legacy && given('connections')) return num(config, 'connections', 1, 1, MAX_CONNECTIONS);
  return num(config, 'maxConnections', 1, 1, MAX_CONNECTIONS);
}

/**
 * @param {object} config the nines-ascii-device node's config
 * @param {string} name the device's name in the pool (the config node's id)
 * @returns {{spec: object, target: object, timeoutMs: number}}
 */
function asciiDevice (config, name) {
  const port = num(config, 'port', C.ASCII_DEFAULT_PORT, 1, 65535);
  const address = String(config.address === undefined || config.address === '' ? C.ASCII_ADDRESS_DEFAULT : config.address);
  if (!/^[0-9A-Fa-f]{2}$/.test(address)) throw new NinesError('NINES_ERR_INVALID_ARG', `address must be two hex digits 00-FF; got ${JSON.stringify(config.address)}`, { field: 'address', value: config.address });
  const checksum = config.checksum === true || config.checksum === 'true';
  const target = parseTarget(`ascii://${host(config)}:${port}?address=${address.toUpperCase()}&checksum=${checksum ? 'on' : 'off'}`);
  const spec = deviceSpec(config, name, target, maxConnections(config, true));
  return { spec, target, timeoutMs: spec.timeoutMs };
}

/**
 * @param {object} config the nines-modbus-device node's config
 * @param {string} name the device's name in the pool (the config node's id)
 * @returns {{spec: object, target: object, timeoutMs: number, allowWrites: boolean}}
 */
function modbusDevice (config, name) {
  const unitId = num(config, 'unitId', 1, 0, 255);
  const transport = config.transport || 'tcp';
  if (TRANSPORTS[transport] === undefined) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `transport must be "tcp", "rtu" or "rtutcp"; got ${JSON.stringify(transport)}`, { field: 'transport', value: transport });
  }
  let url;
  if (transport === 'tcp') {
    url = `modbus+tcp://${host(config)}:${num(config, 'port', C.MODBUS_TCP_DEFAULT_PORT, 1, 65535)}?unitId=${unitId}`;
  } else if (transport === 'rtutcp') {
    // a serial server has no standard port (502 would be Modbus TCP): the dialog always holds one
    const port = num(config, 'port', undefined, 1, 65535);
    if (port === undefined) throw new NinesError('NINES_ERR_INVALID_ARG', `port is required for RTU over TCP (the serial server's port, e.g. 4001); got ${JSON.stringify(config.port)}`, { field: 'port', value: config.port });
    // the line's baud rate, when known, sets the silence kept between frames (drivers/modbus/rtutcp-transport.js)
    const baud = config.baudRate === undefined || config.baudRate === null || config.baudRate === '' ? '' : `&baudRate=${num(config, 'baudRate', 9600, 50, 4000000)}`;
    url = `modbus+rtutcp://${host(config)}:${port}?unitId=${unitId}${baud}`;
  } else {
    const path = typeof config.path === 'string' ? config.path.trim() : '';
    if (!path) throw new NinesError('NINES_ERR_INVALID_ARG', `path must name a serial port such as /dev/ttyUSB0 or COM3; got ${JSON.stringify(config.path)}`, { field: 'path', value: config.path });
    const q = new URLSearchParams({
      unitId: String(unitId),
      baudRate: String(num(config, 'baudRate', 9600, 50, 4000000)),
      parity: String(config.parity || 'none'),
      dataBits: String(num(config, 'dataBits', 8, 7, 8)),
      stopBits: String(num(config, 'stopBits', 1, 1, 2))
    });
    url = `modbus+rtu://${path.startsWith('/') ? '' : '/'}${encodeURI(path)}?${q}`;
  }
  const line = transport === 'rtu' ? 'Modbus RTU (a serial line is one connection)' : 'RTU over TCP (a serial server port is one serial line)';
  const connections = maxConnections(config, false);
  // a serial line is one bus: one connection, whatever the other settings say
  if (transport !== 'tcp' && connections !== 1) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `maxConnections must be 1 for ${line}; got ${JSON.stringify(config.maxConnections)}`, { field: 'maxConnections', value: config.maxConnections });
  }
  // requests per connection at once: pipelining needs Modbus TCP's transaction id to match replies
  const maxInflight = num(config, 'maxInflight', 1, 1, MAX_INFLIGHT);
  if (transport !== 'tcp' && maxInflight !== 1) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `maxInflight must be 1 for ${transport === 'rtu' ? 'Modbus RTU' : 'RTU over TCP'} (a serial line carries one request at a time); got ${JSON.stringify(config.maxInflight)}`, { field: 'maxInflight', value: config.maxInflight });
  }
  // line quirks, ms; flows saved before the fields existed have none: 0
  const quirks = {
    interFrameDelayMs: num(config, 'interFrameDelay', 0, 0, MAX_QUIRK_DELAY_MS),
    delayAfterConnectMs: num(config, 'delayAfterConnect', 0, 0, MAX_QUIRK_DELAY_MS)
  };
  const units = lineUnits(config, transport, unitId);
  if (units !== undefined) quirks.units = units;
  const target = parseTarget(url);
  const spec = deviceSpec(config, name, target, connections, maxInflight, quirks);
  return { spec, target, timeoutMs: spec.timeoutMs, allowWrites: config.allowWrites === true || config.allowWrites === 'true' };
}

/**
 * The units of a line, from the "Units on this line" field ("1-10, 12"): each becomes a unit of the
 * device spec named unit-<id>, with the default unit backoff, so each has its own health and a silent
 * one is left alone while the others keep polling (gateway/devices/units.js). The nodes address units
 * by id (their unit id field, msg.unitId), so the names are only what the health calls them.
 * @param {object} config the node's config
 * @param {string} transport 'tcp', 'rtu' or 'rtutcp'
 * @param {number} unitId the device's unit id: the unit of the nodes that name none, so on the line
 * @returns {{name: string, unitId: number}[]|undefined} undefined: one unit, not a line (an empty field,
 *   and flows saved before the field existed)
 * @throws {NinesError} NINES_ERR_INVALID_ARG naming the field `units`
 */
function lineUnits (config, transport, unitId) {
  const raw = config.units;
  const { ids, error } = unitList.parse(raw, transport);
  if (error !== null) throw new NinesError('NINES_ERR_INVALID_ARG', `units ${error}; got ${JSON.stringify(raw)}`, { field: 'units', value: raw });
  if (ids === null) return undefined;
  if (!ids.includes(unitId)) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `units must include the device's unit id ${unitId} (the unit of the nodes that name none); got ${JSON.stringify(raw)}`, { field: 'units', value: raw });
  }
  return ids.map((id) => ({ name: unitList.unitName(id), unitId: id }));
}

module.exports = { asciiDevice, modbusDevice, num, MAX_TIMEOUT_MS, MAX_CONNECT_TIMEOUT_MS, MAX_BACKOFF_MS, MAX_QUIRK_DELAY_MS };
