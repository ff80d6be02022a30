'use strict';

/**
 * Connection: the connection lifecycle both driver clients share (design.md, "Driver" contract).
 * AsciiClient and ModbusClient extend it and add only their protocol: what a request is, how it is
 * written and answered, and the words of their errors.
 *
 * What lives here:
 * - states idle → connecting → connected → reconnecting → … → closed, and connect() with its waiters
 *   (resolved on connect, rejected with the next attempt's failure, NINES_ERR_CLOSED after close());
 * - reconnects with capped exponential backoff and jitter (base/backoff.js). The backoff resets when
 *   the device has answered on a connection (the subclass calls _answered()), or when a connection
 *   that stayed up at least backoff.maxMs drops. Merely connecting does not reset it: a device at
 *   its connection limit, or one that accepts and closes at once, would otherwise be hammered at
 *   initialMs forever;
 * - the bounded queue (NINES_ERR_QUEUE_FULL) behind the requests in flight: one, or up to maxInflight
 *   on a protocol that matches replies to requests on one connection (Modbus TCP's transaction id);
 *   the effective limit may drop to 1 (limitInflight) when the device turns out to take one at a time;
 * - per-request deadlines, all served by ONE lazily re-armed timer: it fires about once per
 *   timeoutMs, not once per request, and request() allocates no timer;
 * - the shared counters and the events 'connect', 'close' (err|undefined), 'reconnecting'
 *   ({attempt, delayMs}) and 'error' (emitted only when someone listens);
 * - the line quirks of devices that need a pause (both 0 by default, and then nothing of them runs:
 *   no timer, no clock read, one field compared per request):
 *   - delayAfterConnectMs: after a connection opens, nothing is written until this long has passed.
 *     The connection counts as up only then: the state stays 'connecting' (or 'reconnecting'),
 *     'connect' and connect() come at the end of the delay, so a device's health says connected
 *     when a request can go, and requests asked meanwhile wait in the queue with their timeouts
 *     running. A connection lost within the delay is a failed connect attempt
 *     (NINES_ERR_CONNECT_FAILED, with backoff), as a serial server at its client limit that
 *     accepts and closes at once is;
 *   - interFrameDelayMs: after each request ends (its reply came, it failed, it timed out, a
 *     broadcast was written), the line rests this long before the next write. A request handed
 *     over meanwhile waits in the queue, inside its own timeout (so the option must be shorter
 *     than timeoutMs), and its response time includes the wait: the device imposes it.
 *
 * What a subclass provides:
 * - this._transport (set in its constructor): open(connectTimeoutMs, cb(err|null)), close(cb), and
 *   drop() if it uses _reopen(); the transport calls back _onDown(err) when an open connection is
 *   lost (err: NINES_ERR_CONNECTION_CLOSED);
 * - _pump(): write queued requests while the connection has a free slot;
 * - where requests in flight live: this._inflight, the one request on the wire, when maxInflight is 1
 *   (the fast path: no collection touched per request); else the Set this._flight, in send order.
 *   The base fails them on timeout, drop and close; the subclass adds and removes them;
 * - requests with fields deadline (bigint hrtime ns), sentNs (0n until written), timeoutMs,
 *   resolve, reject and describe();
 * - hooks, called at the right moment (defaults do nothing): _onUp(), _onDrop(), _onClosing(),
 *   _afterTimeout(p), _canRetry(err);
 * - the wording of its errors, so messages stay those of the protocol: _closedError(what),
 *   _queueFullError(p), _timeoutError(p), _queuedTimeoutError(p), _notConnected(p, cause|null),
 *   _lostError(p, err).
 */

const { EventEmitter } = require('node:events');
const { Backoff } = require('../base/backoff');
const { NinesError } = require('../base/errors');

const hrtime = process.hrtime.bigint;
const NS_PER_MS = 1000000n;

