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
 */

const net = require('node:net');
const C = require('../base/constants');
const { NinesError } = require('../base/errors');

/**
 * @typedef {object} Endpoint
 * @property {string} host
 * @property {number} port
 * @property {string} url the target as the user gave it, for the errors' details
 * @property {number} [keepAliveMs] idle time before the first keep-alive probe (default C.TCP_KEEPALIVE_MS;
 *   0: the system's default)
 * @property {{buffer: Buffer, callback: (n: number, buf: Buffer) => boolean|void}} [onread] net's onread:
 *   the socket reads into this buffer instead of emitting 'data' (set at creation, so given here)
 */

/**
 * @typedef {object} Attempt
 * @property {(done?: () => void) => void} abort ends the attempt if it is still under way: its socket is
 *   destroyed and its callback never fires. `done` is called once that socket is closed (at once when
 *   there is nothing to wait for). After the callback has fired, abort() only calls `done`.
 */

/**
 * Opens one TCP connection.
 * @param {Endpoint} endpoint
 * @param {number} connectTimeoutMs how long the attempt may take, checked by the caller's options
 * @param {(err: NinesError|null, socket?: net.Socket) => void} cb called once, unless aborted first
 * @returns {Attempt}
 */
function openSocket (endpoint, connectTimeoutMs, cb) {
  const { host, port, url } = endpoint;
  const keepAliveMs = endpoint.keepAliveMs === undefined ? C.TCP_KEEPALIVE_MS : endpoint.keepAliveMs;
  const socket = net.connect(endpoint.onread === undefined ? { host, port } : { host, port, onread: endpoint.onread });
  // Once true, nothing of this attempt reaches cb again, and the socket is handed over only if it was by onConnect
  let ended = false;
  let handedOver = false;

  const fail = (err) => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    socket.destroy();
    cb(err);
  };
  const onConnect = () => {
    // A late connect of an attempt already given up: the transport has moved on, so this socket must go
    if (ended) { socket.destroy(); return; }
    ended = true;
    handedOver = true;
    clearTimeout(timer);
    socket.removeListener('error', onError);
    socket.removeListener('close', onClose);
    socket.setNoDelay(true);
    socket.setKeepAlive(true, keepAliveMs);
    cb(null, socket);
  };
  const onError = (err) => {
    const cause = err.code || err.message;
    fail(new NinesError('NINES_ERR_CONNECT_FAILED', `connect to ${host}:${port} failed: ${cause}`, { target: url, cause }));
  };
  // Closed before 'connect' without an error: someone else destroyed the socket
  const onClose = () => fail(new NinesError('NINES_ERR_CONNECT_FAILED', `connect to ${host}:${port} failed: closed before it opened`,
    { target: url, cause: 'closed' }));
  const timer = setTimeout(() => fail(new NinesError('NINES_ERR_CONNECT_TIMEOUT', `connect to ${host}:${port} timed out after ${connectTimeoutMs} ms`,
    { target: url, connectTimeoutMs })), connectTimeoutMs);

  socket.once('connect', onConnect);
  socket.on('error', onError);
  socket.once('close', onClose);

  return {
    abort (done) {
      if (!ended) {
        ended = true;
        clearTimeout(timer);
        socket.destroy();
      }
      if (done === undefined) return;
      if (handedOver || socket.closed) done();
      else socket.once('close', () => done());
    }
  };
}

module.exports = { openSocket };
