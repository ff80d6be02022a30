'use strict';

/**
 * The `tls` option of a modbus+tls:// client (Modbus/TCP Security), checked once, in the client's
 * constructor: PEM texts in, a built secure context out, so a key that does not fit its certificate,
 * or a file that holds no PEM, fails there, naming the field, and never at connect time.
 *
 * There is no way to turn verification off (no rejectUnauthorized: false). The Modbus/TCP Security
 * spec authenticates both ends with X.509, and a connection that talks to whoever answers is Modbus
 * TCP with extra steps: a device with a self-signed certificate is trusted by giving that certificate
 * as `ca`. The device's certificate must name the host dialled (or `servername`) in its
 * subjectAltName, as for HTTPS.
 *
 * The client's role (the spec's X.509v3 extension, OID 1.3.6.1.4.1.50316.802.1) is inside the client
 * certificate: nines presents it and the device decides; nothing here reads it.
 *
 * A secure context is built once per tls option object, and every connection made with that object
 * shares it: a device opens all its connections with its spec's object, the one tlsAsText returned
 * when the spec was checked, so a device's context is built once (once more in a worker thread, which
 * gets a copy of the spec). Certificates are not reloaded: the files are read when a config loads, and
 * new texts come in a new object (a new spec), which builds its own context.
 */

const tls = require('node:tls');
const net = require('node:net');
const { fail } = require('./connection-options');

/** The `tls` option's keys */
const KEYS = Object.freeze(['ca', 'cert', 'key', 'passphrase', 'servername']);
/** What each PEM field must hold */
const PEM = Object.freeze({
  ca: { re: /-----BEGIN CERTIFICATE-----/, what: 'one or more PEM certificates (-----BEGIN CERTIFICATE-----)' },
  cert: { re: /-----BEGIN CERTIFICATE-----/, what: 'a PEM certificate (-----BEGIN CERTIFICATE-----), optionally followed by its chain' },
  key: { re: /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/, what: 'a PEM private key (-----BEGIN PRIVATE KEY-----; an encrypted one needs its passphrase)' }
});

/**
 * Endpoints built, by the option object they were built from, each with a copy of that object's own
 * fields then ({key: value}, Buffers copied): an object changed since is checked and built again.
 * @type {WeakMap<object, {fields: Map<string, unknown>, endpoint: TlsEndpoint}>}
 */
const BUILT = new WeakMap();

/**
 * @typedef {object} TlsEndpoint what ../open-socket.js needs for a TLS connection
 * @property {import('node:tls').SecureContext} secureContext the CA, certificate and key, built once
 * @property {string|undefined} servername the name the device's certificate must carry, and the SNI
 *   sent; undefined: the host dialled (no SNI for an IP address, as RFC 6066 asks)
 * @property {boolean} clientCert whether a client certificate is presented
 */

/**
 * Checks the tls option of a modbus+tls client and builds its secure context, or gives the endpoint
 * built before for the same object when it still holds the same fields (file header).
 * @param {unknown} v {ca?, cert?, key?, passphrase?, servername?}: PEM text (string or Buffer) for ca, cert and key;
 *   undefined: verify against Node's bundled root CAs and present no client certificate
 * @param {string} [field='tls'] the option's name, for messages
 * @returns {TlsEndpoint}
 * @throws {import('../base/errors').NinesError} NINES_ERR_INVALID_ARG naming the field
 */
function checkTlsOptions (v, field = 'tls') {
  const built = typeof v === 'object' && v !== null ? BUILT.get(v) : undefined;
  if (built !== undefined && unchanged(v, built.fields)) return built.endpoint;
  const endpoint = buildEndpoint(v, field);
  if (typeof v === 'object' && v !== null) remember(v, endpoint);
  return endpoint;
}

/**
 * checkTlsOptions without the memory: checks the option and builds its secure context.
 * @param {unknown} v @param {string} field
 * @returns {TlsEndpoint}
 */
