'use strict';

/**
 * One TCP connection attempt, for every driver that talks over a socket (Modbus TCP, Modbus RTU over
 * TCP, ASCII), as undici's buildConnector and MQTT.js's per-transport stream builders do it: the
 * transports keep only their framing, and opening a socket, with all that can go wrong meanwhile,
 * lives here once.
 *
 * What an attempt promises:
 * - its callback fires exactly once, with the open socket or with one coded error, unless abort()
 *   comes first, and then never:
 *     NINES_ERR_CONNECT_TIMEOUT {target, connectTimeoutMs}  it did not open within connectTimeoutMs
 *     NINES_ERR_CONNECT_FAILED  {target, cause}             refused, unreachable, reset (cause: the
 *                                                           system error code, e.g. ECONNREFUSED)
 * - the socket it hands over has Nagle off (requests are a few bytes and latency is the product) and
 *   TCP keep-alive on after keepAliveMs idle (default C.TCP_KEEPALIVE_MS), so a peer that vanished
 *   without a FIN (power cut, cable pulled) is found even while nothing is polled;
 * - the socket of an attempt that ended without it (timed out, failed, aborted) is destroyed, and a
 *   connect of that socket that completes late is destroyed too, never handed over: nothing of an
 *   abandoned attempt can reach a transport. A SYN into a black hole would otherwise linger for
 *   minutes after close();
 * - the socket handed over carries none of the attempt's listeners: the transport adds its own
 *   ('error', 'close', and 'data' or onread) within the callback, before any event can come.
 *
 * With endpoint.tls (Modbus/TCP Security, modbus+tls://), the same promises hold for the TLS
 * connection: the connect timeout covers the TCP connect and the handshake, and the socket is handed
 * over only once the handshake has succeeded, so nothing the transport writes can leave before it (or
 * ever leave in clear). A failed handshake is one coded error that names the certificate problem
 * (tls-errors.js: NINES_ERR_TLS_UNKNOWN_CA, _CERT_EXPIRED, _HOSTNAME_MISMATCH, _CLIENT_CERT_REQUIRED,
 * _CLIENT_CERT_REJECTED, _HANDSHAKE_FAILED). The device's certificate is always verified, chain and
 * name (tls-options.js says why there is no switch).
 *
 * TLS 1.3 moves the server's verdict on our client certificate after our side of the handshake: Node
 * says 'secureConnect' and the server's refusal (an alert) comes one round trip later. So on TLS 1.3
 * the socket is handed over at the server's first word after the handshake: a session ticket (OpenSSL
 * servers send two once they have accepted the client) or the alert, which fails the attempt with
 * its code; a server that sends no ticket costs at most C.TLS13_VERDICT_MS (within the connect
 * timeout). An alert later still reaches the transport as the cause of a dropped connection
 * (tcp-transport.js maps it with tls-errors.js too). TLS 1.2 has no such gap.
 */

const net = require('node:net');
const tls = require('node:tls');
const C = require('../base/constants');
const { NinesError } = require('../base/errors');
const { tlsError } = require('./tls-errors');

/**
 * @typedef {object} Endpoint
 * @property {string} host
 * @property {number} port
 * @property {string} url the target as the user gave it, for the errors' details
 * @property {number} [keepAliveMs] idle time before the first keep-alive probe (default C.TCP_KEEPALIVE_MS;
 *   0: the system's default)
 * @property {{buffer: Buffer, callback: (n: number, buf: Buffer) => boolean|void}} [onread] net's onread:
 *   the socket reads into this buffer instead of emitting 'data' (set at creation, so given here)
 * @property {import('./tls-options').TlsEndpoint} [tls] connect with TLS (checked by tls-options.js)
 */

/**
 * @typedef {object} Attempt
 * @property {(done?: () => void) => void} abort ends the attempt if it is still under way: its socket is
 *   destroyed and its callback never fires. `done` is called once that socket is closed (at once when
 *   there is nothing to wait for). After the callback has fired, abort() only calls `done`.
 */

/**
 * Opens one TCP connection, or one TLS connection over it (endpoint.tls).
 * @param {Endpoint} endpoint
 * @param {number} connectTimeoutMs how long the attempt may take (TLS: handshake included), checked by the caller's options
 * @param {(err: NinesError|null, socket?: net.Socket) => void} cb called once, unless aborted first
 * @returns {Attempt}
 */
