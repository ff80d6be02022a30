'use strict';

/**
 * ASCII TCP transport: one socket to a Brainboxes ED / DCON device and nothing else. It opens it,
 * writes bytes, hands received chunks on, and says when the connection is gone. Framing, matching
 * replies and every protocol rule (drain, resync, late replies) stay in client.js.
 *
 * Interface (the shape of the Modbus transports, ../modbus/tcp-transport.js, where it fits):
 *   open(connectTimeoutMs, cb(err|null))  one connection attempt; err: NINES_ERR_CONNECT_FAILED / _TIMEOUT
 *   send(buf)                              writes synchronously (the caller knows the connection is open)
 *   drop()                                 ends the open connection now; the sink hears _onDown as for any drop
 *   close(cb)                              closes for good, cb when the socket is gone; no callbacks after it
 * and calls back into the client ("sink"):
 *   sink._onData(chunk)                    bytes received
 *   sink._onPeerEnd()                      the device sent FIN: stop writing, _onDown follows
 *   sink._onDown(err)                      an open connection was lost (err: NINES_ERR_CONNECTION_CLOSED)
 *
 * Each socket's handlers check a generation number, so a socket that close() or a newer attempt has
 * replaced can never reach the client, whatever its events do later.
 */

const net = require('node:net');
const { NinesError } = require('../../base/errors');

class TcpTransport {
  /**
   * @param {{host: string, port: number, url: string}} target parsed ascii:// target
   * @param {object} sink the client (see the file header)
   */
  constructor (target, sink) {
    this._target = target;
    this._where = `${target.host}:${target.port}`;
    this._sink = sink;
    /** @type {net.Socket|null} */
    this._socket = null;
    this._gen = 0;
    this._connectTimer = null;
  }

  /**
   * One connection attempt.
   * @param {number} connectTimeoutMs
   * @param {(err: NinesError|null) => void} cb called once, unless close() comes first
   */
  open (connectTimeoutMs, cb) {
    const gen = ++this._gen;
    let up = false;
    let failure = null;
    const socket = net.connect({ host: this._target.host, port: this._target.port });
    this._socket = socket;
    // Commands are tiny and latency is the product: never wait for Nagle
    socket.setNoDelay(true);
    socket.setKeepAlive(true);
    this._connectTimer = setTimeout(() => {
      this._connectTimer = null;
      failure = new NinesError('NINES_ERR_CONNECT_TIMEOUT', `connect to ${this._where} timed out after ${connectTimeoutMs} ms`,
        { target: this._target.url, connectTimeoutMs });
      socket.destroy();
    }, connectTimeoutMs);
    socket.once('connect', () => {
      if (gen !== this._gen) return;
      this._clearConnectTimer();
      up = true;
      cb(null);
    });
    socket.on('data', (chunk) => { if (gen === this._gen) this._sink._onData(chunk); });
    socket.on('end', () => {
      if (gen === this._gen) this._sink._onPeerEnd();
      socket.destroy();
    });
    // Without a listener a socket error would crash the process; the close handler reports it
    socket.on('error', (err) => { if (!failure) failure = err; });
    socket.on('close', () => {
      if (gen !== this._gen) return;
      this._clearConnectTimer();
      this._socket = null;
      const cause = failure && failure.code ? failure.code : undefined;
      if (!up) {
        cb(failure instanceof NinesError ? failure
          : new NinesError('NINES_ERR_CONNECT_FAILED', `connect to ${this._where} failed${cause ? ' (' + cause + ')' : ''}`, { cause, target: this._target.url }));
        return;
      }
      this._sink._onDown(new NinesError('NINES_ERR_CONNECTION_CLOSED', `connection to ${this._where} closed${cause ? ' (' + cause + ')' : ''}`,
        { cause, target: this._target.url }));
    });
  }

  /** @param {Buffer} buf the encoded command */
  send (buf) {
    /** @type {net.Socket} */ (this._socket).write(buf);
  }

  /** Ends the open connection now (a resync); its close handler reports the drop. */
  drop () {
    if (this._socket) this._socket.destroy();
  }

  /**
   * Closes the socket; nothing reaches the sink afterwards.
   * @param {() => void} cb called when the socket is closed
   */
  close (cb) {
    const socket = this._socket;
    this._socket = null;
    this._gen++; // the socket's own handlers are now stale
    this._clearConnectTimer();
    if (!socket || socket.closed) { cb(); return; }
    socket.once('close', () => cb());
    socket.destroy();
  }

  _clearConnectTimer () {
    if (this._connectTimer !== null) {
      clearTimeout(this._connectTimer);
      this._connectTimer = null;
    }
  }
}

module.exports = { TcpTransport };
