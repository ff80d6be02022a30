'use strict';

/**
 * Modbus RTU over TCP (modbus+rtutcp://host:port): RTU frames, CRC and all, over a TCP socket, as a
 * serial server (Moxa NPort in TCP server mode, Brainboxes ES, many PLC gateways) forwards them to
 * and from its RS-485 line. No MBAP header and no transaction id: a reply is matched to its request
 * exactly as on a serial line, so this is the RTU transport (rtu-transport.js) with a socket where the
 * serial port was. Everything its header promises holds here too: replies checked against the request
 * (unit id, function code, byte count, a write's echo), late and foreign frames read to their end and
 * dropped, the quiet period after a timeout (the serial server hands over whatever its line carries,
 * late replies included), and a reply owed across a reconnect (the line behind the server does not
 * reset when the socket does).
 *
 * THE SILENCE BETWEEN FRAMES. The serial server times the wire, not us, and one request is in flight at
 * a time, so two of our frames never meet on the wire through us: the next request is written only
 * after the whole reply to the one before has arrived (or after a timeout's quiet period, or a
 * broadcast's turnaround delay). Still, the reply reaches us the moment the server has read it, and a
 * request written back at once can reach the line within t3.5 of the slave's last byte, which a slave
 * still turning its transceiver around misses; and some servers put two TCP writes that come close
 * together into one serial burst. So the client keeps a silence before each write, from the last byte
 * received and from the end of its own last frame:
 *   - with `baudRate` in the target: the line's t3.5 (11-bit characters, the Modbus RTU character:
 *     8 data bits plus parity or a second stop bit), e.g. 4.01 ms at 9600 baud, 1.75 ms above 19200;
 *   - without it: 1.75 ms, the spec's fixed t3.5 for lines above 19200 baud, the shortest any
 *     conforming line needs; a slow line needs its own, so give its baudRate;
 *   - the client option silenceUs overrides both (0 for a server known to frame each write by itself).
 *
 * ONE CLIENT PER LINE. A serial server port is one line with one master on it: most accept one TCP
 * client per port, and those that accept several (Moxa's "max connection" 2-8) send each reply from
 * the line to every connected client, where replies to reads of the same shape cannot be told apart.
 * So a device on a modbus+rtutcp target has maxConnections 1 (devices/spec.js), like modbus+rtu.
 */

const { openSocket } = require('../open-socket');
const { NinesError } = require('../../base/errors');
const { rtuSilenceUs } = require('./frame');
const { RtuTransport } = require('./rtu-transport');

/** Bits of one Modbus RTU character: start, 8 data, parity or a second stop bit, stop */
const RTU_BITS_PER_CHAR = 11;
/** t3.5 when the line's baud rate is not given: the spec's fixed value above 19200 baud (Modbus over Serial Line §2.5.1.1) */
const DEFAULT_SILENCE_US = 1750;
const EMPTY = Buffer.alloc(0);
/** One turn of the event loop confirms a quiet period over (RtuTransport#_onConfirm) */
const SOCKET_CONFIRM = Object.freeze({ turns: 1, ns: 0n });

class RtuTcpTransport extends RtuTransport {
  /**
   * @param {{host: string, port: number, url: string, baudRate?: number}} target parsed modbus+rtutcp target
   * @param {{keepAliveMs: number, silenceUs?: number, quietMs?: number, turnaroundMs: number}} opts
   * @param {object} sink the client
   * @param {{lateReplies: number, badFrames: number}} stats counters of the client, updated in place
   */
  constructor (target, opts, sink, stats) {
    super(target, opts, sink, stats);
    this._keepAliveMs = opts.keepAliveMs;
    this._where = `${target.host}:${target.port}`;
    /** @type {import('../open-socket').Attempt|null} the connection attempt under way */
    this._opening = null;
  }

  /**
   * @param {{baudRate?: number}} target
   * @param {{silenceUs?: number}} opts
   * @returns {{silenceUs: number, charNs: number}} charNs 0 when the line's speed is unknown
   */
  _lineTiming (target, opts) {
    const baud = target.baudRate;
    const silenceUs = opts.silenceUs !== undefined ? opts.silenceUs : baud !== undefined ? rtuSilenceUs(baud, RTU_BITS_PER_CHAR) : DEFAULT_SILENCE_US;
    return { silenceUs, charNs: baud !== undefined ? Math.ceil(RTU_BITS_PER_CHAR * 1e9 / baud) : 0 };
  }

  /**
   * One connection attempt (../open-socket.js: timeout, keep-alive, a callback that fires once).
   * @param {number} connectTimeoutMs
   * @param {(err: NinesError|null) => void} cb called once, unless close() comes first
   */
  open (connectTimeoutMs, cb) {
    const t = this._target;
    this._opening = openSocket({ host: t.host, port: t.port, url: t.url, keepAliveMs: this._keepAliveMs }, connectTimeoutMs, (err, socket) => {
      this._opening = null;
      if (err === null) this._adopt(/** @type {import('node:net').Socket} */ (socket));
      cb(err);
    });
  }

  /**
   * The attempt's socket is open: it is the line from now on.
   * @param {import('node:net').Socket} socket
   */
  _adopt (socket) {
    const t = this._target;
    this._port = socket;
    this._portOpened(socket);
    let lastError = null;
    socket.on('error', (err) => { lastError = err; });
    socket.once('close', () => {
      // A replaced connection's socket must not touch the current one
      if (this._port !== socket) return;
      const wasUp = this._portClosed(socket);
      const done = this._closeCb;
      this._closeCb = null;
      if (done) done();
      else if (wasUp) {
        const cause = (lastError && (lastError.code || lastError.message)) || 'closed by peer';
        this._sink._onDown(new NinesError('NINES_ERR_CONNECTION_CLOSED', `connection to ${this._where} lost: ${cause}`, { target: t.url, cause }));
      }
    });
  }

  /** A socket's bytes are read in the poll phase itself: one turn of the loop confirms a quiet period (rtu-transport.js). */
  _confirmNeeds () {
    return SOCKET_CONFIRM;
  }

  /** @returns {boolean} a socket's bytes are read in the poll phase itself: never in flight elsewhere */
  _readInFlight () {
    return false;
  }

  /** @param {() => void} cb called when the socket is closed */
  close (cb) {
    this._p = null;
    if (this._wakeTimer) { clearTimeout(this._wakeTimer); this._wakeTimer = null; }
    if (this._confirming !== null) { clearImmediate(this._confirming); this._confirming = null; }
    const opening = this._opening;
    if (opening !== null) { this._opening = null; opening.abort(cb); return; }
    const socket = this._port;
    if (!socket || socket.destroyed) { this._port = null; cb(); return; }
    this._closeCb = cb;
    socket.destroy();
  }

  /**
   * A broadcast is done once the kernel has the frame: the serial server puts it on the line, and the
   * turnaround delay (turnaroundMs) covers the time it takes there.
   * @param {import('node:net').Socket} socket
   * @param {() => void} cb
   */
  _drained (socket, cb) {
    socket.write(EMPTY, cb);
  }
}

module.exports = { RtuTcpTransport, DEFAULT_SILENCE_US, RTU_BITS_PER_CHAR };
