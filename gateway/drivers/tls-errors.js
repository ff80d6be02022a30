'use strict';

/**
 * A failed TLS handshake → the coded error that names the certificate problem. Node reports our own
 * verdict on the device's certificate as OpenSSL's verify code (UNABLE_TO_VERIFY_LEAF_SIGNATURE,
 * CERT_HAS_EXPIRED…) or ERR_TLS_CERT_ALTNAME_INVALID, and the device's verdict on ours as the alert
 * it sent (ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED…). Tables, not ifs: each code has one home.
 */

const { NinesError } = require('../base/errors');

/** Our verdict on the device's certificate: verify code → [nines code, what it means] */
const VERIFY = Object.freeze({
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: ['NINES_ERR_TLS_UNKNOWN_CA', 'the device\'s certificate is not signed by a CA in tls.ca'],
  UNABLE_TO_GET_ISSUER_CERT: ['NINES_ERR_TLS_UNKNOWN_CA', 'the issuer of the device\'s certificate is not in tls.ca'],
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: ['NINES_ERR_TLS_UNKNOWN_CA', 'the issuer of the device\'s certificate is not in tls.ca'],
  SELF_SIGNED_CERT_IN_CHAIN: ['NINES_ERR_TLS_UNKNOWN_CA', 'the device\'s certificate chains to a root not in tls.ca'],
  DEPTH_ZERO_SELF_SIGNED_CERT: ['NINES_ERR_TLS_UNKNOWN_CA', 'the device\'s certificate is self-signed and not in tls.ca'],
  CERT_SIGNATURE_FAILURE: ['NINES_ERR_TLS_UNKNOWN_CA', 'the signature on the device\'s certificate does not verify'],
  CERT_HAS_EXPIRED: ['NINES_ERR_TLS_CERT_EXPIRED', 'the device\'s certificate has expired'],
  CERT_NOT_YET_VALID: ['NINES_ERR_TLS_CERT_EXPIRED', 'the device\'s certificate is not valid yet (check both clocks)'],
  ERR_TLS_CERT_ALTNAME_INVALID: ['NINES_ERR_TLS_HOSTNAME_MISMATCH', 'the device\'s certificate does not name the host dialled']
});

/** The device's verdict on ours: the alert it sent → [nines code, what it means] */
const ALERT = Object.freeze({
  ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED: ['NINES_ERR_TLS_CLIENT_CERT_REQUIRED', 'the device requires a client certificate (tls.cert, tls.key)'],
  // TLS 1.2 has no "certificate required" alert: OpenSSL sends handshake_failure when the client sent none
  ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE: ['NINES_ERR_TLS_CLIENT_CERT_REQUIRED', 'the device ended the handshake (TLS 1.2 handshake_failure: most often a client certificate it requires and did not get, else no cipher in common)'],
  ERR_SSL_TLSV1_ALERT_UNKNOWN_CA: ['NINES_ERR_TLS_CLIENT_CERT_REJECTED', 'the device does not trust the CA that signed our client certificate'],
  ERR_SSL_SSLV3_ALERT_CERTIFICATE_EXPIRED: ['NINES_ERR_TLS_CLIENT_CERT_REJECTED', 'the device says our client certificate has expired'],
  ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE: ['NINES_ERR_TLS_CLIENT_CERT_REJECTED', 'the device refused our client certificate (bad certificate)'],
  ERR_SSL_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE: ['NINES_ERR_TLS_CLIENT_CERT_REJECTED', 'the device refused our client certificate (unsupported certificate)'],
  ERR_SSL_SSLV3_ALERT_CERTIFICATE_REVOKED: ['NINES_ERR_TLS_CLIENT_CERT_REJECTED', 'the device says our client certificate is revoked'],
  ERR_SSL_TLSV1_ALERT_ACCESS_DENIED: ['NINES_ERR_TLS_CLIENT_CERT_REJECTED', 'the device denied access to our client certificate']
});

/**
 * OpenSSL 3.5 (Node 24) names the alerts TLS 1.2 inherited from SSL 3 "ssl/tls alert" where 3.0 (Node 20,
 * 22) said "sslv3 alert": ERR_SSL_SSL/TLS_ALERT_HANDSHAKE_FAILURE is ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE.
 * @param {string} code @returns {string} the code as the table names it
 */
function alertCode (code) {
  return code.startsWith('ERR_SSL_SSL/TLS_ALERT_') ? 'ERR_SSL_SSLV3_ALERT_' + code.slice('ERR_SSL_SSL/TLS_ALERT_'.length) : code;
}

/**
 * @param {{code?: string, message?: string, syscall?: string}} err what the TLS socket emitted
 * @param {string} host
 * @param {number} port
 * @param {string} target the target's URL, for details
 * @returns {NinesError|null} the coded TLS error, or null when err is no TLS error (a refused or reset
 *   TCP connection stays NINES_ERR_CONNECT_FAILED)
 */
function tlsError (err, host, port, target) {
  const cause = err.code || '';
  const known = VERIFY[cause] || ALERT[alertCode(cause)];
  if (known !== undefined) {
    return new NinesError(known[0], `TLS handshake with ${host}:${port} failed: ${known[1]} (${cause})`, { target, cause });
  }
  // A system error (refused, reset, unreachable) is no TLS failure: it stays NINES_ERR_CONNECT_FAILED
  if (cause === '' || /** @type {any} */ (err).syscall !== undefined || /^E[A-Z]+$/.test(cause)) return null;
  // Any other verify code (INVALID_PURPOSE, CERT_REVOKED…) or OpenSSL failure: a plain-TCP device on a TLS
  // port (wrong version number), no cipher in common…
  return new NinesError('NINES_ERR_TLS_HANDSHAKE_FAILED', `TLS handshake with ${host}:${port} failed: ${err.message} (${cause})`, { target, cause });
}

module.exports = { tlsError };
