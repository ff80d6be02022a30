'use strict';

/**
 * ModbusClient: one connection to a Modbus TCP device or RTU bus (a serial port, or RTU over TCP through
 * a serial server), per the driver contract (design.md).
 * The lifecycle (states, connect() waiters, reconnect with backoff, the bounded queue, deadlines,
 * counters, events) is the shared Connection (../connection.js); this file adds Modbus: ops, the
 * request path, replies and exceptions, and the wording of its errors. Never a reply given to the
 * wrong request: the transports match replies, TCP by transaction id (tcp-transport.js), RTU by
 * checking each reply against its request and keeping the line quiet after a timeout
 * (rtu-transport.js, which states the one case a serial line cannot tell apart; rtutcp-transport.js
 * carries the same frames over a socket).
 *
 * Hot path (a closed polling loop): request() writes synchronously when the connection is idle, the
 * 'data' handler settles the promise synchronously when the frame completes, the encoded request is
 * cached on the normalized op, and one lazily re-armed timer per client covers every deadline
 * (it fires about once per timeoutMs, not once per request).
 *
 * Pipelining (Modbus TCP, maxInflight > 1): up to maxInflight requests are written before their replies
 * come, each matched by transaction id and unit in any order (tcp-transport.js, which resets the
 * connection on a reply that does not fit rather than risk a mis-match; a PDU that does not fit its
 * request does the same here). A device that turns out to take one request at a time makes the client
 * fall back to one in flight, with a 'warning' (NINES_ERR_PIPELINE_UNSUPPORTED): the rule is in
 * pipeline-guard.js. At maxInflight 1 none of this runs: the request in flight is one field.
 */

const { NinesError } = require('../../base/errors');
const C = require('../../base/constants');
const { parseTarget, isMbap } = require('../target');
const { Connection, NS_PER_MS } = require('../connection');
const { toOp, kValid } = require('./op');
const { decodeInto, checkResponse, decodeData } = require('./pdu');
const { FCS } = require('./function-codes');
const { Pending, Reply } = require('./reply');
const { normalizeOptions } = require('./client-options');
const { timeoutArg } = require('../connection-options');
const { TcpTransport } = require('./tcp-transport');
const { RtuTransport } = require('./rtu-transport');
const { RtuTcpTransport } = require('./rtutcp-transport');
const { PipelineGuard } = require('./pipeline-guard');

const hrtime = process.hrtime.bigint;

const EMPTY = Buffer.alloc(0);

/** The Modbus schemes and the transport of each */
const TRANSPORTS = Object.freeze({ 'modbus+tcp': TcpTransport, 'modbus+tls': TcpTransport, 'modbus+rtu': RtuTransport, 'modbus+rtutcp': RtuTcpTransport });

/**
 * Modbus TCP / RTU / RTU-over-TCP client.
 * Events: 'connect'; 'close' (err|undefined) when an open connection ends; 'reconnecting' ({attempt, delayMs});
 * 'error' (err) for background connect failures and drops, emitted only when someone listens;
 * 'warning' (NinesError NINES_ERR_PIPELINE_UNSUPPORTED) once, when a pipelining client falls back to one
 * request in flight.
 * stats: the shared counters (../connection.js) plus exceptions, badReplies, badFrames, resets, and with
 * maxInflight > 1 the pipelining evidence pipelineSkipped and pipelinePeerCloses (pipeline-guard.js).
 */
