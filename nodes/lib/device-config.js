'use strict';

/**
 * Device config node settings → a device spec (gateway/devices/spec.js buildDeviceSpec), checked at
 * runtime. The editor validates as you type, but flows are also imported and edited as JSON, so this
 * is the authority. Every failure is a NinesError (NINES_ERR_INVALID_ARG or NINES_ERR_INVALID_TARGET)
 * naming the node's field, and nothing is sent to a device.
 */

const { NinesError } = require('../../gateway/base/errors');
const { parseTarget } = require('../../gateway/drivers/target');
const { buildDeviceSpec } = require('../../gateway/devices/spec');
const line = require('../../gateway/devices/line');
const C = require('../../gateway/base/constants');

/**
 * The node's field for each field of the device spec, so an error names what the user sees. The
 * builder (gateway/devices/spec.js) is the one place these are defaulted and checked, with the
 * limits of gateway/devices/limits.js, as for a device in the gateway's config.
 */
const NODE_FIELD = Object.freeze({
  maxConnections: 'maxConnections',
  maxInflight: 'maxInflight',
  timeoutMs: 'timeout',
  connectTimeoutMs: 'connectTimeout',
  'backoff.initialMs': 'backoffMin',
  'backoff.maxMs': 'backoffMax',
  interFrameDelayMs: 'interFrameDelay',
  delayAfterConnectMs: 'delayAfterConnect'
});

/** The Modbus transports of the dialog and their target schemes */
const TRANSPORTS = Object.freeze({ tcp: 'modbus+tcp', tls: 'modbus+tls', rtu: 'modbus+rtu', rtutcp: 'modbus+rtutcp' });

/** Whether the node's field holds a value (Node-RED keeps an emptied field as ''; old flows lack it) */
function given (config, field) {
  return config[field] !== undefined && config[field] !== null && config[field] !== '';
}

/** A field as the builder reads it: undefined when empty (the builder's default), else a number when it reads as one */
function raw (config, field) {
  if (!given(config, field)) return undefined;
  const v = config[field];
  return typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : v;
}

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

function deviceSpec (config, name, target, fields) {
  const input = {
    name,
    label: deviceLabel(config, target),
    target,
    timeoutMs: raw(config, 'timeout'),
    connectTimeoutMs: raw(config, 'connectTimeout'),
    ...fields
  };
  if (given(config, 'backoffMin') || given(config, 'backoffMax')) input.backoff = { initialMs: raw(config, 'backoffMin'), maxMs: raw(config, 'backoffMax') };
  try {
    return buildDeviceSpec(input);
  } catch (err) {
    const at = err.details && typeof err.details.field === 'string' ? err.details.field : '';
    // tls.ca, tls.key…: the files of the tls-config node the one "TLS configuration" field names
    if (/^tls\b/.test(at)) throw new NinesError(err.code, `tls (the TLS configuration): ${at} ${err.details.rule}`, { ...err.details, field: 'tls', value: at });
    // units[3].unitId and the like are all the dialog's one "Units on this line" field
    const field = NODE_FIELD[at] || (/^units\b/.test(at) ? 'units' : undefined);
    if (field === undefined || typeof err.details.rule !== 'string') throw err;
    // the builder's rule in the dialog's words: its fields by their names here, the value as typed
    const rule = Object.entries(NODE_FIELD).reduce((text, [f, n]) => text.split(f).join(n), err.details.rule);
    const typed = at === 'units' || /^units\b/.test(at) ? config.units : config[field];
    throw new NinesError(err.code, `${field} ${rule}; got ${JSON.stringify(typed)}`, { ...err.details, field, value: typed, rule });
  }
}

/**
 * maxConnections, or the ASCII node's `connections` of flows saved before it existed.
 * @returns {number|undefined} undefined: the builder's default
 */