function openSocket (endpoint, connectTimeoutMs, cb) {
  const { host, port, url } = endpoint;
  const keepAliveMs = endpoint.keepAliveMs === undefined ? C.TCP_KEEPALIVE_MS : endpoint.keepAliveMs;
  const secure = endpoint.tls !== undefined;
  const opts = endpoint.onread === undefined ? { host, port } : { host, port, onread: endpoint.onread };
  const socket = secure ? tls.connect(tlsConnectOptions(opts, endpoint.tls)) : net.connect(opts);
  const startedAt = performance.now();
  // Once true, nothing of this attempt reaches cb again, and the socket is handed over only if it was by onConnect
  let ended = false;
  let handedOver = false;
  /** @type {NodeJS.Timeout|null} TLS 1.3: waiting for the server's verdict on our certificate */
  let verdict = null;

  const fail = (err) => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    if (verdict !== null) clearTimeout(verdict);
    socket.destroy();
    cb(err);
  };
  const onConnect = () => {
    // A late connect of an attempt already given up: the transport has moved on, so this socket must go
    if (ended) { socket.destroy(); return; }
    ended = true;
    handedOver = true;
    clearTimeout(timer);
    if (verdict !== null) clearTimeout(verdict);
    socket.removeListener('error', onError);
    socket.removeListener('close', onClose);
    socket.removeListener('session', onTicket);
    socket.setNoDelay(true);
    socket.setKeepAlive(true, keepAliveMs);
    cb(null, socket);
  };
  // TLS: the handshake is done on our side; on 1.3 the server may still refuse our certificate (file header)
  const onSecureConnect = () => {
    if (ended) { socket.destroy(); return; }
    if (/** @type {import('node:tls').TLSSocket} */ (socket).getProtocol() !== 'TLSv1.3') { onConnect(); return; }
    // Not from within 'session' itself: a write made inside it (the transport's first request, at once)
    // corrupts the TLS stream (the server answers bad_record_mac)
    socket.once('session', onTicket);
    const left = connectTimeoutMs - (performance.now() - startedAt);
    verdict = setTimeout(onConnect, Math.max(0, Math.min(C.TLS13_VERDICT_MS, left)));
  };
  const onTicket = () => { setImmediate(onConnect); };
  const onError = (err) => {
    const coded = secure ? tlsError(err, host, port, url) : null;
    if (coded !== null) { fail(coded); return; }
    const cause = err.code || err.message;
    fail(new NinesError('NINES_ERR_CONNECT_FAILED', `connect to ${host}:${port} failed: ${cause}`, { target: url, cause }));
  };
  // Closed before 'connect' without an error: someone else destroyed the socket; or, while TLS 1.3 waits
  // for the verdict, the device hung up on our certificate without an alert (Node's own TLS servers do)
  const onClose = () => fail(verdict !== null ? silentRefusal(endpoint) : new NinesError('NINES_ERR_CONNECT_FAILED',
    `connect to ${host}:${port} failed: closed before it opened`, { target: url, cause: 'closed' }));
  const timer = setTimeout(() => fail(new NinesError('NINES_ERR_CONNECT_TIMEOUT', `connect to ${host}:${port} timed out after ${connectTimeoutMs} ms`,
    { target: url, connectTimeoutMs })), connectTimeoutMs);

  socket.once(secure ? 'secureConnect' : 'connect', secure ? onSecureConnect : onConnect);
  socket.on('error', onError);
  socket.once('close', onClose);

  return {
    abort (done) {
      if (!ended) {
        ended = true;
        clearTimeout(timer);
        if (verdict !== null) clearTimeout(verdict);
        socket.destroy();
      }
      if (done === undefined) return;
      if (handedOver || socket.closed) done();
      else socket.once('close', () => done());
    }
  };
}

/**
 * The device closed a TLS 1.3 connection right after the handshake, before a word of its own and with no
 * alert: how servers that judge the client's certificate after the handshake, or drop their alert (Node's
 * and Python asyncio's TLS servers do both), refuse a client certificate, or the lack of one.
 * @param {Endpoint} endpoint
 * @returns {NinesError}
 */
function silentRefusal (endpoint) {
  const { host, port, url } = endpoint;
  const cert = endpoint.tls !== undefined && endpoint.tls.clientCert;
  const cause = 'closed after handshake';
  const said = `TLS handshake with ${host}:${port} failed: the device closed the connection right after the handshake, without an alert`;
  return cert
    ? new NinesError('NINES_ERR_TLS_CLIENT_CERT_REJECTED', `${said}, as a device that refuses the client certificate does`, { target: url, cause })
    : new NinesError('NINES_ERR_TLS_CLIENT_CERT_REQUIRED', `${said}, as a device that requires a client certificate does (set tls.cert and tls.key)`, { target: url, cause });
}

/**
 * tls.connect's options for one attempt: the secure context built once by tls-options.js, and the name
 * the device's certificate must carry (Node checks it with tls.checkServerIdentity).
 * @param {{host: string, port: number, onread?: object}} opts
 * @param {import('./tls-options').TlsEndpoint} t
 * @returns {import('node:tls').ConnectionOptions}
 */
function tlsConnectOptions (opts, t) {
  /** @type {import('node:tls').ConnectionOptions} */
  const o = { ...opts, secureContext: t.secureContext, rejectUnauthorized: true };
  if (t.servername !== undefined) o.servername = t.servername;
  return o;
}

module.exports = { openSocket };