class ModbusClient extends Connection {
  /**
   * @param {string|object} target a modbus+tcp://, modbus+rtu:// or modbus+rtutcp:// URL, or a Target from gateway/drivers/target.js
   * @param {import('./client-options').ClientOptions} [opts]
   * @throws {NinesError} NINES_ERR_INVALID_TARGET, NINES_ERR_INVALID_ARG
   */
  constructor (target, opts) {
    const t = parseTarget(target);
    const Transport = TRANSPORTS[t.protocol];
    if (Transport === undefined) {
      throw new NinesError('NINES_ERR_INVALID_TARGET', `a Modbus client needs a modbus+tcp://, modbus+tls://, modbus+rtu:// or modbus+rtutcp:// target; got ${t.protocol}://`, { target: t.url });
    }
    const o = normalizeOptions(opts, t);
    // A serial line carries one frame at a time and RTU has no transaction id to match replies by
    if (o.maxInflight !== 1 && !isMbap(t)) {
      throw new NinesError('NINES_ERR_INVALID_ARG', `maxInflight must be 1 unless the target is modbus+tcp or modbus+tls (only Modbus TCP matches replies by transaction id); got ${o.maxInflight}`,
        { field: 'maxInflight', value: o.maxInflight, rule: 'must be 1 unless the target is modbus+tcp or modbus+tls' });
    }
    super(t, o, {
      exceptions: 0, // Modbus exception replies (NINES_ERR_MODBUS_EXCEPTION)
      badReplies: 0, // NINES_ERR_BAD_REPLY / NINES_ERR_BAD_CHECKSUM for a request in flight
      badFrames: 0, // bytes that fit no frame (trailing garbage, bad MBAP header): dropped
      resets: 0 // connections given up because a reply broke the stream (bad MBAP; pipelined: a reply that does not fit)
    });
    // RTU framing, on a serial port or over TCP: no transaction id, replies checked against their request
    this._rtu = !isMbap(t);
    this._unitId = t.unitId;
    /** @type {PipelineGuard|null} weighs whether the device really serves pipelined requests (maxInflight > 1) */
    this._guard = o.maxInflight > 1 ? new PipelineGuard() : null;
    this._transport = new Transport(t, o, this, this._stats);
    /** @type {Pending|null} a settled request kept for the next submit() (one request in flight, TCP) */
    this._spare = null;
    // submit()'s reply and the bytes it shows (raw, buffer): one per client, reused (issue 11)
    this._leaseBytes = Buffer.alloc(C.MODBUS_TCP_MAX_ADU);
    this._leaseRaw = this._leaseBytes.subarray(0, 0);
    this._leaseData = this._leaseBytes.subarray(0, 0);
    /** bytes after the PDU in a frame: the CRC of RTU framing */
    this._trailer = this._rtu ? 2 : 0;
    this._leaseDataAt = 0;
    this._lease = new Reply({ op: { fc: 0, address: 0 }, unitId: 0, sentNs: 0n }, this._leaseRaw, 0n);
  }

  /**
   * Sends one operation and waits for its reply.
   * @param {object|string} op a Modbus op or its string form (see op.js); normalized ops skip validation
   * @param {{timeoutMs?: number|string}} [opts] per-request timeout (ms, from this call to the complete reply)
   * @returns {Promise<Reply>} rejects with a NinesError: NINES_ERR_INVALID_OP, NINES_ERR_INVALID_ARG,
   *   NINES_ERR_QUEUE_FULL, NINES_ERR_REPLY_TIMEOUT, NINES_ERR_NOT_CONNECTED, NINES_ERR_CONNECTION_CLOSED,
   *   NINES_ERR_MODBUS_EXCEPTION, NINES_ERR_BAD_REPLY, NINES_ERR_BAD_CHECKSUM, NINES_ERR_CLOSED
   */
  request (op, opts) {
    let o = op;
    if (o === null || typeof o !== 'object' || o[kValid] !== true) {
      try { o = toOp(op); } catch (err) { this._stats.invalid++; return Promise.reject(err); }
    }
    let timeoutMs = this._timeoutMs;
    if (opts !== undefined && opts !== null && opts.timeoutMs !== undefined) {
      try { timeoutMs = timeoutArg(opts.timeoutMs); } catch (err) { this._stats.invalid++; return Promise.reject(err); }
    }
    const unitId = o.unitId === undefined ? this._unitId : o.unitId;
    const invalid = this._checkUnit(o, unitId);
    if (invalid !== null) return Promise.reject(invalid);
    let resolve, reject;
    const promise = new Promise((res, rej) => { resolve = res; reject = rej; });
    this._admit(new Pending(o, unitId, timeoutMs, resolve, reject));
    return promise;
  }