function maxConnections (config, legacy) {
  if (!given(config, 'maxConnections') && legacy && given(config, 'connections')) return raw(config, 'connections');
  return raw(config, 'maxConnections');
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
  const spec = deviceSpec(config, name, target, { maxConnections: maxConnections(config, true) });
  return { spec, target, timeoutMs: spec.timeoutMs };
}

/**
 * The TLS material of a Modbus/TCP Security device, from the core tls-config node the dialog names
 * (what its addTLSOptions gives: the files it read at start, or its uploaded credentials), as the
 * device spec takes it. Its "Verify server certificate" must stay on: nines always verifies
 * (gateway/drivers/tls-options.js says why).
 * @param {{valid?: boolean, addTLSOptions?: (o: object) => void}|null|undefined} tlsNode the tls-config node, or none
 * @returns {object|undefined} {ca, cert, key, passphrase, servername} present ones only; undefined: no node
 * @throws {NinesError} NINES_ERR_INVALID_ARG naming the field `tls`
 */
function tlsMaterial (tlsNode) {
  if (tlsNode === null || tlsNode === undefined) return undefined;
  if (tlsNode.valid === false || typeof tlsNode.addTLSOptions !== 'function') {
    throw new NinesError('NINES_ERR_INVALID_ARG', 'tls names a TLS configuration whose files could not be read (its own error says which)', { field: 'tls', value: 'invalid' });
  }
  const o = {};
  tlsNode.addTLSOptions(o);
  if (o.rejectUnauthorized === false) {
    throw new NinesError('NINES_ERR_INVALID_ARG', 'tls names a TLS configuration with "Verify server certificate" off: nines always verifies the device\'s certificate (trust a self-signed device by giving its certificate as the CA)',
      { field: 'tls', value: 'verifyservercert: false', rule: 'must verify the server certificate' });
  }
  const out = {};
  for (const key of ['ca', 'cert', 'key', 'passphrase', 'servername']) if (o[key] !== undefined && o[key] !== '') out[key] = o[key];
  return out;
}

/**
 * @param {object} config the nines-modbus-device node's config
 * @param {string} name the device's name in the pool (the config node's id)
 * @param {object} [tlsNode] transport "tls": the tls-config node config.tls names (RED.nodes.getNode), or none
 * @returns {{spec: object, target: object, timeoutMs: number, allowWrites: boolean}}
 */