/**
 * @typedef {object} Request what the base needs of a subclass's request object
 * @property {bigint} deadline hrtime ns when it times out
 * @property {bigint} sentNs hrtime ns just before the write; 0n until written
 * @property {number} timeoutMs
 * @property {(value: any) => void} resolve
 * @property {(err: Error) => void} reject
 * @property {() => string} describe names the request in error messages
 */

class Connection extends EventEmitter {
  /**
   * @param {import('./target').Target} target parsed target, checked by the subclass
   * @param {{timeoutMs: number, connectTimeoutMs: number, queueMax: number, reconnect: boolean,
   *   backoff: {initialMs: number, maxMs: number}, random: () => number, maxInflight?: number,
   *   interFrameDelayMs?: number, delayAfterConnectMs?: number}} o checked options (connection-options.js;
   *   maxInflight, 1 when absent, from a protocol that pipelines)
   * @param {Record<string, number>} [counters] the protocol's own counters, with their initial 0
   */
  constructor (target, o, counters) {
    super();
    this._target = target;
    this._timeoutMs = o.timeoutMs;
    this._timeoutNs = BigInt(o.timeoutMs) * NS_PER_MS;
    this._connectTimeoutMs = o.connectTimeoutMs;
    this._queueMax = o.queueMax;
    this._reconnect = o.reconnect;
    this._backoff = new Backoff({ initialMs: o.backoff.initialMs, maxMs: o.backoff.maxMs, random: o.random });
    this._stats = {
      requests: 0, // valid request() calls; = ok + errors + timeouts + queued + inFlight
      ok: 0,
      errors: 0, // rejections other than timeouts (notConnected, connectionLost, queueFull, closed break some down)
      timeouts: 0, // NINES_ERR_REPLY_TIMEOUT, in flight or still queued
      notConnected: 0, // NINES_ERR_NOT_CONNECTED (and, on RTU, NINES_ERR_SERIAL_UNAVAILABLE)
      connectionLost: 0, // in flight when the connection dropped (NINES_ERR_CONNECTION_CLOSED)
      queueFull: 0, // NINES_ERR_QUEUE_FULL
      closed: 0, // rejected by close() or after it (NINES_ERR_CLOSED)
      invalid: 0, // request() with an invalid op or option (not counted in requests)
      lateReplies: 0, // replies to no request in flight (late after a timeout, or unsolicited): dropped
      connects: 0,
      connectFailures: 0,
      drops: 0, // open connections lost
      reconnects: 0, // reconnect attempts scheduled
      ...counters
    };
    /** @type {any} set by the subclass */
    this._transport = null;
    /** @type {'idle'|'connecting'|'connected'|'reconnecting'|'closed'} */
    this._state = 'idle';
    // The transport is open (it may be 'reconnecting' already: a reopen or the peer's FIN under way)
    this._connected = false;
    const maxInflight = o.maxInflight === undefined ? 1 : o.maxInflight;
    this._maxInflight = maxInflight;
    // The effective limit: maxInflight until the device shows it takes one request at a time
    this._limit = maxInflight;
    /** @type {any} the request on the wire (maxInflight 1) */
    this._inflight = null;
    /** @type {Set<any>|null} the requests on the wire, oldest first (maxInflight > 1); null at 1 */
    this._flight = maxInflight > 1 ? new Set() : null;
    /** @type {any[]} FIFO behind it, at most queueMax */
    this._queue = [];
    /** @type {Array<{resolve: () => void, reject: (err: Error) => void}>} connect() callers waiting for the next attempt */
    this._waiters = [];
    // The shared deadline timer, and the deadline it is armed for (0n: not armed)
    this._timer = null;
    this._timerAt = 0n;
    this._reconnectTimer = null;
    this._upSince = 0;
    /** @type {null|'reopen'|'expected'} a drop we caused or foresaw: no error; 'reopen' reconnects at once */
    this._expectedDrop = null;
    /** @type {Promise<void>|null} */
    this._closing = null;
    // The line quirks (file header); 0: off
    this._ifdMs = o.interFrameDelayMs || 0;
    this._ifdNs = BigInt(this._ifdMs) * NS_PER_MS;
    this._dacMs = o.delayAfterConnectMs || 0;
    // hrtime ns before which nothing is written (interFrameDelayMs), and the timer that pumps then
    this._restUntil = 0n;
    this._restTimer = null;
    // Running while a fresh connection waits out delayAfterConnectMs, until this hrtime (ns)
    this._settleTimer = null;
    this._settleUntil = 0n;
    this._onTimer = this._onTimer.bind(this);
    this._onOpen = this._onOpen.bind(this);
    this._attempt = this._attempt.bind(this);
    this._onSettled = this._onSettled.bind(this);
    this._onRested = this._onRested.bind(this);
  }

