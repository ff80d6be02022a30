'use strict';

/**
 * Targets are URLs, used by the CLI and the config alike (design.md):
 *   ascii://host:9500?address=01&checksum=on
 *   modbus+tcp://host:502?unitId=1
 *   modbus+tls://host:802?unitId=1   Modbus/TCP Security: MBAP frames over TLS (port 802 by default);
 *     the certificates are client options (tls-options.js), not part of the URL
 *   modbus+rtu:///dev/ttyUSB0?baudRate=19200&parity=even&unitId=1
 *   modbus+rtutcp://host:4001?unitId=1&baudRate=9600   RTU frames (with CRC) over a TCP socket, as a
 *     serial server (Moxa NPort, Brainboxes ES, a PLC's "RTU over TCP") forwards them to its line
 * An unknown scheme or option is an error, never a silent fallback.
 */

const { NinesError } = require('../base/errors');
const C = require('../base/constants');

const PARITIES = ['none', 'even', 'odd', 'mark', 'space'];
const BAUD_RATES = [300, 600, 1200, 2400, 4800, 9600, 14400, 19200, 38400, 57600, 115200, 230400, 460800, 921600];
/** Schemes and what they are, for messages */
const SCHEMES = 'ascii://, modbus+tcp://, modbus+tls://, modbus+rtu:// or modbus+rtutcp://';

/** @param {string} v @returns {number} a standard baud rate */
function baudRate (v) {
  const n = intIn(v, 'baudRate', 50, 4000000);
  if (!BAUD_RATES.includes(n)) fail(`baudRate ${n} is not a standard rate (${BAUD_RATES.join(', ')})`, { baudRate: v });
  return n;
}

/** Query options each scheme accepts: name → parser(value string) → value, throws on a bad value */
const OPTIONS = {
  ascii: {
    address: (v) => hexAddress(v),
    checksum: (v) => bool(v, 'checksum')
  },
  'modbus+tcp': {
    unitId: (v) => intIn(v, 'unitId', 0, 255)
  },
  'modbus+tls': {
    unitId: (v) => intIn(v, 'unitId', 0, 255)
  },
  'modbus+rtu': {
    unitId: (v) => intIn(v, 'unitId', 0, 255),
    baudRate,
    parity: (v) => {
      if (!PARITIES.includes(v)) fail(`parity must be one of ${PARITIES.join(', ')}; got "${v}"`, { parity: v });
      return v;
    },
    dataBits: (v) => intIn(v, 'dataBits', 7, 8),
    stopBits: (v) => intIn(v, 'stopBits', 1, 2)
  },
  // The serial server owns the line's settings; baudRate, when given, only tells the client the
  // wire's speed, so it can keep the t3.5 silence between frames (drivers/modbus/rtutcp-transport.js)
  'modbus+rtutcp': {
    unitId: (v) => intIn(v, 'unitId', 0, 255),
    baudRate
  }
};

function fail (message, details) {
  throw new NinesError('NINES_ERR_INVALID_TARGET', message, details);
}

function intIn (v, name, lo, hi) {
  if (!/^\d+$/.test(v)) fail(`${name} must be an integer from ${lo} to ${hi}; got "${v}"`, { [name]: v });
  const n = Number(v);
  if (n < lo || n > hi) fail(`${name} must be an integer from ${lo} to ${hi}; got ${n}`, { [name]: v });
  return n;
}

function bool (v, name) {
  if (['on', 'true', '1', 'yes'].includes(v)) return true;
  if (['off', 'false', '0', 'no'].includes(v)) return false;
  return fail(`${name} must be on or off; got "${v}"`, { [name]: v });
}

function hexAddress (v) {
  if (!/^[0-9A-Fa-f]{2}$/.test(v)) fail(`address must be two hex digits 00-FF; got "${v}"`, { address: v });
  return v.toUpperCase();
}

/**
 * @typedef {object} Target
 * @property {'ascii'|'modbus+tcp'|'modbus+tls'|'modbus+rtu'|'modbus+rtutcp'} protocol
 * @property {string} url normalised URL text
 * @property {string} [host] for TCP targets
 * @property {number} [port] for TCP targets
 * @property {string} [path] serial device path for RTU
 * @property {string} [address] ASCII address, two upper-case hex digits (default "01")
 * @property {boolean} [checksum] ASCII checksum mode (default false)
 * @property {number} [unitId] Modbus unit id (default 1)
 * @property {number} [baudRate] RTU (default 9600); RTU over TCP: the serial line's, when known (no default)
 * @property {string} [parity] RTU (default "none")
 * @property {number} [dataBits] RTU (default 8)
 * @property {number} [stopBits] RTU (default 1)
 */

/**
 * Parses and validates a target URL.
 * @param {string|Target} input a URL string, or an already parsed target (returned as is)
 * @returns {Target}
 */
