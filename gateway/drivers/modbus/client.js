'use strict';

/**
 * ModbusClient: one connection to a Modbus TCP device or RTU bus, per the driver contract (design.md):
 * at most one request on the wire, a bounded FIFO behind it, a timeout per request, reconnect with
 * capped exponential backoff and jitter, coded errors, and never a reply given to the wrong request.
 *
 * Hot path (a closed polling loop): request() writes synchronously when the connection is idle, the
 * 'data' handler settles the promise synchronously when the frame completes, the encoded request is
 * cached on the normalized op, and one lazily re-armed timer per client covers every deadline
 * (it fires about once per timeoutMs, not once per request).
 */

const { EventEmitter } = require('node:events');
const { NinesError } = require('../../base/errors');
const { parseTarget } = require('../target');
const { Backoff } = require('../../base/backoff');
const { toOp, describeOp, kValid } = require('./op');
const { decodeInto } = require('./pdu');
const { Pending, Reply } = require('./reply');
const { normalizeOptions, checkTimeoutMs } = require('./client-options');
const { TcpTransport } = require('./tcp-transport');
const { RtuTransport } = require('./rtu-transport');

const hrtime = process.hrtime.bigint;
const NS_PER_MS = 1000000n;

const EMPTY = Buffer.alloc(0);

/**
 * Modbus TCP / RTU client.
 * Events: 'connect'; 'close' (err|undefined) when an open connection ends; 'reconnecting' ({attempt, delayMs});
 * 'error' (err) for background connect failures and drops, emitted only when someone listens.
 */
class ModbusClient extends EventEmitter {
  /**
   * @param {string|object} target a modbus+tcp:// or modbus+rtu:// URL, or a Target from gateway/drivers/target.js
   * @param {import('./client-options').ClientOptions} [opts]
   * @throws {NinesError} NINES_ERR_INVALID_TARGET, NINES_ERR_INVALID_ARG
   */
  constructor (target, opts) {
    super();
    const t = parseTarget(target);
    if (t.protocol !== 'modbus+tcp' && t.protocol !== 'modbus+rtu') {
      throw new NinesError('NINES_ERR_INVALID_TARGET', `a Modbus client needs a modbus+tcp:// or modbus+rtu:// target; got ${t.protocol}://`, { target: t.url });
    }
    const o = normalizeOptions(opts);
    this._target = t;
    this._rtu = t.protocol === 'modbus+rtu';
    this._unitId = t.unitId;
    this._timeoutMs = o.timeoutMs;
    this._timeoutNs = BigInt(o.timeoutMs) * NS_PER_MS;
    this._connectTimeoutMs = o.connectTimeoutMs;
    this._queueMax = o.queueMax;
    this._reconnect = o.reconnect;
    this._backoffMaxMs = o.backoff.maxMs;
    this._backoff = new Backoff({ initialMs: o.backoff.initialMs, maxMs: o.backoff.maxMs, random: o.random });
    // Same vocabulary as the ASCII client: errors are rejections other than timeouts
    this._stats = {
      requests: 0, // accepted request() calls; = ok + errors + timeouts + queued + inFlight
      ok: 0,
      errors: 0, // rejections other than timeouts (the counters below break some of them down)
      timeouts: 0, // NINES_ERR_REPLY_TIMEOUT
      exceptions: 0, // Modbus exception replies (NINES_ERR_MODBUS_EXCEPTION)
      badReplies: 0, // NINES_ERR_BAD_REPLY / NINES_ERR_BAD_CHECKSUM for the request in flight
      notConnected: 0, // NINES_ERR_NOT_CONNECTED
      connectionLost: 0, // in flight when the connection dropped (NINES_ERR_CONNECTION_CLOSED)
      queueFull: 0, // NINES_ERR_QUEUE_FULL
      closed: 0, // rejected by close() or after it (NINES_ERR_CLOSED)
      invalid: 0, // request() with an invalid op or option (not counted in requests)
      lateReplies: 0, // replies to no request in flight (late after a timeout, or foreign): dropped
      badFrames: 0, // bytes that fit no frame (trailing garbage, bad MBAP header): dropped
      connects: 0,
      connectFailures: 0,
      drops: 0, // open connections lost
      reconnects: 0 // reconnect attempts scheduled
    };
    this._transport = this._rtu ? new RtuTransport(t, o, this, this._stats) : new TcpTransport(t, o, this, this._stats);
    this._state = 'idle';
    /** @type {Pending|null} */
    this._inflight = null;
    /** @type {Pending[]} */
    this._queue = [];
    /** @type {Array<[() => void, (err: Error) => void]>} connect() callers waiting for the next attempt */
    this._waiters = [];
    this._timer = null;
    this._timerAt = 0n;
    this._reconnectTimer = null;
    this._upSince = 0;
    this._closing = null;
    this._onTimer = this._onTimer.bind(this);
    this._onOpen = this._onOpen.bind(this);
    this._attempt = this._attempt.bind(this);
  }

