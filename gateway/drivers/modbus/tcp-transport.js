'use strict';

/**
 * Modbus TCP transport, in clear (modbus+tcp://) or over TLS (modbus+tls://, Modbus/TCP Security: the
 * same MBAP frames inside TLS; ../open-socket.js makes the TLS connection and hands it over only after
 * the handshake): one socket, MBAP framing in both directions, and the match of each response
 * to its request by transaction id and unit id (the function code is checked by the PDU decoder).
 * The client (client.js, on ../connection.js) owns the queue, timeouts and reconnects; this file
 * only moves frames.
 *
 * One request in flight (maxInflight 1, the default and the benchmarked path): the request on the wire
 * is one field, a reply carrying any other transaction id is dropped as late (counted), and a reply from
 * the wrong unit fails only its request. Nothing per request is allocated or looked up.
 *
 * Pipelined (maxInflight > 1): requests in flight are kept by transaction id, and each reply goes to
 * the request with its id, in whatever order replies come. Here a reply that does not fit means the
 * byte stream can no longer be trusted to say which reply is whose, so the connection is reset
 * (every request in flight fails, NINES_ERR_BAD_REPLY with details.reset, then the client reconnects)
 * rather than risk giving one request another's answer: a transaction id that is neither in flight
 * nor owed (below), a reply from another unit than its request's, and (checked by the client) a
 * PDU that does not fit its request. A late reply to a timed-out request (its id is owed) is still
 * only dropped.
 *
 * Pipelined, the requests written in one turn of the event loop (a lane's next request after each
 * reply in a chunk, a device handing out several queued requests) leave in one writev: the socket is
 * corked at the first and uncorked on process.nextTick, which runs once the current callback and its
 * promise reactions are done. One system call for the batch instead of one per request: on loopback
 * the write path was most of the client's CPU per request. The delay is that of the same turn.
 *
 * Reading (issue 11): the socket reads into one buffer the thread's Modbus TCP connections share
 * (net's `onread`), not into a fresh Buffer per read, and frames are parsed in place from it: a
 * readable stream allocates a buffer, its ArrayBuffer and a nextTick per chunk, which was a third of
 * a closed loop's garbage. Reads on one thread never overlap and each is parsed before it returns,
 * so sharing is safe; what outlives the read is copied: the partial frame (into this connection's
 * own 260-byte buffer) and the frame a reply keeps as `raw`.
 *
 * A late reply carries the transaction id of its timed-out request, so it is dropped, unless that id has
 * come round again: ids are 16 bits and wrap after 65,536 requests. So the id of a request that timed
 * out is not reused on that connection while its reply is owed (until the reply comes, or until
 * MAX_OWED_TIDS later requests have gone unanswered too): a late reply can never match another request.
 * A new connection starts afresh, since no reply to the old one can reach it. The ASCII transport (../ascii/tcp-transport.js) has the same shape where it fits.
 *
 * Interface shared with rtu-transport.js (the client calls these):
 *   open(connectTimeoutMs, cb(err|null))  one connection attempt
 *   ready() → boolean                      a request can be written now (RTU: else it calls sink._pump() later)
 *   send(pending)                          writes the request synchronously; sets pending.sentNs
 *   abort(pending)                         the request in flight timed out: forget it
 *   close(cb)                              closes, cb when the socket is gone
 *   reset(cause, message, hex, culprit)    TCP: fail everything in flight and drop the connection
 * and calls back into the client ("sink"):
 *   sink._onResponse(pending, buf, frameStart, frameEnd, pduStart, pduEnd)  a frame answering the request
 *                                           in flight (the PDU is checked by the client)
 *   sink._onFrameError(pending, err)        the frame answering it is malformed (coded error)
 *   sink._onBroken(message, hex, culprit)   TCP: the stream cannot be trusted; fail every request in
 *                                           flight (the socket is destroyed right after)
 *   sink._onLateReply(tid)                  TCP, pipelined: the late reply to a timed-out request came
 *   sink._onNoReply(pending)                RTU broadcast written: no reply will come
 *   sink._onDown(err)                       an open connection was lost (err: NINES_ERR_CONNECTION_CLOSED)
 *   sink._pump()                            the line became free (RTU)
 */