  /** @returns {'idle'|'connecting'|'connected'|'reconnecting'|'closed'} */
  get state () { return this._state; }

  /** @returns {import('./target').Target} the parsed target */
  get target () { return this._target; }

  /** @returns {number} the default per-request timeout, ms */
  get timeoutMs () { return this._timeoutMs; }

  /** @returns {number} ms allowed per connection attempt */
  get connectTimeoutMs () { return this._connectTimeoutMs; }

  /** @returns {number} requests allowed to wait behind the ones in flight */
  get queueMax () { return this._queueMax; }

  /** @returns {number} requests one connection may carry at once, as configured (1 unless pipelining) */
  get maxInflight () { return this._maxInflight; }

  /**
   * @returns {number} requests the connection carries at most now: maxInflight, or less once lowered
   *   by limitInflight() (a device that takes one request at a time)
   */
  get effectiveInflight () { return this._limit; }

  /** @returns {number} requests on the wire now */
  get inFlight () {
    return this._flight === null ? (this._inflight === null ? 0 : 1) : this._flight.size;
  }

  /**
   * Lowers the number of requests written before their replies come (never raises it above
   * maxInflight). Requests already on the wire stay there; new ones wait until fewer are in flight.
   * @param {number} n at least 1
   * @returns {boolean} whether the limit changed
   */
  limitInflight (n) {
    const limit = Math.max(1, Math.min(this._limit, Math.floor(n)));
    if (limit === this._limit) return false;
    this._limit = limit;
    return true;
  }

  /** @returns {boolean} whether the client reconnects by itself */
  get reconnect () { return this._reconnect; }

  /**
   * A snapshot (plain object) of the counters: requests, ok, errors (rejections other than
   * timeouts), timeouts, notConnected, connectionLost, queueFull, closed, invalid, lateReplies,
   * connects, connectFailures, drops, reconnects, the protocol's own counters, and the gauges
   * queued and inFlight.
   * @returns {Record<string, number>}
   */
  get stats () {
    return { ...this._stats, queued: this._queue.length, inFlight: this.inFlight };
  }

  /**
   * Connects (or waits for the connection attempt in progress).
   * @returns {Promise<void>} resolves when connected; rejects with the next attempt's failure
   *   (NINES_ERR_CONNECT_FAILED, NINES_ERR_CONNECT_TIMEOUT, …) or NINES_ERR_CLOSED. With reconnect
   *   on, attempts go on in the background after a rejection.
   */
  connect () {
    if (this._state === 'closed') return Promise.reject(this._closedError());
    if (this._state === 'connected') return Promise.resolve();
    const promise = new Promise((resolve, reject) => { this._waiters.push({ resolve, reject }); });
    if (this._state === 'idle') this._startConnect();
    return promise;
  }