  /** @returns {'idle'|'connecting'|'connected'|'reconnecting'|'closed'} */
  get state () {
    return this._state;
  }

  /**
   * A snapshot (plain object) of the counters: requests, ok, errors (rejections other than timeouts),
   * timeouts, exceptions, badReplies, notConnected, connectionLost, queueFull, closed, invalid,
   * lateReplies, badFrames, connects, connectFailures, drops, reconnects; plus the gauges queued and inFlight.
   * @returns {Record<string, number>}
   */
  get stats () {
    return { ...this._stats, queued: this._queue.length, inFlight: this._inflight === null ? 0 : 1 };
  }

  /** @returns {object} the parsed target */
  get target () {
    return this._target;
  }

  /**
   * Connects (or waits for the connection in progress).
   * @returns {Promise<void>} resolves when connected; rejects with NINES_ERR_CONNECT_FAILED,
   *   NINES_ERR_CONNECT_TIMEOUT, NINES_ERR_SERIAL_UNAVAILABLE (the next attempt's failure) or NINES_ERR_CLOSED.
   *   With reconnect on, attempts go on in the background after a rejection.
   */
  connect () {
    if (this._state === 'closed') return Promise.reject(this._closedError('connect'));
    if (this._state === 'connected') return Promise.resolve();
    const promise = new Promise((resolve, reject) => { this._waiters.push([resolve, reject]); });
    if (this._state === 'idle') this._startConnect();
    return promise;
  }

  /**
   * Sends one operation and waits for its reply.
   * @param {object|string} op a Modbus op or its string form (see op.js); normalized ops skip validation
   * @param {{timeoutMs?: number}} [opts] per-request timeout (ms, from this call to the complete reply)
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
    let timeoutNs = this._timeoutNs;
    if (opts !== undefined && opts !== null && opts.timeoutMs !== undefined) {
      try { timeoutMs = checkTimeoutMs(opts.timeoutMs); } catch (err) { this._stats.invalid++; return Promise.reject(err); }
      timeoutNs = BigInt(timeoutMs) * NS_PER_MS;
    }
    const unitId = o.unitId === undefined ? this._unitId : o.unitId;
    if (unitId === 0 && this._rtu && o.fc <= 4) {
      this._stats.invalid++;
      return Promise.reject(new NinesError('NINES_ERR_INVALID_OP', `op.unitId 0 is broadcast on RTU and takes writes only; got FC${o.fc} (a read)`,
        { field: 'unitId', value: 0, rule: 'broadcast (unit 0) is for writes on RTU' }));
    }
    const s = this._stats;
    s.requests++;
    if (this._state === 'closed') {
      s.errors++;
      s.closed++;
      return Promise.reject(this._closedError(describeOp(o, unitId)));
    }
    const idle = this._inflight === null && this._queue.length === 0 && this._state === 'connected' && this._transport.ready();
    if (!idle && this._queue.length >= this._queueMax) {
      s.errors++;
      s.queueFull++;
      return Promise.reject(new NinesError('NINES_ERR_QUEUE_FULL',
        `${describeOp(o, unitId)} not queued: ${this._queueMax} requests already wait for ${this._target.url}`,
        { queueMax: this._queueMax, target: this._target.url }));
    }
    let resolve, reject;
    const promise = new Promise((res, rej) => { resolve = res; reject = rej; });
    const p = new Pending(o, unitId, timeoutMs, resolve, reject);
    if (idle) {
      this._inflight = p;
      this._transport.send(p);
      p.deadline = p.sentNs + timeoutNs;
    } else {
      p.deadline = hrtime() + timeoutNs;
      this._queue.push(p);
      if (this._state === 'idle') this._startConnect();
    }
    if (this._timerAt === 0n || p.deadline < this._timerAt) this._arm(p.deadline);
    return promise;
  }

  /**
   * Closes the client for good: stops reconnecting, rejects queued and in-flight requests with
   * NINES_ERR_CLOSED and closes the connection.
   * @returns {Promise<void>} resolves when the socket or port is closed
   */
  close () {
    if (this._closing) return this._closing;
    const wasUp = this._state === 'connected';
    this._state = 'closed';
    if (this._timer) { clearTimeout(this._timer); this._timer = null; this._timerAt = 0n; }
    if (this._reconnectTimer) { clearTimeout(this._reconnectTimer); this._reconnectTimer = null; }
    const p = this._inflight;
    this._inflight = null;
    if (p) this._fail(p, this._closedError(p.describe()), 'closed');
    this._rejectQueue((q) => this._closedError(q.describe()), 'closed');
    this._settleWaiters(this._closedError('connect'));
    this._closing = new Promise((resolve) => this._transport.close(resolve)).then(() => {
      if (wasUp) this.emit('close', undefined);
    });
    return this._closing;
  }