const { openSocket } = require('../open-socket');
const { NinesError } = require('../../base/errors');
const C = require('../../base/constants');
const { MBAP_LENGTH } = require('./frame');
const { tlsError } = require('../tls-errors');

/** Largest MBAP length field: unit id + a 253-byte PDU */
const MAX_MBAP_LENGTH = C.MODBUS_TCP_MAX_ADU - 6;
/** Smallest MBAP length field that can hold a response: unit id + function code + one byte */
const MIN_MBAP_LENGTH = 3;
/** Transaction ids of unanswered requests kept out of use on one connection (the oldest is freed past this) */
const MAX_OWED_TIDS = 4096;
/** Bytes one read takes at most: 64 full frames, what a pipelining connection may owe at once */
const READ_BUFFER_SIZE = 64 * C.MODBUS_TCP_MAX_ADU;

/** The read buffer of every connection of this thread (file header); made with the first connection */
let readBuffer = null;

class TcpTransport {
  /**
   * @param {{host: string, port: number, url: string}} target parsed modbus+tcp target
   * @param {{keepAliveMs: number, maxInflight: number, tls?: import('../tls-options').TlsEndpoint}} opts (tls: modbus+tls)
   * @param {object} sink the client (see the file header)
   * @param {{lateReplies: number, badFrames: number}} stats counters of the client, updated in place
   */
  constructor (target, opts, sink, stats) {
    this._target = target;
    this._keepAliveMs = opts.keepAliveMs;
    /** @type {import('../tls-options').TlsEndpoint|undefined} */
    this._tls = opts.tls;
    this._sink = sink;
    this._stats = stats;
    /** @type {import('node:net').Socket|null} */
    this._socket = null;
    this._up = false;
    // Set once a frame handler or a fatal framing error has given the socket up: stop reading at once
    this._dead = false;
    /** @type {any} the request in flight, or null (maxInflight 1) */
    this._p = null;
    /** @type {Map<number, any>|null} transaction id → request in flight (maxInflight > 1); null at 1 */
    this._byTid = opts.maxInflight > 1 ? new Map() : null;
    this._tid = 0;
    /** @type {Set<number>} transaction ids of timed-out requests whose replies may still come, oldest first */
    this._owedTids = new Set();
    // Partial frame carried between chunks (only used when a response is split across reads)
    this._rx = Buffer.allocUnsafe(C.MODBUS_TCP_MAX_ADU);
    this._rxLen = 0;
    // The last request ADU, rewritten in place (new transaction id) when the same op is sent again
    this._txOp = null;
    this._txUnit = -1;
    /** @type {Buffer|null} */
    this._txBuf = null;
    this._closeCb = null;
    /** @type {import('../open-socket').Attempt|null} the connection attempt under way */
    this._opening = null;
    /** @type {string|null} why we dropped the connection ourselves */
    this._cause = null;
    // Pipelined: the socket is corked until the end of this turn (file header)
    this._corked = null;
    this._uncork = this._uncork.bind(this);
    this._onRead = this._onRead.bind(this);
    /** Frames handed to the client live in a buffer read into again: the client copies what it keeps */
    this.sharedReads = true;
  }

  /**
   * One connection attempt (../open-socket.js: timeout, keep-alive, a callback that fires once).
   * @param {number} connectTimeoutMs
   * @param {(err: NinesError|null) => void} cb called once, unless close() comes first
   */
  open (connectTimeoutMs, cb) {
    if (readBuffer === null) readBuffer = Buffer.allocUnsafe(READ_BUFFER_SIZE);
    const t = this._target;
    const endpoint = { host: t.host, port: t.port, url: t.url, keepAliveMs: this._keepAliveMs, onread: { buffer: readBuffer, callback: this._onRead } };
    if (this._tls !== undefined) endpoint.tls = this._tls;
    this._opening = openSocket(endpoint, connectTimeoutMs, (err, socket) => {
        this._opening = null;
        if (err === null) this._adopt(/** @type {import('node:net').Socket} */ (socket));
        cb(err);
      });
  }

