'use strict';

/**
 * Device config node settings → a nines target and client options, checked at runtime. The editor
 * validates as you type, but flows are also imported and edited as JSON, so this is the authority.
 * Every failure is a NinesError (NINES_ERR_INVALID_ARG or NINES_ERR_INVALID_TARGET) naming the field.
 */

const { NinesError } = require('../../gateway/base/errors');
const { parseTarget } = require('../../gateway/drivers/target');
const C = require('../../gateway/base/constants');

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
 * @param {object} config the nines-ascii-device node's config
 * @returns {{target: object, timeoutMs: number, connections: number}}
 */
function asciiDevice (config) {
  const port = num(config, 'port', C.ASCII_DEFAULT_PORT, 1, 65535);
  const address = String(config.address === undefined || config.address === '' ? C.ASCII_ADDRESS_DEFAULT : config.address);
  if (!/^[0-9A-Fa-f]{2}$/.test(address)) throw new NinesError('NINES_ERR_INVALID_ARG', `address must be two hex digits 00-FF; got ${JSON.stringify(config.address)}`, { field: 'address', value: config.address });
  const checksum = config.checksum === true || config.checksum === 'true';
  const target = parseTarget(`ascii://${host(config)}:${port}?address=${address.toUpperCase()}&checksum=${checksum ? 'on' : 'off'}`);
  return {
    target,
    timeoutMs: num(config, 'timeout', C.DEFAULT_TIMEOUT_MS, 1, 60000),
    connections: num(config, 'connections', 1, 1, 8)
  };
}

/**
 * @param {object} config the nines-modbus-device node's config
 * @returns {{target: object, timeoutMs: number, allowWrites: boolean}}
 */
function modbusDevice (config) {
  const unitId = num(config, 'unitId', 1, 0, 255);
  const transport = config.transport || 'tcp';
  let url;
  if (transport === 'tcp') {
    url = `modbus+tcp://${host(config)}:${num(config, 'port', C.MODBUS_TCP_DEFAULT_PORT, 1, 65535)}?unitId=${unitId}`;
  } else if (transport === 'rtu') {
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
  } else {
    throw new NinesError('NINES_ERR_INVALID_ARG', `transport must be "tcp" or "rtu"; got ${JSON.stringify(transport)}`, { field: 'transport', value: transport });
  }
  return {
    target: parseTarget(url),
    timeoutMs: num(config, 'timeout', C.DEFAULT_TIMEOUT_MS, 1, 60000),
    allowWrites: config.allowWrites === true || config.allowWrites === 'true'
  };
}

module.exports = { asciiDevice, modbusDevice, num };