  // --- connection management -------------------------------------------------------------------

  _startConnect () {
    this._state = 'connecting';
    this._attempt();
  }

  _attempt () {
    this._reconnectTimer = null;
    if (this._state === 'closed') return;
    this._transport.open(this._connectTimeoutMs, this._onOpen);
  }

  /** @param {NinesError|null} err result of one connection attempt */
  _onOpen (err) {
    if (this._state === 'closed') return;
    if (err === null) {
      this._state = 'connected';
      this._stats.connects++;
      this._upSince = Date.now();
      this._settleWaiters(null);
      this.emit('connect');
      this._pump();
      return;
    }
    this._stats.connectFailures++;
    this._settleWaiters(err);
    this._emitError(err);
    if (this._state === 'closed') return;
    if (err.code === 'NINES_ERR_SERIAL_UNAVAILABLE') {
      // Retrying cannot help: the package is missing. Say so to everyone waiting, in their words.
      this._state = 'idle';
      this._rejectQueue((q) => new NinesError(err.code, `${q.describe()} not sent: ${err.message}`, err.details), 'notConnected');
      return;
    }
    if (!this._reconnect) {
      // Nothing will connect by itself: fail what waits; the next request() tries again
      this._state = 'idle';
      this._rejectQueue((q) => this._notConnected(q, err), 'notConnected');
      return;
    }
    this._scheduleReconnect();
  }

  /** Called by the transport when an open connection is lost. @param {NinesError} err */
  _onDown (err) {
    if (this._state !== 'connected') return;
    this._stats.drops++;
    const p = this._inflight;
    this._inflight = null;
    if (p) {
      this._fail(p, new NinesError('NINES_ERR_CONNECTION_CLOSED', `${p.describe()}: ${err.message}`,
        { ...err.details, op: p.op }), 'connectionLost');
    }
    // A connection that stayed up a while earned a fresh backoff; one that drops at once keeps growing it
    if (Date.now() - this._upSince >= this._backoffMaxMs) this._backoff.reset();
    if (this._reconnect) {
      this._state = 'reconnecting';
    } else {
      this._state = 'idle';
      this._rejectQueue((q) => this._notConnected(q, err), 'notConnected');
    }
    this.emit('close', err);
    this._emitError(err);
    // A 'close' listener may have closed the client (or, with reconnect off, started a new connection)
    if (this._state === 'reconnecting' && this._reconnectTimer === null) this._scheduleReconnect();
  }

  _scheduleReconnect () {
    this._state = 'reconnecting';
    const delayMs = this._backoff.next();
    this._stats.reconnects++;
    this._reconnectTimer = setTimeout(this._attempt, delayMs);
    this.emit('reconnecting', { attempt: this._backoff.attempt, delayMs });
  }

  /** @param {NinesError|null} err */
  _settleWaiters (err) {
    const waiters = this._waiters;
    if (waiters.length === 0) return;
    this._waiters = [];
    for (const [resolve, reject] of waiters) err === null ? resolve() : reject(err);
  }

  /** @param {Error} err */
  _emitError (err) {
    if (this.listenerCount('error')) this.emit('error', err);
  }

  // --- requests ------------------------------------------------------------------------------------

  /** Sends the next queued request when the connection and the line are free. */
  _pump () {
    if (this._inflight !== null || this._queue.length === 0 || this._state !== 'connected') return;
    if (!this._transport.ready()) return;
    const p = /** @type {Pending} */ (this._queue.shift());
    this._inflight = p;
    this._transport.send(p);
  }