function modbusDevice (config, name, tlsNode) {
  // the unit id goes into the target when given: the target is the one place it is checked and defaulted (drivers/target.js)
  const unitQuery = given(config, 'unitId') ? `unitId=${encodeURIComponent(String(config.unitId).trim())}` : '';
  const transport = config.transport || 'tcp';
  if (TRANSPORTS[transport] === undefined) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `transport must be "tcp", "tls", "rtu" or "rtutcp"; got ${JSON.stringify(transport)}`, { field: 'transport', value: transport });
  }
  let url;
  if (transport === 'tcp') {
    url = `modbus+tcp://${host(config)}:${num(config, 'port', C.MODBUS_TCP_DEFAULT_PORT, 1, 65535)}?${unitQuery}`;
  } else if (transport === 'tls') {
    url = `modbus+tls://${host(config)}:${num(config, 'port', C.MODBUS_TLS_DEFAULT_PORT, 1, 65535)}?${unitQuery}`;
  } else if (transport === 'rtutcp') {
    // a serial server has no standard port (502 would be Modbus TCP): the dialog always holds one
    const port = num(config, 'port', undefined, 1, 65535);
    if (port === undefined) throw new NinesError('NINES_ERR_INVALID_ARG', `port is required for RTU over TCP (the serial server's port, e.g. 4001); got ${JSON.stringify(config.port)}`, { field: 'port', value: config.port });
    // the line's baud rate, when known, sets the silence kept between frames (drivers/modbus/rtutcp-transport.js)
    const baud = config.baudRate === undefined || config.baudRate === null || config.baudRate === '' ? '' : `&baudRate=${num(config, 'baudRate', 9600, 50, 4000000)}`;
    url = `modbus+rtutcp://${host(config)}:${port}?${unitQuery}${baud}`;
  } else {
    const path = typeof config.path === 'string' ? config.path.trim() : '';
    if (!path) throw new NinesError('NINES_ERR_INVALID_ARG', `path must name a serial port such as /dev/ttyUSB0 or COM3; got ${JSON.stringify(config.path)}`, { field: 'path', value: config.path });
    const q = new URLSearchParams({
      baudRate: String(num(config, 'baudRate', 9600, 50, 4000000)),
      parity: String(config.parity || 'none'),
      dataBits: String(num(config, 'dataBits', 8, 7, 8)),
      stopBits: String(num(config, 'stopBits', 1, 1, 2))
    });
    url = `modbus+rtu://${path.startsWith('/') ? '' : '/'}${encodeURI(path)}?${q}${unitQuery ? `&${unitQuery}` : ''}`;
  }
  const target = modbusTarget(url, config);
  // a serial line's discipline (one connection, one request in flight) is the builder's (devices/line.js)
  const fields = {
    maxConnections: maxConnections(config, false),
    maxInflight: raw(config, 'maxInflight'),
    // line quirks, ms; flows saved before the fields existed have none (the builder's 0)
    interFrameDelayMs: raw(config, 'interFrameDelay'),
    delayAfterConnectMs: raw(config, 'delayAfterConnect'),
    // Modbus/TCP Security; without a tls-config node: Node's bundled root CAs and no client certificate
    tls: transport === 'tls' ? tlsMaterial(tlsNode) : undefined,
    // a unit id's rules are Modbus TCP's over TLS too
    units: lineUnits(config, transport === 'tls' ? 'tcp' : transport, target.unitId)
  };
  const spec = deviceSpec(config, name, target, fields);
  return { spec, target, timeoutMs: spec.timeoutMs, allowWrites: config.allowWrites === true || config.allowWrites === 'true' };
}

/**
 * The dialog's Modbus target, parsed; a unit id the target refuses is an error of the unitId field.
 * @param {string} url @param {object} config
 * @returns {import('../../gateway/drivers/target').Target}
 */
function modbusTarget (url, config) {
  try {
    return parseTarget(url);
  } catch (err) {
    if (!(err instanceof NinesError) || !err.details || err.details.unitId === undefined) throw err;
    throw new NinesError('NINES_ERR_INVALID_ARG', err.message, { field: 'unitId', value: config.unitId });
  }
}

/**
 * The units of a line, from the "Units on this line" field ("1-10, 12"): each becomes a unit of the
 * device spec named unit-<id>, with the default unit backoff, so each has its own health and a silent
 * one is left alone while the others keep polling (gateway/devices/unit-health.js). The nodes address units
 * by id (their unit id field, msg.unitId), so the names are only what the health calls them.
 * @param {object} config the node's config
 * @param {string} transport 'tcp', 'rtu' or 'rtutcp'
 * @param {number} unitId the device's unit id: the unit of the nodes that name none, so on the line
 * @returns {{name: string, unitId: number}[]|undefined} undefined: one unit, not a line (an empty field,
 *   and flows saved before the field existed)
 * @throws {NinesError} NINES_ERR_INVALID_ARG naming the field `units`
 */
function lineUnits (config, transport, unitId) {
  const text = config.units;
  const { ids, error } = line.parseUnitList(text, transport);
  if (error !== null) throw new NinesError('NINES_ERR_INVALID_ARG', `units ${error}; got ${JSON.stringify(text)}`, { field: 'units', value: text });
  if (ids === null) return undefined;
  if (!ids.includes(unitId)) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `units must include the device's unit id ${unitId} (the unit of the nodes that name none); got ${JSON.stringify(text)}`, { field: 'units', value: text });
  }
  return ids.map((id) => ({ name: line.unitName(id), unitId: id }));
}

module.exports = { asciiDevice, modbusDevice, num };