  /**
   * Closes the client for good: stops reconnecting, rejects the requests in flight, the queued ones
   * and connect() callers with NINES_ERR_CLOSED, and closes the connection. Idempotent.
   * @returns {Promise<void>} resolves when the socket or port is closed (after 'close' if it was open)
   */
  close () {
    if (this._closing !== null) return this._closing;
    const wasUp = this._connected;
    this._state = 'closed';
    this._connected = false;
    if (this._timer !== null) { clearTimeout(this._timer); this._timer = null; this._timerAt = 0n; }
    if (this._reconnectTimer !== null) { clearTimeout(this._reconnectTimer); this._reconnectTimer = null; }
    if (this._settleTimer !== null) { clearTimeout(this._settleTimer); this._settleTimer = null; }
    if (this._restTimer !== null) { clearTimeout(this._restTimer); this._restTimer = null; }
    this._onClosing();
    this._failInflight((p) => this._closedError(p.describe()), 'closed');
    this._rejectQueue((q) => this._closedError(q.describe()), 'closed');
    this._settleWaiters(this._closedError());
    this._closing = new Promise((resolve) => this._transport.close(resolve)).then(() => {
      if (wasUp) this.emit('close', undefined);
    });
    return this._closing;
  }

  // --- connection lifecycle ------------------------------------------------------------------------

  _startConnect () {
    this._state = 'connecting';
    this._attempt();
  }

  /** One connection attempt (also the reconnect timer's callback). */
  _attempt () {
    this._reconnectTimer = null;
    if (this._state === 'closed') return;
    this._transport.open(this._connectTimeoutMs, this._onOpen);
  }

  /** @param {import('../base/errors').NinesError|null} err result of one connection attempt */
  _onOpen (err) {
    if (this._state === 'closed') return;
    if (err === null) {
      // A device that needs a pause after the connect: up only once it has passed (file header)
      if (this._dacMs !== 0) {
        this._settleUntil = hrtime() + BigInt(this._dacMs) * NS_PER_MS;
        this._settleTimer = setTimeout(this._onSettled, this._dacMs);
      } else {
        this._up();
      }
      return;
    }
    this._stats.connectFailures++;
    this._settleWaiters(err);
    this._emitError(err);
    if (this._state === 'closed') return; // a listener closed us
    if (this._reconnect && this._canRetry(err)) this._scheduleReconnect();
    else this._giveUp(err);
  }

  /** The connection is open and usable: connected, from now on. */
  _up () {
    this._state = 'connected';
    this._connected = true;
    this._expectedDrop = null;
    this._stats.connects++;
    this._upSince = Date.now();
    this._onUp();
    this._settleWaiters(null);
    // Queued requests go on the wire before listeners run: their time already counts
    this._pump();
    this.emit('connect');
  }

  /** delayAfterConnectMs has passed on a fresh connection (by the monotonic clock: timers fire up to 1 ms early). */
  _onSettled () {
    const left = this._settleUntil - hrtime();
    if (left > 0n) {
      this._settleTimer = setTimeout(this._onSettled, Math.max(1, Math.ceil(Number(left) / 1e6)));
      return;
    }
    this._settleTimer = null;
    if (this._state !== 'closed') this._up();
  }

  /**
   * Called by the transport when an open connection is lost.
   * @param {import('../base/errors').NinesError} err NINES_ERR_CONNECTION_CLOSED, with the cause
   */
  _onDown (err) {
    if (this._settleTimer !== null) {
      // Lost within its delay after connect: it never was up, so this attempt failed
      clearTimeout(this._settleTimer);
      this._settleTimer = null;
      this._onOpen(new NinesError('NINES_ERR_CONNECT_FAILED', `${err.message} within the ${this._dacMs} ms delay after connect`,
        { ...err.details, delayAfterConnectMs: this._dacMs }));
      return;
    }
    if (!this._connected) return;
    this._connected = false;
    const expected = this._expectedDrop;
    this._expectedDrop = null;
    this._stats.drops++;
    this._onDrop(expected);
    this._failInflight((p) => this._lostError(p, err), 'connectionLost');
    // A connection that stayed up a while earned a fresh backoff; one that drops at once keeps growing it
    if (Date.now() - this._upSince >= this._backoff.maxMs) this._backoff.reset();
    if (expected === 'reopen' || this._reconnect) {
      this._state = 'reconnecting'; // no writes while listeners run
    } else {
      this._state = 'idle';
      this._rejectQueue((q) => this._notConnected(q, err), 'notConnected');
    }
    // A drop we caused or foresaw is no error
    const reported = expected === null ? err : undefined;
    this.emit('close', reported);
    if (reported !== undefined) this._emitError(reported);
    // A 'close' listener may have closed the client (or, with reconnect off, started a new connection)
    if (this._state !== 'reconnecting' || this._reconnectTimer !== null) return;
    if (expected === 'reopen') this._attempt(); // at once: the device is there, only the line was doubtful
    else this._scheduleReconnect();
  }