  /**
   * The attempt's socket is open: it is this transport's connection from now on, fresh.
   * @param {import('node:net').Socket} socket
   */
  _adopt (socket) {
    const { host, port } = this._target;
    this._socket = socket;
    this._up = true;
    this._dead = false;
    this._cause = null;
    this._rxLen = 0;
    this._p = null;
    if (this._byTid !== null) this._byTid.clear();
    this._owedTids.clear();
    let lastError = null;
    socket.on('error', (err) => { lastError = err; });
    socket.once('close', () => {
      // A replaced connection's socket must not touch the current one
      if (this._socket !== socket) return;
      this._socket = null;
      this._up = false;
      this._dead = true;
      this._p = null;
      if (this._byTid !== null) this._byTid.clear();
      const done = this._closeCb;
      this._closeCb = null;
      if (done) done();
      else {
        // TLS 1.3: a device may refuse our certificate after the handshake looked done (../open-socket.js)
        const refused = this._tls !== undefined && this._cause === null && lastError ? tlsError(lastError, host, port, this._target.url) : null;
        if (refused !== null) { this._sink._onDown(refused); return; }
        const cause = this._cause || (lastError && (lastError.code || lastError.message)) || 'closed by peer';
        this._sink._onDown(new NinesError('NINES_ERR_CONNECTION_CLOSED', `connection to ${host}:${port} lost: ${cause}`,
          { target: this._target.url, cause }));
      }
    });
  }

  /** @returns {boolean} */
  ready () {
    return this._up && !this._dead;
  }

  /**
   * Frames and writes a request synchronously (the caller checked ready()).
   * @param {{op: object, pdu: Buffer, unitId: number, tid: number, sentNs: bigint}} p
   */
  send (p) {
    let tid = (this._tid + 1) & 0xFFFF;
    const owed = this._owedTids;
    const byTid = this._byTid;
    if (byTid !== null) {
      // Neither an owed id nor one still in flight (possible only after 65,536 requests went by one)
      while (owed.has(tid) || byTid.has(tid)) tid = (tid + 1) & 0xFFFF;
      byTid.set(tid, p);
    } else {
      if (owed.size !== 0) while (owed.has(tid)) tid = (tid + 1) & 0xFFFF;
      this._p = p;
    }
    this._tid = tid;
    p.tid = tid;
    let buf = this._txBuf;
    if (p.op !== this._txOp || p.unitId !== this._txUnit) {
      const pdu = p.pdu;
      buf = Buffer.allocUnsafe(MBAP_LENGTH + pdu.length);
      buf[2] = 0;
      buf[3] = 0;
      buf.writeUInt16BE(pdu.length + 1, 4);
      buf[6] = p.unitId;
      pdu.copy(buf, MBAP_LENGTH);
      this._txBuf = buf;
      this._txOp = p.op;
      this._txUnit = p.unitId;
    }
    buf[0] = tid >>> 8;
    buf[1] = tid & 0xFF;
    const socket = /** @type {import('node:net').Socket} */ (this._socket);
    if (byTid !== null && this._corked === null) {
      socket.cork();
      this._corked = socket;
      process.nextTick(this._uncork);
    }
    p.sentNs = process.hrtime.bigint();
    socket.write(buf);
    // A write the kernel did not take at once keeps a reference to buf: build a fresh one next time
    if (socket.writableLength !== 0) this._txOp = null;
  }

  /** End of the turn: the requests written in it go out together. */
  _uncork () {
    const socket = this._corked;
    this._corked = null;
    if (socket !== null && !socket.destroyed) socket.uncork();
  }