  /** Transport: a frame answering the request in flight. */
  _onResponse (p, buf, frameStart, frameEnd, pduStart, pduEnd) {
    const doneNs = hrtime();
    if (p !== this._inflight) return;
    this._inflight = null;
    const raw = frameStart === 0 && frameEnd === buf.length ? buf : buf.subarray(frameStart, frameEnd);
    const reply = new Reply(p, raw, doneNs);
    const err = decodeInto(reply, buf, pduStart, pduEnd, p.op, p.unitId);
    if (err === null) {
      this._stats.ok++;
      if (this._backoff.attempt !== 0) this._backoff.reset();
      p.resolve(reply);
    } else {
      err.details.raw = raw.toString('hex');
      err.details.target = this._target.url;
      err.doneNs = doneNs;
      if (err.code === 'NINES_ERR_MODBUS_EXCEPTION') {
        // The device answered: the link is fine
        if (this._backoff.attempt !== 0) this._backoff.reset();
        this._fail(p, err, 'exceptions');
      } else {
        this._fail(p, err, 'badReplies');
      }
    }
    if (this._queue.length !== 0) this._pump();
  }

  /** Transport: the frame answering the request in flight is malformed. */
  _onFrameError (p, err) {
    if (p !== this._inflight) return;
    this._inflight = null;
    err.doneNs = hrtime();
    this._fail(p, err, 'badReplies');
    if (this._queue.length !== 0) this._pump();
  }

  /** Transport: an RTU broadcast was written; no reply comes. */
  _onNoReply (p) {
    const doneNs = hrtime();
    if (p !== this._inflight) return;
    this._inflight = null;
    this._stats.ok++;
    p.resolve(new Reply(p, EMPTY, doneNs));
    if (this._queue.length !== 0) this._pump();
  }

  /** Rejects p with err and counts it under `counter` (and under errors unless it is a timeout). */
  _fail (p, err, counter) {
    if (p.sentNs !== 0n) err.sentNs = p.sentNs;
    if (counter !== 'timeouts') this._stats.errors++;
    this._stats[counter]++;
    p.reject(err);
  }

  /** @param {(p: Pending) => NinesError} makeError @param {string} counter */
  _rejectQueue (makeError, counter) {
    const q = this._queue;
    this._queue = [];
    for (const p of q) this._fail(p, makeError(p), counter);
  }

  /** @param {bigint} deadline arm the shared timer to fire no later than this */
  _arm (deadline) {
    if (this._timer !== null) clearTimeout(this._timer);
    this._timerAt = deadline;
    const ms = Number(deadline - hrtime()) / 1e6;
    this._timer = setTimeout(this._onTimer, ms <= 1 ? 1 : Math.ceil(ms));
  }

  /** The shared deadline timer: fails what expired and re-arms for the earliest deadline left. */
  _onTimer () {
    this._timer = null;
    this._timerAt = 0n;
    const now = hrtime();
    const p = this._inflight;
    if (p !== null && p.deadline <= now) {
      this._inflight = null;
      this._transport.abort(p);
      this._fail(p, new NinesError('NINES_ERR_REPLY_TIMEOUT', `no reply to ${p.describe()} within ${p.timeoutMs} ms`,
        { timeoutMs: p.timeoutMs, op: p.op, unitId: p.unitId, target: this._target.url }), 'timeouts');
    }
    const q = this._queue;
    for (let i = 0; i < q.length;) {
      const x = q[i];
      if (x.deadline > now) { i++; continue; }
      q.splice(i, 1);
      if (this._state === 'connected') {
        this._fail(x, new NinesError('NINES_ERR_REPLY_TIMEOUT', `${x.describe()} waited ${x.timeoutMs} ms in the queue without being sent`,
          { timeoutMs: x.timeoutMs, op: x.op, unitId: x.unitId, target: this._target.url, queued: true }), 'timeouts');
      } else {
        this._fail(x, this._notConnected(x, null), 'notConnected');
      }
    }
    this._pump();
    let next = this._inflight === null ? 0n : this._inflight.deadline;
    for (let i = 0; i < q.length; i++) if (next === 0n || q[i].deadline < next) next = q[i].deadline;
    if (next !== 0n && (this._timerAt === 0n || next < this._timerAt)) this._arm(next);
  }

  /** @param {Pending} p @param {NinesError|null} cause @returns {NinesError} */
  _notConnected (p, cause) {
    const why = cause ? cause.message : `state ${this._state}`;
    return new NinesError('NINES_ERR_NOT_CONNECTED', `${p.describe()} not sent: not connected to ${this._target.url} (${why})`,
      { target: this._target.url, state: this._state, timeoutMs: p.timeoutMs, cause: cause ? cause.code : undefined });
  }

  /** @param {string} what @returns {NinesError} */
  _closedError (what) {
    return new NinesError('NINES_ERR_CLOSED', `${what}: the client for ${this._target.url} is closed`, { target: this._target.url });
  }
}

require('./client-helpers').install(ModbusClient);

module.exports = { ModbusClient, Reply };