  /**
   * request() without a promise, for the loops that send one request after another (the scheduler,
   * a device's connections; issue 11): the outcome comes to `handler`, later, never from within
   * submit(): handler.onReply(reply) or handler.onError(err), with the errors request() rejects with.
   *
   * The reply is this client's own, reused for every submitted request: its fields, `raw` and
   * `buffer` (views of one buffer of the client's) hold until onReply returns, so a handler that
   * keeps anything copies it. `data` is a fresh value (an array for reads), its own to keep, unless
   * handler.wantsData is false, when it is not decoded at all (undefined; the reply is checked all
   * the same). A request on its way pays for no promise, no closure and no reply object.
   * @param {object|string} op as request()
   * @param {number|string|undefined} timeoutMs per-request timeout (ms or a duration string); undefined: the client's
   * @param {import('./reply').Handler} handler
   */
  submit (op, timeoutMs, handler) {
    let o = op;
    if (o === null || typeof o !== 'object' || o[kValid] !== true) {
      try { o = toOp(op); } catch (err) { this._stats.invalid++; queueMicrotask(() => handler.onError(err)); return; }
    }
    let ms = this._timeoutMs;
    if (timeoutMs !== undefined) {
      try { ms = timeoutArg(timeoutMs); } catch (err) { this._stats.invalid++; queueMicrotask(() => handler.onError(err)); return; }
    }
    const unitId = o.unitId === undefined ? this._unitId : o.unitId;
    const invalid = this._checkUnit(o, unitId);
    if (invalid !== null) { queueMicrotask(() => handler.onError(invalid)); return; }
    let p = this._spare;
    if (p !== null) {
      this._spare = null;
      p.reuse(o, unitId, ms, handler);
    } else {
      p = new Pending(o, unitId, ms, null, null, handler);
    }
    p.admitting = true;
    this._admit(p);
    p.admitting = false;
  }

  /**
   * @returns {NinesError|null} the error for a read to RTU broadcast (counted as invalid), else null
   */
  _checkUnit (o, unitId) {
    // RTU broadcast (unit 0) carries writes, which no unit answers (function-codes.js `broadcast`)
    if (unitId !== 0 || !this._rtu || FCS[o.fc].broadcast) return null;
    this._stats.invalid++;
    return new NinesError('NINES_ERR_INVALID_OP', `op.unitId 0 is broadcast on RTU and takes writes only; got FC${o.fc}, which has a reply to wait for`,
      { field: 'unitId', value: 0, rule: 'broadcast (unit 0) is for writes on RTU' });
  }

  /**
   * Writes a valid request now when the connection is free, else queues it (or refuses it).
   * @param {Pending} p
   */
  _admit (p) {
    const timeoutNs = p.timeoutMs === this._timeoutMs ? this._timeoutNs : BigInt(p.timeoutMs) * NS_PER_MS;
    const flight = this._flight;
    const free = flight === null ? this._inflight === null : flight.size < this._limit;
    const idle = free && this._queue.length === 0 && this._state === 'connected' && this._transport.ready() &&
      (this._ifdMs === 0 || this._rested());
    if (this._refused(p, idle)) return;
    if (idle) {
      if (flight === null) {
        this._inflight = p;
        this._transport.send(p);
      } else {
        this._sendPipelined(p, flight);
      }
      p.deadline = p.sentNs + timeoutNs;
    } else {
      p.deadline = hrtime() + timeoutNs;
      this._queue.push(p);
      if (this._state === 'idle') this._startConnect();
    }
    this._watch(p.deadline);
  }

  // --- requests ------------------------------------------------------------------------------------

  /** Sends queued requests while the connection has a free slot and the line is free (also called by the RTU transport). */
  _pump () {
    if (this._queue.length === 0 || this._state !== 'connected') return;
    const flight = this._flight;
    if (flight !== null) {
      while (flight.size < this._limit && this._queue.length !== 0 && this._state === 'connected' && this._transport.ready() &&
        (this._ifdMs === 0 || this._rested())) {
        this._sendPipelined(/** @type {Pending} */ (this._queue.shift()), flight);
      }
      return;
    }
    if (this._inflight !== null) return;
    if (!this._transport.ready()) return;
    if (this._ifdMs !== 0 && !this._rested()) return;
    if (this._rtu && this._transport.held) {
      if (!this._dropLate()) return;
      // _dropLate() failed requests, and their handlers run synchronously: one may have written its
      // next request (the line was free) or closed the client. Writing ours too would put two
      // requests on a line that matches a reply to the one in flight by shape alone, and the reply
      // to the first would be taken for the second's (issue 18)
      if (this._inflight !== null || this._queue.length === 0 || this._state !== 'connected' || !this._transport.ready()) return;
    }
    const p = /** @type {Pending} */ (this._queue.shift());
    this._inflight = p;
    this._transport.send(p);
  }

  /**
   * Writes one request beside the ones in flight (maxInflight > 1), noting for the guard whether it
   * overlaps them.
   * @param {Pending} p
   * @param {Set<Pending>} flight
   */
  _sendPipelined (p, flight) {
    /** @type {PipelineGuard} */ (this._guard).sent(p, flight.size);
    flight.add(p);
    this._transport.send(p);
  }