function parseTarget (input) {
  if (input && typeof input === 'object' && typeof input.protocol === 'string' && OPTIONS[input.protocol]) return input;
  if (typeof input !== 'string' || input.trim() === '') {
    fail(`target must be a URL such as ascii://127.0.0.1:9500 or modbus+tcp://127.0.0.1:502?unitId=1; got ${JSON.stringify(input)}`, { target: input });
  }
  const text = input.trim();
  const m = /^([a-z][a-z0-9+.-]*):\/\//i.exec(text);
  if (!m) fail(`target "${text}" has no scheme; use ${SCHEMES}`, { target: text });
  const protocol = m[1].toLowerCase();
  if (!OPTIONS[protocol]) fail(`target scheme "${protocol}:" is not supported; use ${SCHEMES}`, { target: text });

  let url;
  try {
    // WHATWG URL does not know our schemes; parse the authority through a stand-in special scheme
    url = new URL(protocol === 'modbus+rtu' ? 'file://' + text.slice(m[0].length) : 'http://' + text.slice(m[0].length));
  } catch (err) {
    fail(`target "${text}" is not a valid URL: ${err.message}`, { target: text });
  }

  /** @type {Target} */
  const t = { protocol, url: '' };
  if (protocol === 'modbus+rtu') {
    let path = decodeURIComponent(url.pathname);
    // Windows names serial ports COM1…COM256: modbus+rtu:///COM3 means COM3, not /COM3
    if (/^\/COM\d{1,3}$/i.test(path)) path = path.slice(1).toUpperCase();
    if (url.host) fail(`target "${text}": a serial target has no host; write modbus+rtu:///dev/ttyUSB0 (three slashes)`, { target: text });
    if (!path || path === '/') fail(`target "${text}" names no serial device path`, { target: text });
    Object.assign(t, { path, unitId: 1, baudRate: 9600, parity: 'none', dataBits: 8, stopBits: 1 });
  } else {
    if (url.username || url.password) fail(`target "${text}" must not carry credentials`, { target: text });
    if (url.pathname && url.pathname !== '/') fail(`target "${text}" must not have a path ("${url.pathname}")`, { target: text });
    if (!url.hostname) fail(`target "${text}" names no host`, { target: text });
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    // URL drops the port when it equals http's default 80, so read it back from the text
    const defaultPort = protocol === 'ascii' ? C.ASCII_DEFAULT_PORT : protocol === 'modbus+tls' ? C.MODBUS_TLS_DEFAULT_PORT : C.MODBUS_TCP_DEFAULT_PORT;
    const explicit = /:(\d+)(?:[/?#]|$)/.exec(text.slice(m[0].length).replace(/^\[[^\]]*\]/, ''));
    // RTU over TCP has no standard port (a Moxa NPort's first serial port listens on 4001, others
    // elsewhere), and 502 would be Modbus TCP, which answers RTU frames with nothing or garbage
    if (!explicit && protocol === 'modbus+rtutcp') fail(`target "${text}" names no port; a serial server has no standard one (e.g. 4001 on a Moxa NPort's first port): write modbus+rtutcp://host:port`, { target: text });
    const port = explicit ? Number(explicit[1]) : defaultPort;
    if (!Number.isInteger(port) || port < 1 || port > 65535) fail(`target "${text}": port must be 1-65535`, { target: text });
    Object.assign(t, { host, port });
    if (protocol === 'ascii') Object.assign(t, { address: C.ASCII_ADDRESS_DEFAULT, checksum: false });
    else t.unitId = 1;
  }
  if (url.hash) fail(`target "${text}" must not have a fragment`, { target: text });
  for (const [key, value] of url.searchParams) {
    const parse = OPTIONS[protocol][key];
    if (!parse) {
      fail(`target "${text}": unknown option "${key}" for ${protocol}:// (known: ${Object.keys(OPTIONS[protocol]).join(', ')})`, { target: text, option: key });
    }
    t[key] = parse(value);
  }
  t.url = formatTarget(t);
  return t;
}

/**
 * Writes a target back as its canonical URL (defaults included, so two spellings compare equal).
 * @param {Target} t
 * @returns {string}
 */
function formatTarget (t) {
  if (t.protocol === 'modbus+rtu') {
    return `modbus+rtu://${t.path}?unitId=${t.unitId}&baudRate=${t.baudRate}&parity=${t.parity}&dataBits=${t.dataBits}&stopBits=${t.stopBits}`;
  }
  const host = t.host.includes(':') ? `[${t.host}]` : t.host;
  if (t.protocol === 'ascii') return `ascii://${host}:${t.port}?address=${t.address}&checksum=${t.checksum ? 'on' : 'off'}`;
  if (t.protocol === 'modbus+rtutcp') return `modbus+rtutcp://${host}:${t.port}?unitId=${t.unitId}${t.baudRate === undefined ? '' : `&baudRate=${t.baudRate}`}`;
  return `${t.protocol}://${host}:${t.port}?unitId=${t.unitId}`;
}

/**
 * @param {{protocol: string}} t a parsed target
 * @returns {boolean} whether it carries MBAP frames (Modbus TCP, in clear or over TLS): transaction ids,
 *   so several requests may be in flight on one connection
 */
function isMbap (t) {
  return t.protocol === 'modbus+tcp' || t.protocol === 'modbus+tls';
}

module.exports = { parseTarget, formatTarget, isMbap, BAUD_RATES, PARITIES };