  /**
   * Drops the open connection on purpose and opens a fresh one at once, without an error and
   * without backoff (the transport must implement drop()).
   * @returns {boolean} false when no connection was open
   */
  _reopen () {
    if (!this._connected) return false;
    this._expectedDrop = 'reopen';
    this._state = 'reconnecting';
    this._transport.drop();
    return true;
  }

  _scheduleReconnect () {
    this._state = 'reconnecting';
    const delayMs = this._backoff.next();
    this._stats.reconnects++;
    this._reconnectTimer = setTimeout(this._attempt, delayMs);
    this.emit('reconnecting', { attempt: this._backoff.attempt, delayMs });
  }

  /**
   * Nothing will connect by itself: what waits fails now; the next request() or connect() tries again.
   * @param {import('../base/errors').NinesError} err why
   */
  _giveUp (err) {
    this._state = 'idle';
    this._rejectQueue((q) => this._notConnected(q, err), 'notConnected');
  }

  /**
   * A request has left the line (answered, failed, timed out, or a broadcast written): with
   * interFrameDelayMs, the line rests from now. Callers check `this._ifdMs !== 0` first.
   */
  _rest () {
    this._restUntil = hrtime() + this._ifdNs;
  }

  /**
   * Whether the line has rested since the last request ended (interFrameDelayMs); when not, _pump()
   * runs once it has. Callers check `this._ifdMs === 0` first, so the default costs nothing.
   * @returns {boolean}
   */
  _rested () {
    const now = hrtime();
    if (now >= this._restUntil) return true;
    // A timer armed for an earlier end fires early and re-arms here
    if (this._restTimer === null) this._restTimer = setTimeout(this._onRested, Math.max(1, Math.ceil(Number(this._restUntil - now) / 1e6)));
    return false;
  }

  _onRested () {
    this._restTimer = null;
    this._pump();
  }

  /** The device answered on this connection: the link works, so the next failure starts the backoff afresh. */
  _answered () {
    if (this._backoff.attempt !== 0) this._backoff.reset();
  }

  /** @param {Error|null} err */
  _settleWaiters (err) {
    const waiters = this._waiters;
    if (waiters.length === 0) return;
    this._waiters = [];
    for (const w of waiters) err === null ? w.resolve() : w.reject(err);
  }

  /** @param {Error} err */
  _emitError (err) {
    if (this.listenerCount('error')) this.emit('error', err);
  }

  // --- requests ------------------------------------------------------------------------------------

  /**
   * Counts a valid request and refuses it (rejecting it) when the client is closed or, unless it can
   * be written at once, when queueMax requests already wait.
   * @param {Request} p
   * @param {boolean} free the line is free: p would be written now, not queued
   * @returns {boolean} true when p was refused
   */
  _refused (p, free) {
    this._stats.requests++;
    if (this._state === 'closed') {
      this._fail(p, this._closedError(p.describe()), 'closed');
      return true;
    }
    if (!free && this._queue.length >= this._queueMax) {
      this._fail(p, this._queueFullError(p), 'queueFull');
      return true;
    }
    return false;
  }

  /**
   * Rejects p with err and counts it: under timeouts, or under errors and `counter` (when given).
   * @param {Request} p
   * @param {Error & {sentNs?: bigint}} err
   * @param {string} [counter] a key of the counters
   */
  _fail (p, err, counter) {
    if (p.sentNs !== 0n) err.sentNs = p.sentNs;
    const s = this._stats;
    if (counter === 'timeouts') {
      s.timeouts++;
    } else {
      s.errors++;
      if (counter !== undefined) s[counter]++;
    }
    p.reject(err);
  }