  /**
   * Takes p out of the requests in flight, when it is still there; the line rests from now when the
   * device needs a pause between requests (interFrameDelayMs).
   * @param {Pending} p
   * @returns {boolean} false when p is no longer in flight (timed out, failed, or the connection was reset)
   */
  _land (p) {
    const flight = this._flight;
    if (flight === null) {
      if (p !== this._inflight) return false;
      this._inflight = null;
      if (this._ifdMs !== 0) this._rest();
      return true;
    }
    if (!flight.delete(p)) return false;
    if (this._ifdMs !== 0) this._rest();
    return true;
  }

  /**
   * After an RTU quiet period (rtu-transport.js): fails the queued requests that have less than half of
   * their timeout left instead of writing them. Written so late, one would most likely time out on the
   * wire and hold the line quiet again, and the next one after it, so that one timeout would turn every
   * later request into a timeout. The next request asked for then gets the line with its whole timeout.
   * @returns {boolean} true when a request is left to write
   */
  _dropLate () {
    const q = this._queue;
    const now = hrtime();
    while (q.length !== 0) {
      const p = q[0];
      if ((p.deadline - now) * 2n >= BigInt(p.timeoutMs) * NS_PER_MS) return true;
      q.shift();
      this._fail(p, new NinesError('NINES_ERR_REPLY_TIMEOUT',
        `${p.describe()} not sent: it waited for the serial line to go quiet after a timeout until less than half of its ${p.timeoutMs} ms was left`,
        { timeoutMs: p.timeoutMs, op: p.op, unitId: p.unitId, target: this._target.url, queued: true, quietLine: true }), 'timeouts');
    }
    return false;
  }

  /**
   * Transport: a frame answering a request in flight, at buf[frameStart, frameEnd); a transport
   * that reads into a shared buffer (sharedReads) leaves the copy to us, made only where a reply
   * keeps the bytes.
   */
  _onResponse (p, buf, frameStart, frameEnd, pduStart, pduEnd) {
    const doneNs = hrtime();
    if (!this._land(p)) return;
    const handler = p.handler;
    if (handler !== null) {
      const err = checkResponse(buf, pduStart, pduEnd, p.op, p.unitId);
      if (err === null) {
        this._stats.ok++;
        this._answered();
        if (this._guard !== null) this._guard.answered(p);
        const reply = this._leased(p, buf, frameStart, frameEnd, pduStart, doneNs, handler.wantsData !== false);
        // settled and answered: no timer, transport or queue refers to it any more
        if (this._flight === null && !this._rtu && this._spare === null) { p.handler = null; this._spare = p; }
        handler.onReply(reply);
      } else if (this._replyError(p, err, buf, frameStart, frameEnd, doneNs)) {
        return;
      }
      if (this._queue.length !== 0) this._pump();
      return;
    }
    let raw;
    if (this._transport.sharedReads === true) {
      raw = Buffer.allocUnsafe(frameEnd - frameStart);
      // byte by byte: a frame is at most 260 bytes, and Buffer#copy makes a view object per call
      for (let i = frameStart; i < frameEnd; i++) raw[i - frameStart] = buf[i];
    } else {
      raw = frameStart === 0 && frameEnd === buf.length ? buf : buf.subarray(frameStart, frameEnd);
    }
    const reply = new Reply(p, raw, doneNs);
    const err = decodeInto(reply, raw, pduStart - frameStart, pduEnd - frameStart, p.op, p.unitId);
    if (err === null) {
      this._stats.ok++;
      this._answered();
      if (this._guard !== null) this._guard.answered(p);
      p.resolve(reply);
    } else if (this._replyError(p, err, raw, 0, raw.length, doneNs)) {
      return;
    }
    if (this._queue.length !== 0) this._pump();
  }

  /**
   * A reply frame that does not fit its request (or an exception): p fails with err.
   * @returns {boolean} true when the connection was reset (pipelined: nothing more to do)
   */
  _replyError (p, err, buf, frameStart, frameEnd, doneNs) {
    err.details.raw = buf.toString('hex', frameStart, frameEnd);
    err.details.target = this._target.url;
    err.doneNs = doneNs;
    if (err.code === 'NINES_ERR_MODBUS_EXCEPTION' || err.code === 'NINES_ERR_FC_UNSUPPORTED') {
      // The device answered: the link is fine
      this._answered();
      if (this._guard !== null) this._guard.answered(p);
      this._fail(p, err, 'exceptions');
      return false;
    }
    if (this._flight !== null) err.details.reset = true;
    this._fail(p, err, 'badReplies');
    if (this._flight === null) return false;
    // Pipelined, a reply that does not fit its request may be another request's: trust no later one
    this._transport.reset('reply does not fit its request', `the reply to ${p.describe()} does not fit it (${err.message}): ` +
      'the replies can no longer be matched to requests, so the connection is reset', err.details.raw, null);
    return true;
  }

