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
 * Opening the socket (timeout, keep-alive, one callback) is ../open-socket.js's; once open, each of
 * the socket's handlers checks that it is still the transport's socket, so one that close() has let
 * go can never reach the client, whatever its events do later.
 */

const { NinesError } = require('../../base/errors');
const { openSocket } = require('../open-socket');

class TcpTransport {
  /**
   * @param {{host: string, port: number, url: string}} target parsed ascii:// target
   * @param {object} sink the client (see the file header)
   */
  constructor (target, sink) {
    this._target = target;
    this._where = `${target.host}:${target.port}`;
    this._sink = sink;
    /** @type {import('node:net').Socket|null} */
    this._socket = null;
    /** @type {import('../open-socket').Attempt|null} the connection attempt under way */
    this._opening = null;
  }

  /**
   * One connection attempt.
   * @param {number} connectTimeoutMs
   * @param {(err: NinesError|null) => void} cb called once, unless close() comes first
   */
  open (connectTimeoutMs, cb) {
    this._opening = openSocket(this._target, connectTimeoutMs, (err, socket) => {
      this._opening = null;
      if (err === null) this._adopt(/** @type {import('node:net').Socket} */ (socket));
      cb(err);
    });
  }

  /**
   * The attempt's socket is open: it is this transport's connection until it closes or close() lets it go.
   * @param {import('node:net').Socket} socket
   */
  _adopt (socket) {
    this._socket = socket;
    let failure = null;
    socket.on('data', (chunk) => { if (this._socket === socket) this._sink._onData(chunk); });
    socket.on('end', () => {
      if (this._socket === socket) this._sink._onPeerEnd();
      socket.destroy();
    });
    // Without a listener a socket error would crash the process; the close handler reports it
    socket.on('error', (err) => { if (!failure) failure = err; });
    socket.on('close', () => {
      if (this._socket !== socket) return;
      this._socket = null;
      const cause = failure && failure.code ? failure.code : undefined;
      this._sink._onDown(new NinesError('NINES_ERR_CONNECTION_CLOSED', `connection to ${this._where} closed${cause ? ' (' + cause + ')' : ''}`,
        { cause, target: this._target.url }));
    });
  }

  /** @param {Buffer} buf the encoded command */
  send (buf) {
    /** @type {import('node:net').Socket} */ (this._socket).write(buf);
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
    const opening = this._opening;
    if (opening !== null) { this._opening = null; opening.abort(cb); return; }
    const socket = this._socket;
    this._socket = null; // the socket's own handlers are now stale
    if (!socket || socket.closed) { cb(); return; }
    socket.once('close', () => cb());
    socket.destroy();
  }
}

module.exports = { TcpTransport };