  /**
   * Rejects every request in flight (they leave the in-flight set before any is rejected).
   * @param {(p: Request) => Error} makeError
   * @param {string} counter
   */
  _failInflight (makeError, counter) {
    const flight = this._flight;
    if (flight === null) {
      const p = this._inflight;
      if (p === null) return;
      this._inflight = null;
      this._fail(p, makeError(p), counter);
      return;
    }
    if (flight.size === 0) return;
    const all = [...flight];
    flight.clear();
    for (const p of all) this._fail(p, makeError(p), counter);
  }

  /** @param {(p: Request) => Error} makeError @param {string} counter */
  _rejectQueue (makeError, counter) {
    const q = this._queue;
    if (q.length === 0) return;
    this._queue = [];
    for (const p of q) this._fail(p, makeError(p), counter);
  }

  /** @param {bigint} deadline a request's deadline: the timer must fire no later than this */
  _watch (deadline) {
    if (this._timerAt === 0n || deadline < this._timerAt) this._arm(deadline);
  }

  /** @param {bigint} deadline arm the shared timer for this */
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
    const flight = this._flight;
    if (flight === null) {
      const p = this._inflight;
      if (p !== null && p.deadline <= now) {
        this._inflight = null;
        if (this._ifdMs !== 0) this._rest();
        // The line is held for the late reply BEFORE the caller hears of the timeout: a submit()
        // handler runs synchronously and may hand over its next request from within onError, and
        // that request must find the line held (issue 18: written 2 ms after the timeout, it took
        // the late reply of the request before as its own, with quality ok)
        this._afterTimeout(p);
        this._fail(p, this._timeoutError(p), 'timeouts');
      }
    } else {
      // Deleting the entry being visited is safe in a Set; the state may change under us (a hook
      // that resets the connection empties the set), and then the loop ends
      for (const p of flight) {
        if (p.deadline > now) continue;
        flight.delete(p);
        if (this._ifdMs !== 0) this._rest();
        this._afterTimeout(p); // before the caller hears of it (above)
        this._fail(p, this._timeoutError(p), 'timeouts');
      }
    }
    const q = this._queue;
    for (let i = 0; i < q.length;) {
      const x = q[i];
      if (x.deadline > now) { i++; continue; }
      q.splice(i, 1);
      if (this._state === 'connected') this._fail(x, this._queuedTimeoutError(x), 'timeouts');
      else this._fail(x, this._notConnected(x, null), 'notConnected');
    }
    this._pump();
    const rest = this._queue;
    let next = this._inflight === null ? 0n : this._inflight.deadline;
    if (flight !== null) for (const p of flight) if (next === 0n || p.deadline < next) next = p.deadline;
    for (let i = 0; i < rest.length; i++) if (next === 0n || rest[i].deadline < next) next = rest[i].deadline;
    if (next !== 0n) this._watch(next);
  }

  // --- hooks (defaults) ----------------------------------------------------------------------------

  /** Writes queued requests while the connection has a free slot. */
  _pump () {}

  /** The connection just opened: reset the protocol's per-connection state. */
  _onUp () {}

  /**
   * The open connection was lost (before the requests in flight fail).
   * @param {null|'reopen'|'expected'} expected null when nobody planned it (the peer closed, the network failed)
   */
  _onDrop (expected) {}

  /** close() was called: stop the protocol's own timers. */
  _onClosing () {}

  /**
   * A request in flight has just timed out: called before it is failed, so that whatever the
   * failure sets off (a submit() handler sending its next request) finds the line as this hook
   * leaves it. @param {Request} p
   */
  _afterTimeout (p) {}

  /**
   * @param {import('../base/errors').NinesError} err a failed connection attempt
   * @returns {boolean} false when retrying cannot help
   */
  _canRetry (err) { return true; }
}

module.exports = { Connection, NS_PER_MS };