  /**
   * The client's reply for submit(), filled for p (see submit() for what stays valid how long).
   * @param {Pending} p @param {Buffer} buf @param {number} frameStart @param {number} frameEnd
   * @param {number} pduStart @param {bigint} doneNs @param {boolean} wantsData
   * @returns {Reply}
   */
  _leased (p, buf, frameStart, frameEnd, pduStart, doneNs, wantsData) {
    const n = frameEnd - frameStart;
    const bytes = this._leaseBytes;
    for (let i = 0; i < n; i++) bytes[i] = buf[frameStart + i];
    // views of the client's bytes, made again only when a frame's shape changes
    if (this._leaseRaw.length !== n) this._leaseRaw = bytes.subarray(0, n);
    const reply = this._lease;
    const op = p.op;
    reply.op = op;
    reply.fc = op.fc;
    reply.unitId = p.unitId;
    reply.address = op.address;
    reply.raw = this._leaseRaw;
    const pdu = pduStart - frameStart;
    if (FCS[op.fc].reads !== null) {
      if (this._leaseDataAt !== pdu + 2 || this._leaseData.length !== n - pdu - 2 - this._trailer) {
        this._leaseDataAt = pdu + 2;
        this._leaseData = bytes.subarray(pdu + 2, n - this._trailer);
      }
      reply.buffer = this._leaseData;
    } else {
      reply.buffer = undefined;
    }
    reply.data = wantsData ? decodeData(bytes, pdu, op) : undefined;
    reply.sentNs = p.sentNs;
    reply.doneNs = doneNs;
    return reply;
  }

  /** Transport: the frame answering the request in flight is malformed. */
  _onFrameError (p, err) {
    if (!this._land(p)) return;
    err.doneNs = hrtime();
    this._fail(p, err, 'badReplies');
    if (this._queue.length !== 0) this._pump();
  }

  /**
   * Transport (TCP): the byte stream cannot be trusted any more and the socket is about to be destroyed.
   * Every request in flight fails now with NINES_ERR_BAD_REPLY (culprit: the one whose reply broke it);
   * the drop that follows finds none left, so it counts as ours, not as the peer's.
   * @param {string} message what was wrong
   * @param {string} hex the offending bytes
   * @param {Pending|null} culprit
   */
  _onBroken (message, hex, culprit) {
    this._stats.resets++;
    const doneNs = hrtime();
    const details = (p) => ({ raw: hex, target: this._target.url, op: p.op, unitId: p.unitId, reset: true });
    this._failInflight((p) => {
      const err = p === culprit || this._flight === null
        ? new NinesError('NINES_ERR_BAD_REPLY', `reply to ${p.describe()}: ${message}`, details(p))
        : new NinesError('NINES_ERR_BAD_REPLY', `${p.describe()} got no reply it could trust: ${message}`, details(p));
      err.doneNs = doneNs;
      return err;
    }, 'badReplies');
  }

  /** Transport: an RTU broadcast was written; no reply comes. */
  _onNoReply (p) {
    const doneNs = hrtime();
    if (!this._land(p)) return;
    this._stats.ok++;
    p.resolve(new Reply(p, EMPTY, doneNs));
    if (this._queue.length !== 0) this._pump();
  }

  // --- hooks of Connection -------------------------------------------------------------------------

  /** A late answer to the timed-out request must not be taken for the next one's. @param {Pending} p */
  _afterTimeout (p) {
    this._transport.abort(p);
    const guard = this._guard;
    if (guard !== null && guard.timedOut(p, hrtime())) this._fallBack();
  }

  /** Transport (pipelined): the late reply to a timed-out request came. @param {number} tid */
  _onLateReply (tid) {
    /** @type {PipelineGuard} */ (this._guard).lateReply(tid);
  }

  /** A peer that closes on overlapping requests counts against pipelining. @param {null|string} expected */
  _onDrop (expected) {
    const guard = this._guard;
    if (guard === null || expected !== null) return;
    if (guard.peerClosed(this.inFlight)) this._fallBack();
  }

