'use strict';

/**
 * Modbus/TCP Security for the Modbus TCP simulator: the `tls` option checked, the TLS server made, and
 * the role read from a client certificate.
 *
 * The simulator serves the same model, faults and quirks over TLS as in clear (tcp-server.js only swaps
 * net.createServer for tls.createServer): a request is counted only once it arrives through a finished
 * handshake, so a refused handshake leaves `requests` at 0. With `ca`, a client certificate signed by it
 * is required, as the spec asks of a device; handshakes that fail are counted (`tlsRejected`, the last
 * OpenSSL reason in `sim.lastTlsError`).
 *
 * The role: the Modbus/TCP Security spec puts the client's role in an X.509v3 extension of its
 * certificate, OID 1.3.6.1.4.1.50316.802.1, holding an ASN.1 UTF8String. The simulator reads it (for
 * tests and for `nines sim` output) and does not authorise by it: every role may read and write.
 */

const tls = require('node:tls');
const { invalid, objectOption, noUnknownKeys, oneOf } = require('./validate');

const TLS_KEYS = Object.freeze(['cert', 'key', 'ca', 'maxVersion']);
/** DER of the role extension's OID, 1.3.6.1.4.1.50316.802.1 (tag 06, length 11, base-128 arcs) */
const ROLE_OID_DER = Buffer.from('060b2b0601040183890c862201', 'hex');

/**
 * @param {unknown} v the simulator's tls option: {cert, key, ca?, maxVersion?}, PEM texts
 * @returns {{cert: string|Buffer, key: string|Buffer, ca?: string|Buffer, maxVersion?: string}|null} null: no TLS
 * @throws {import('../../base/errors').NinesError} NINES_ERR_INVALID_ARG naming the option
 */
function checkSimTls (v) {
  if (v === undefined || v === null) return null;
  const o = objectOption(v, 'tls');
  noUnknownKeys(o, 'tls', TLS_KEYS);
  for (const key of ['cert', 'key']) {
    if (typeof o[key] !== 'string' && !Buffer.isBuffer(o[key])) invalid(`tls.${key}`, typeof o[key], 'PEM text (the simulator\'s certificate and key)');
  }
  if (o.ca !== undefined && typeof o.ca !== 'string' && !Buffer.isBuffer(o.ca)) invalid('tls.ca', typeof o.ca, 'PEM text of the CA that signs client certificates');
  const out = { cert: o.cert, key: o.key };
  if (o.ca !== undefined) out.ca = o.ca;
  if (o.maxVersion !== undefined) out.maxVersion = oneOf(o.maxVersion, 'tls.maxVersion', ['TLSv1.2', 'TLSv1.3']);
  try {
    tls.createSecureContext(out);
  } catch (err) {
    invalid('tls', /** @type {Error} */ (err).message, 'a certificate and the key that belongs to it, in PEM');
  }
  return out;
}

/**
 * The TLS server of a simulator.
 * @param {{cert: string|Buffer, key: string|Buffer, ca?: string|Buffer, maxVersion?: string}} t checked by checkSimTls
 * @param {(socket: import('node:tls').TLSSocket) => void} onSecure a connection whose handshake succeeded
 * @param {(err: Error) => void} onRejected a handshake that failed
 * @returns {import('node:tls').Server}
 */
function createTlsServer (t, onSecure, onRejected) {
  /** @type {import('node:tls').TlsOptions} */
  const o = { cert: t.cert, key: t.key, noDelay: true };
  if (t.maxVersion !== undefined) o.maxVersion = /** @type {any} */ (t.maxVersion);
  // With a CA, a client certificate signed by it is required (the spec's mutual authentication)
  if (t.ca !== undefined) Object.assign(o, { ca: t.ca, requestCert: true, rejectUnauthorized: true });
  const server = tls.createServer(o, onSecure);
  server.on('tlsClientError', onRejected);
  return server;
}

/**
 * The Modbus/TCP Security role in a certificate (file header).
 * @param {Buffer|undefined} der the certificate, DER
 * @returns {string|null} the role, or null when the certificate carries none
 */
function roleOf (der) {
  if (!Buffer.isBuffer(der)) return null;
  const at = der.indexOf(ROLE_OID_DER);
  if (at < 0) return null;
  let i = at + ROLE_OID_DER.length;
  if (der[i] === 0x01) i += 2 + der[i + 1]; // critical BOOLEAN
  if (der[i] !== 0x04) return null; // OCTET STRING wrapping the value
  i += 2;
  if (der[i] !== 0x0c) return null; // UTF8String
  const len = der[i + 1];
  if (len > 127) return null; // a role is a short name; long forms are not worth a parser here
  return der.toString('utf8', i + 2, i + 2 + len);
}

module.exports = { checkSimTls, createTlsServer, roleOf };