function buildEndpoint (v, field) {
  if (v === undefined || v === null) v = {};
  if (typeof v !== 'object' || Array.isArray(v) || Buffer.isBuffer(v)) fail(field, v, 'must be an object {ca, cert, key, servername}');
  const o = /** @type {Record<string, unknown>} */ (v);
  for (const key of Object.keys(o)) {
    if (key === 'rejectUnauthorized') fail(`${field}.${key}`, o[key], 'is not offered: nines always verifies the device\'s certificate (trust a self-signed device by giving its certificate as ca)');
    if (!KEYS.includes(key) && o[key] !== undefined) fail(`${field}.${key}`, o[key], `is not a tls option (known: ${KEYS.join(', ')})`);
  }
  const pem = {};
  for (const key of ['ca', 'cert', 'key']) {
    const val = o[key];
    if (val === undefined || val === null || val === '') continue;
    const text = Buffer.isBuffer(val) ? val.toString('latin1') : val;
    if (typeof text !== 'string' || !PEM[key].re.test(text)) {
      fail(`${field}.${key}`, typeof val === 'string' ? val.slice(0, 40) : Buffer.isBuffer(val) ? '<file contents>' : typeof val, `must be ${PEM[key].what}`);
    }
    pem[key] = val;
  }
  if (pem.cert !== undefined && pem.key === undefined) fail(`${field}.key`, undefined, `is required with ${field}.cert (the client certificate's private key)`);
  if (pem.key !== undefined && pem.cert === undefined) fail(`${field}.cert`, undefined, `is required with ${field}.key (the client certificate)`);
  // the key's, when it is encrypted (a Node-RED tls-config node may hold one)
  if (o.passphrase !== undefined && o.passphrase !== '') {
    if (typeof o.passphrase !== 'string' || pem.key === undefined) fail(`${field}.passphrase`, '***', `must be a string, given with ${field}.key`);
    pem.passphrase = o.passphrase;
  }
  let servername;
  if (o.servername !== undefined && o.servername !== '') {
    if (typeof o.servername !== 'string' || !/^[A-Za-z0-9.-]{1,253}$/.test(o.servername) || net.isIP(o.servername) !== 0) {
      fail(`${field}.servername`, o.servername, 'must be a DNS name the device\'s certificate carries (an IP address is checked by dialling it)');
    }
    servername = o.servername;
  }
  let secureContext;
  try {
    secureContext = tls.createSecureContext(pem);
  } catch (err) {
    // OpenSSL names the problem, not the field: a key that does not fit, or a PEM block it cannot read
    const e = /** @type {any} */ (err);
    const at = /KEY_VALUES_MISMATCH|key values mismatch/i.test(`${e.code} ${e.message}`) ? 'key' : /key/i.test(e.message) ? 'key' : pem.cert !== undefined && /cert/i.test(e.message) ? 'cert' : 'ca';
    const rule = at === 'key' && /mismatch/i.test(e.message) ? `must be the private key of ${field}.cert (${e.message})` : `must be valid PEM (${e.code || e.message})`;
    fail(`${field}.${at}`, '<pem>', rule);
  }
  return Object.freeze({ secureContext, servername, clientCert: pem.cert !== undefined });
}

/**
 * Keeps the endpoint built for an option object, with what the object held then.
 * @param {object} v @param {TlsEndpoint} endpoint
 */
function remember (v, endpoint) {
  const fields = new Map();
  for (const key of Object.keys(v)) fields.set(key, Buffer.isBuffer(v[key]) ? Buffer.from(v[key]) : v[key]);
  BUILT.set(v, { fields, endpoint });
}

/**
 * @param {object} v an option object
 * @param {Map<string, unknown>} fields what it held when its endpoint was built
 * @returns {boolean} it holds the same own fields with the same values (a Buffer's by content)
 */
function unchanged (v, fields) {
  const keys = Object.keys(v);
  if (keys.length !== fields.size) return false;
  for (const key of keys) {
    if (!fields.has(key)) return false;
    const was = fields.get(key);
    const now = v[key];
    if (now !== was && !(Buffer.isBuffer(now) && Buffer.isBuffer(was) && now.equals(was))) return false;
  }
  return true;
}

/**
 * Checks the tls option (checkTlsOptions) and returns it as plain text: what a spec that crosses to a
 * worker thread keeps (a secure context cannot cross; Buffers would arrive as Uint8Arrays).
 * @param {unknown} v
 * @param {string} [field='tls']
 * @returns {{ca?: string, cert?: string, key?: string, passphrase?: string, servername?: string}}
 * @throws {import('../base/errors').NinesError} NINES_ERR_INVALID_ARG naming the field
 */
function tlsAsText (v, field = 'tls') {
  const endpoint = checkTlsOptions(v, field);
  const out = {};
  for (const [key, val] of Object.entries(/** @type {object} */ (v || {}))) {
    if (val !== undefined && val !== null && val !== '') out[key] = Buffer.isBuffer(val) ? val.toString('utf8') : val;
  }
  // the same PEM as text: the clients given this object (a device's spec) share the context just built
  remember(out, endpoint);
  return out;
}

module.exports = { checkTlsOptions, tlsAsText, TLS_KEYS: KEYS };