  /**
   * The device does not serve pipelined requests (pipeline-guard.js): one request in flight from now
   * on, said once with a 'warning'. Requests already on the wire stay there.
   */
  _fallBack () {
    const guard = /** @type {PipelineGuard} */ (this._guard);
    if (!this.limitInflight(1)) return;
    const warning = new NinesError('NINES_ERR_PIPELINE_UNSUPPORTED',
      `${this._target.url} does not serve pipelined requests: ${guard.skipped} request(s) sent while others were in flight were never answered, ` +
      `although the device answered around them, and ${guard.peerCloses} connection(s) closed with several in flight; ` +
      `now 1 request in flight instead of ${this._maxInflight}`,
      { target: this._target.url, maxInflight: this._maxInflight, effective: 1, skipped: guard.skipped, peerCloses: guard.peerCloses, overlapsAnswered: guard.overlapsAnswered });
    this.emit('warning', warning);
  }

  /**
   * @returns {Record<string, number>} the counters (../connection.js), and with maxInflight > 1 the
   *   pipelining evidence, read from the guard that keeps it
   */
  get stats () {
    const s = super.stats;
    const guard = this._guard;
    if (guard !== null) {
      s.pipelineSkipped = guard.skipped;
      s.pipelinePeerCloses = guard.peerCloses;
    }
    return s;
  }

  /** Retrying cannot help when the serialport package is missing. @param {NinesError} err */
  _canRetry (err) {
    return err.code !== 'NINES_ERR_SERIAL_UNAVAILABLE';
  }

  // --- the words of the errors ---------------------------------------------------------------------

  /** @param {Pending} p @returns {NinesError} */
  _timeoutError (p) {
    const details = { timeoutMs: p.timeoutMs, op: p.op, unitId: p.unitId, target: this._target.url };
    // RTU: how long the line is now held for the late reply (_afterTimeout ran first), so a device
    // that keeps its own requests meanwhile holds them exactly as long
    if (this._rtu) details.quietMs = this._transport.heldForMs();
    return new NinesError('NINES_ERR_REPLY_TIMEOUT', `no reply to ${p.describe()} within ${p.timeoutMs} ms`, details);
  }

  /** @param {Pending} p @returns {NinesError} */
  _queuedTimeoutError (p) {
    // Still waiting for the serial line to go quiet after a timeout: say so, as _dropLate() does
    if (this._rtu && this._transport.held) {
      return new NinesError('NINES_ERR_REPLY_TIMEOUT', `${p.describe()} not sent: it waited ${p.timeoutMs} ms for the serial line to go quiet after a timeout`,
        { timeoutMs: p.timeoutMs, op: p.op, unitId: p.unitId, target: this._target.url, queued: true, quietLine: true });
    }
    return new NinesError('NINES_ERR_REPLY_TIMEOUT', `${p.describe()} waited ${p.timeoutMs} ms in the queue without being sent`,
      { timeoutMs: p.timeoutMs, op: p.op, unitId: p.unitId, target: this._target.url, queued: true });
  }

  /** @param {Pending} p @returns {NinesError} */
  _queueFullError (p) {
    return new NinesError('NINES_ERR_QUEUE_FULL', `${p.describe()} not queued: ${this._queueMax} requests already wait for ${this._target.url}`,
      { queueMax: this._queueMax, target: this._target.url });
  }

  /** @param {Pending} p @param {NinesError} err the drop @returns {NinesError} */
  _lostError (p, err) {
    return new NinesError('NINES_ERR_CONNECTION_CLOSED', `${p.describe()}: ${err.message}`, { ...err.details, op: p.op });
  }

  /** @param {Pending} p @param {NinesError|null} cause null: its deadline passed while disconnected @returns {NinesError} */
  _notConnected (p, cause) {
    // Say that serialport is missing to everyone waiting, in their words
    if (cause !== null && cause.code === 'NINES_ERR_SERIAL_UNAVAILABLE') return new NinesError(cause.code, `${p.describe()} not sent: ${cause.message}`, cause.details);
    const why = cause ? cause.message : `state ${this._state}`;
    return new NinesError('NINES_ERR_NOT_CONNECTED', `${p.describe()} not sent: not connected to ${this._target.url} (${why})`,
      { target: this._target.url, state: this._state, timeoutMs: p.timeoutMs, cause: cause ? cause.code : undefined });
  }

  /** @param {string} [what] @returns {NinesError} */
  _closedError (what = 'connect') {
    return new NinesError('NINES_ERR_CLOSED', `${what}: the client for ${this._target.url} is closed`, { target: this._target.url });
  }
}

require('./client-helpers').install(ModbusClient);

module.exports = { ModbusClient, Reply };