  /**
   * A request in flight timed out; a late answer will carry its transaction id and be dropped, so that
   * id stays out of use while the answer is owed (file header).
   * @param {{tid: number}} p
   */
  abort (p) {
    if (this._byTid !== null) {
      if (this._byTid.get(p.tid) !== p) return; // not on this connection (it was reset meanwhile)
      this._byTid.delete(p.tid);
    } else if (this._p === p) {
      this._p = null;
    }
    const owed = this._owedTids;
    owed.add(p.tid);
    if (owed.size > MAX_OWED_TIDS) owed.delete(/** @type {number} */ (owed.values().next().value));
  }

  /**
   * Closes the socket.
   * @param {() => void} cb called when the socket is closed
   */
  close (cb) {
    const socket = this._socket;
    this._dead = true;
    this._p = null;
    if (this._byTid !== null) this._byTid.clear();
    const opening = this._opening;
    if (opening !== null) { this._opening = null; opening.abort(cb); return; }
    if (!socket || socket.destroyed) { cb(); return; }
    this._closeCb = cb;
    socket.destroy();
  }

  /**
   * net's onread callback: `nread` bytes are in the shared read buffer (file header).
   * @param {number} nread
   * @param {Buffer} buf
   */
  _onRead (nread, buf) {
    // A socket given up (reset, closed) reads nothing more, even a chunk already on its way
    if (this._dead || this._socket === null) return;
    this._onData(buf, nread);
  }

  /**
   * Reads MBAP frames from `n` bytes of a chunk. The common case, one whole response per chunk, is
   * parsed in place; a frame split across chunks is assembled in this connection's own buffer.
   * @param {Buffer} chunk
   * @param {number} [n=chunk.length] bytes in it
   */
  _onData (chunk, n = chunk.length) {
    let off = 0;
    if (this._rxLen !== 0) {
      const rx = this._rx;
      if (this._rxLen < 6) {
        const take = Math.min(6 - this._rxLen, n);
        chunk.copy(rx, this._rxLen, 0, take);
        this._rxLen += take;
        off = take;
        if (this._rxLen < 6) return;
      }
      const need = this._frameLength(rx, 0);
      if (need < 0) return;
      const take = Math.min(need - this._rxLen, n - off);
      chunk.copy(rx, this._rxLen, off, off + take);
      this._rxLen += take;
      off += take;
      if (this._rxLen < need) return;
      this._rxLen = 0;
      this._onFrame(rx, 0, need);
      if (this._dead) return;
    }
    while (n - off >= 6) {
      const need = this._frameLength(chunk, off);
      if (need < 0) return;
      if (n - off < need) break;
      this._onFrame(chunk, off, off + need);
      if (this._dead) return;
      off += need;
    }
    if (off < n) {
      chunk.copy(this._rx, 0, off, n);
      this._rxLen = n - off;
    }
  }

  /**
   * Checks the MBAP header at buf[off] (6 bytes present) and returns the frame length, or -1 after a
   * fatal error: the byte stream cannot be resynchronised, so the request in flight fails and the
   * connection is dropped (the client reconnects).
   * @returns {number}
   */
  _frameLength (buf, off) {
    const protocolId = (buf[off + 2] << 8) | buf[off + 3];
    const length = (buf[off + 4] << 8) | buf[off + 5];
    if (protocolId === 0 && length >= MIN_MBAP_LENGTH && length <= MAX_MBAP_LENGTH) return 6 + length;
    const head = buf.toString('hex', off, Math.min(buf.length, off + 16));
    const rule = protocolId !== 0 ? `protocol id ${protocolId} (expected 0)` : `length ${length} (expected ${MIN_MBAP_LENGTH}-${MAX_MBAP_LENGTH})`;
    this._fatal(`MBAP header with ${rule}: the stream cannot be resynchronised, reconnecting`, head);
    return -1;
  }

  /**
   * The MBAP header cannot be trusted: the stream is lost. Every request in flight fails and the
   * socket is dropped (the client reconnects).
   * @param {string} message
   * @param {string} hex the bytes from the bad header on
   */
  _fatal (message, hex) {
    this._stats.badFrames++;
    this.reset('bad MBAP header', message, hex, null);
  }

  /**
   * Gives the connection up after input it cannot trust: stops reading at once, has the client fail
   * every request in flight (culprit: the one whose reply it was, when known), and destroys the socket;
   * the drop then reports `cause` and the client reconnects. The requests leave the map before any
   * of them fails, so a reply can never reach one of them afterwards.
   * @param {string} cause short reason, for the drop's error
   * @param {string} message what was wrong, for the requests' errors
   * @param {string} hex the offending bytes
   * @param {any} culprit
   */
  reset (cause, message, hex, culprit) {
    if (this._dead) return;
    this._dead = true;
    this._rxLen = 0;
    this._cause = cause;
    const socket = this._socket;
    const single = this._p;
    this._p = null;
    if (this._byTid !== null) this._byTid.clear();
    this._sink._onBroken(message, hex, culprit !== null ? culprit : single);
    if (socket) socket.destroy();
  }

  /** @param {Buffer} buf @param {number} s frame start @param {number} e frame end */
  _onFrame (buf, s, e) {
    if (this._byTid !== null) {
      this._onPipelinedFrame(buf, s, e);
      return;
    }
    const p = this._p;
    const tid = (buf[s] << 8) | buf[s + 1];
    if (p === null || tid !== p.tid) {
      // An answer to a request that already timed out (or was never ours): never give it to another.
      // Once the owed answer has come, its id may be used again
      this._stats.lateReplies++;
      this._owedTids.delete(tid);
      return;
    }
    this._p = null;
    if (buf[s + 6] !== p.unitId) {
      this._sink._onFrameError(p, new NinesError('NINES_ERR_BAD_REPLY',
        `reply to ${p.describe()} comes from unit ${buf[s + 6]}`, { raw: buf.toString('hex', s, e), target: this._target.url }));
      return;
    }
    this._respond(p, buf, s, e);
  }

  /**
   * Hands a frame answering p to the client, in place in the read buffer: the client copies what a
   * reply keeps (sharedReads).
   * @param {any} p @param {Buffer} buf @param {number} s frame start @param {number} e frame end
   */
  _respond (p, buf, s, e) {
    this._sink._onResponse(p, buf, s, e, s + MBAP_LENGTH, e);
  }

  /**
   * A frame while several requests may be in flight: it goes to the request with its transaction id;
   * anything else resets the connection (file header).
   * @param {Buffer} buf @param {number} s frame start @param {number} e frame end
   */
  _onPipelinedFrame (buf, s, e) {
    const tid = (buf[s] << 8) | buf[s + 1];
    const byTid = /** @type {Map<number, any>} */ (this._byTid);
    const p = byTid.get(tid);
    if (p === undefined) {
      if (this._owedTids.delete(tid)) {
        // The late answer to a request that timed out: dropped, and its id may be used again
        this._stats.lateReplies++;
        this._sink._onLateReply(tid);
        return;
      }
      this.reset('unknown transaction id', `a reply carries transaction id ${tid}, which no request in flight or owed on this connection has: ` +
        'the replies can no longer be matched to requests, so the connection is reset', buf.toString('hex', s, e), null);
      return;
    }
    byTid.delete(tid);
    if (buf[s + 6] !== p.unitId) {
      this.reset('reply from the wrong unit', `the reply with transaction id ${tid} comes from unit ${buf[s + 6]}, not ${p.unitId}: ` +
        'the replies can no longer be matched to requests, so the connection is reset', buf.toString('hex', s, e), p);
      return;
    }
    this._respond(p, buf, s, e);
  }
}

module.exports = { TcpTransport };
