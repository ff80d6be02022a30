'use strict';

/**
 * Device: owns the connections to one device (at most spec.maxConnections clients, so a PLC that
 * accepts 1-8 connections is never asked for more) and shares them among its users, fairly.
 *
 * - Each connection carries one request at a time (the device discipline), or up to spec.maxInflight
 *   on a Modbus TCP device that serves pipelined requests. The device hands a request to a client only
 *   when that client is connected and has a free slot (fewer requests in flight than its effective
 *   limit), so the client's own queue is never used: queueing, fairness and timeouts live here,
 *   where every user is visible. With several slots per connection, a connection that still has one
 *   free goes to the back of the free list, so requests spread over the connections before any of
 *   them carries a second one.
 * - A pipelining device that turns out to take one request at a time: the client that notices
 *   falls back to one in flight and warns (NINES_ERR_PIPELINE_UNSUPPORTED, drivers/modbus/
 *   pipeline-guard.js); the device then limits every one of its connections to one, and its health
 *   says so (inflight.effective 1, warning) until it is built again.
 * - Each user has a bounded FIFO; a free connection takes the next request from the next user in
 *   round-robin order among users with waiting requests (see queue.js).
 * - Queued deadlines share one lazily armed timer per device; a request handed over gets the rest
 *   of its time. Nothing is shared between devices: one dead device costs the others nothing.
 * - Health: 'connecting' → 'up' | 'down', 'closed'. A down device rejects at once and keeps no
 *   backlog: when it comes back it serves what is asked then, never a replay of the outage.
 * - A line of units (spec.units: RTU slaves on one port, unit ids behind one gateway) adds a health
 *   per unit (unit-health.js): a unit that stops answering is left alone for its backoff, its requests
 *   failing at once (NINES_ERR_UNIT_DOWN), so it does not hold the line its neighbours share.
 */

const { EventEmitter } = require('node:events');
const E = require('./errors');
const { buildDeviceSpec } = require('./spec');
const { MAX_QUEUE } = require('./limits');
const F = require('./fields');
const { readDuration } = require('../base/duration-field');
const { DeviceUser } = require('./user');
const queue = require('./queue');
const { Units } = require('./unit-health');
const { isSerialLine } = require('./line');
const { Diagnostics } = require('./diagnostics');

const TIMEOUT = 'NINES_ERR_REPLY_TIMEOUT';
const OK = 0;
const ERROR = 1;
const TIMED_OUT = 2;
/** Not sent by design: its unit is down (unit-health.js) */
const SKIPPED = 3;
const now = () => performance.now();
const noop = () => {};
/** Device#_place: the user's queue is full */
const FULL = Object.freeze({ full: true });

// submit()'s closures live out here: one inside _submit would capture its handler, and a function
// whose parameter is captured allocates a context on every call, the hot path's too (48 B a call
// in a micro-benchmark on Node 20, optimized or not)
/** Tells handler of err, never from within submit() (as request()'s rejection comes later). */
function failSoon (handler, err) {
  queueMicrotask(() => handler.onError(err));
}

/** Hands a request()'s outcome to a submit() handler. @param {Promise<object>} p */
function settleThrough (p, handler) {
  p.then((reply) => handler.onReply(reply), (err) => handler.onError(err));
}

/** @returns {number} the outcome a rejection counts as */
const outcomeOf = (err) => (err !== null && typeof err === 'object' && err.code === TIMEOUT ? TIMED_OUT : ERROR);

/** One connection: a client and what the device knows of it. */
class DeviceConnection {
  constructor (device, client, limit) {
    this.client = client;
    this.up = false; // 'connect' seen, no 'close' since
    this.inflight = 0; // our requests it carries
    this.limit = limit; // requests it may carry at once: the device's effective maxInflight
    this.idle = false; // in the device's idle list (a free slot, as far as the list knows)
    this.planned = false; // closed without an error (a planned reconnect) and not back yet
    /** @type {NodeJS.Timeout|null} set while its serial line is kept quiet after a timeout: not free (Device#_holdQuiet) */
    this.quiet = null;
    /** @type {DeviceUser|null} whose request it carries (a device without pipelining: one at a time) */
    this.user = null;
    /** Reused for every request: the clients read it synchronously */
    this.opts = { timeoutMs: 0 };
    // One request at a time: these two serve every request, nothing allocated per request
    this.onOk = (reply) => { device._done(this, this.user, OK); return reply; };
    this.onErr = (err) => { device._done(this, this.user, outcomeOf(err), err); throw err; };
    this._device = device;
    /** @type {object|null} the handler of the submitted request it carries (submit(), one at a time) */
    this.handler = null;
    /** read by the client's submit(): whether that handler wants the reply's values */
    this.wantsData = true;
  }

  /** The client's submit() handler: the request it carries is answered. @param {object} reply the client's, see ModbusClient#submit */
  onReply (reply) {
    const h = this.handler;
    this.handler = null;
    this._device._done(this, this.user, OK);
    h.onReply(reply);
  }

  /** The client's submit() handler: the request it carries failed. @param {Error} err */
  onError (err) {
    const h = this.handler;
    this.handler = null;
    this._device._done(this, this.user, outcomeOf(err), err);
    h.onError(err);
  }
}

class Device extends EventEmitter {
  /**
   * @param {import('./spec').DeviceSpec|object} spec from buildDeviceSpec, taken as it is; raw input
   *   (a direct API user's) is built here, once
   * @param {{createClient?: Function, now?: () => number}} [deps] createClient(target, opts) builds one
   *   connection's client; now() is the wall clock (epoch ms) of health.since
   */
  constructor (spec, { createClient = require('../drivers').createClient, now: wallClock = Date.now } = {}) {
    super();
    this.spec = buildDeviceSpec(spec);
    this.name = this.spec.name;
    /** what messages call the device (spec.label: its name, or the one a user gave it) */
    this.label = this.spec.label;
    this._createClient = createClient;
    this._now = wallClock;
    /** @type {DeviceConnection[]|null} null until open() */
    this._conns = null;
    this._idle = [];
    this._openCount = 0;
    this._opening = null;
    this._closing = null;
    this._state = 'connecting';
    this._since = wallClock();
    this._lastError = null;
    /** @type {Map<string, DeviceUser>} */
    this._users = new Map();
    this._default = null;
    queue.init(this);
    this._stats = { requests: 0, ok: 0, errors: 0, timeouts: 0, dropped: 0, skipped: 0 };
    // a serial line (RTU, RTU over TCP): one frame at a time, replies matched by shape alone, kept
    // quiet by its driver after a timeout
    this._serialLine = isSerialLine(this.spec.target);
    // a line of units on a serial line
    this._rtuLine = this.spec.units !== null && this._serialLine;
    /** @type {Units|null} the units of a line and their health; null for a device of one unit */
    this._units = this.spec.units === null
      ? null
      : new Units(this.spec.units, { name: this.name, label: this.label, unitId: this.spec.target.unitId, now: wallClock, onChange: () => this._emitHealth() });
    this._inFlight = 0;
    // Requests per connection: the spec's maxInflight until the device shows it takes one at a time
    this._inflightLimit = this.spec.maxInflight;
    this._pipelined = this.spec.maxInflight > 1;
    /** whether submit() can go straight to the clients' submit() (one request per connection, no units; set at open) */
    this._viaSubmit = false;
    /** @type {{code: string, message: string}|null} */
    this._warning = null;
    /** FC8 counters in the health (diagnostics.js), when the spec asks for them */
    this._diagnostics = this.spec.diagnosticsMs > 0 ? new Diagnostics(this, { now: wallClock }) : null;
  }

  /**
   * Creates the clients and connects them. Resolves once every first attempt has settled, connected
   * or failed: a device down at start is fine, its clients keep retrying with the spec's backoff.
   * Idempotent.
   * @returns {Promise<void>} rejects with NINES_ERR_CLOSED after close()
   */
  open () {
    if (this._closing) return Promise.reject(E.closedError(this, 'open', null, undefined));
    if (this._opening) return this._opening;
    const s = this.spec;
    const opts = { timeoutMs: s.timeoutMs, connectTimeoutMs: s.connectTimeoutMs, backoff: s.backoff, reconnect: true, queueMax: 1 };
    // only a pipelining (Modbus TCP) device names it: other clients take no such option
    if (this._pipelined) opts.maxInflight = s.maxInflight;
    // line quirks (drivers/connection.js), named only when set, as maxInflight
    if (s.interFrameDelayMs !== 0) opts.interFrameDelayMs = s.interFrameDelayMs;
    if (s.delayAfterConnectMs !== 0) opts.delayAfterConnectMs = s.delayAfterConnectMs;
    // Modbus/TCP Security: each client builds its secure context from the PEM texts (a spec crosses threads)
    if (s.tls) opts.tls = s.tls;
    this._conns = [];
    try {
      for (let i = 0; i < s.maxConnections; i++) {
        const conn = new DeviceConnection(this, this._createClient(s.target, opts), this._inflightLimit);
        this._conns.push(conn);
        this._listen(conn);
      }
      this._viaSubmit = !this._pipelined && this._units === null && this._conns.every((c) => typeof c.client.submit === 'function');
    } catch (err) {
      // A driver that cannot even be built (a bug, or a missing optional package): down, not half open
      this._noteError(err);
      this._opening = Promise.allSettled(this._conns.map((c) => c.client.close())).then(() => {
        this._conns = [];
        if (!this._closing) this._goDown();
        throw err;
      });
      return this._opening;
    }
    if (this._diagnostics !== null) this._diagnostics.start();
    this._opening = Promise.all(this._conns.map((c) => c.client.connect().then(noop, (err) => {
      if (this._lastError === null && !this._closing) this._noteError(err);
    }))).then(() => {
      // Every first attempt failed: say so now rather than after the first request's timeout
      if (this._state === 'connecting') this._goDown();
    });
    return this._opening;
  }

  /**
   * The user called `name` (one per job or Node-RED node); the same name returns the same user.
   * @param {string} name
   * @param {{queueMax?: number}} [opts] requests that may wait for this user (default spec.queueMax);
   *   ignored when the user exists
   * @returns {DeviceUser}
   */
  user (name, { queueMax } = {}) {
    const known = this._users.get(name);
    if (known !== undefined) return known;
    if (typeof name !== 'string' || name === '') throw E.invalidArg('user name', name, 'must be a non-empty string');
    if (queueMax !== undefined && (!Number.isInteger(queueMax) || queueMax < 1 || queueMax > MAX_QUEUE)) {
      throw E.invalidArg('queueMax', queueMax, `must be an integer from 1 to ${MAX_QUEUE}`);
    }
    const u = new DeviceUser(this, name, queueMax === undefined ? this.spec.queueMax : queueMax);
    this._users.set(name, u);
    return u;
  }

  /**
   * Shortcut for user('default').request(op, opts).
   * @param {any} op
   * @param {{timeoutMs?: number}} [opts]
   * @returns {Promise<object>}
   */
  request (op, opts) {
    let u = this._default;
    if (u === null || u._closed) u = this._default = this.user('default');
    return this._request(u, op, opts);
  }

  /**
   * @returns {{device: string, state: 'connecting'|'up'|'down'|'closed', since: number,
   *   lastError: {code: string, message: string}|null, connections: {open: number, max: number},
   *   inflight: {max: number, effective: number}, warning: {code: string, message: string}|null}}
   *   lastError is the last connection error seen, kept after recovery; inflight: requests per
   *   connection as configured (max) and as used (effective: 1 after a pipelining fallback; the
   *   requests on the wire now are in stats.inFlight); warning: something that works, but not as
   *   configured (NINES_ERR_PIPELINE_UNSUPPORTED), kept until the device is built again; units (a
   *   line only): each unit's health by name (unit-health.js); diagnostics (spec.diagnosticsMs only):
   *   each unit's FC8 counters, as last read and their growth since the read before (diagnostics.js)
   */
  get health () {
    const e = this._lastError;
    return {
      device: this.name,
      state: this._state,
      since: this._since,
      lastError: e === null ? null : { code: e.code, message: e.message },
      connections: { open: this._openCount, max: this.spec.maxConnections },
      inflight: { max: this.spec.maxInflight, effective: this._inflightLimit },
      warning: this._warning,
      ...(this._units === null ? {} : { units: this._units.health() }),
      ...(this._diagnostics === null ? {} : { diagnostics: this._diagnostics.health() })
    };
  }

  /**
   * Counters (a copy): requests = ok + errors + timeouts + dropped + skipped + queued + inFlight, in
   * total and per user; skipped: not sent because the request's unit is down.
   * @returns {{requests: number, ok: number, errors: number, timeouts: number, dropped: number,
   *   skipped: number, queued: number, inFlight: number, users: Object<string, object>}}
   */
  get stats () {
    const users = {};
    for (const [name, u] of this._users) users[name] = u.stats;
    return { ...this._stats, queued: this._queued, inFlight: this._inFlight, users };
  }

  /**
   * Closes every client; queued requests reject with NINES_ERR_CLOSED, requests in flight with the
   * client's NINES_ERR_CLOSED. Idempotent.
   * @returns {Promise<void>} resolves when every connection is closed
   */
  close () {
    if (this._closing) return this._closing;
    const conns = this._conns || [];
    if (this._diagnostics !== null) this._diagnostics.stop();
    this._setState('closed', false);
    this._idle = [];
    for (const c of conns) if (c.quiet !== null) { clearTimeout(c.quiet); c.quiet = null; }
    // Set before anything settles or is emitted: a listener that calls request() now gets NINES_ERR_CLOSED
    this._closing = Promise.allSettled(conns.map((c) => c.client.close())).then(noop);
    queue.rejectAll(this, () => E.closedError(this, 'request', null, true));
    this._emitHealth();
    return this._closing;
  }

  // --- requests ---------------------------------------------------------------------------------

  /** DeviceUser#request. @param {DeviceUser} user @returns {Promise<object>} */
  _request (user, op, opts) {
    const timeoutMs = this._admit(user, opts !== undefined && opts !== null ? opts.timeoutMs : undefined);
    if (typeof timeoutMs !== 'number') return Promise.reject(timeoutMs);
    // notAfter (epoch ms, performance.timeOrigin-based so it means the same in every thread): the
    // latest time it may start, e.g. a write command's maximum age; checked when it is handed to a
    // connection, so nothing starts late
    const notAfter = opts !== undefined && opts !== null ? opts.notAfter : undefined;
    const startBy = typeof notAfter === 'number' ? notAfter - performance.timeOrigin : Infinity;
    if (startBy !== Infinity) {
      const t = now();
      if (startBy <= t) return this._reject(user, ERROR, E.expiredError(this, user, t - startBy));
    }
    if (this._units !== null) return this._unitRequest(user, op, timeoutMs, startBy);
    return this._send(user, op, timeoutMs, startBy);
  }

  /**
   * DeviceUser#submit: _request() without a promise (issue 11), for the scheduler's lanes. The outcome
   * goes to handler.onReply(reply) or handler.onError(err), later, never from within this call; the
   * reply is the one the client's submit() lends (valid until onReply returns, see
   * drivers/modbus/client.js). Devices whose clients cannot submit, lines of units and pipelining
   * devices take the promise path and hand its reply over.
   * @param {DeviceUser} user
   * @param {any} op
   * @param {number|string|undefined} timeoutMs
   * @param {{onReply: Function, onError: Function, wantsData?: boolean}} handler
   */
  _submit (user, op, timeoutMs, handler) {
    if (!this._viaSubmit || this._conns === null) {
      settleThrough(this._request(user, op, timeoutMs === undefined ? undefined : { timeoutMs }), handler);
      return;
    }
    const ms = this._admit(user, timeoutMs);
    if (typeof ms !== 'number') { failSoon(handler, ms); return; }
    const conn = this._place(user);
    if (conn === null) queue.enqueue(this, user, op, ms, now() + ms, handler);
    else if (conn === FULL) failSoon(handler, E.queueFull(this, user));
    else this._callSubmit(conn, user, op, ms, handler);
  }

  /**
   * Whether a request may go, and with which timeout. It may not when its own timeout is invalid, its
   * user or the device is closed, or the device is down; such a request is counted as refused at once
   * (an error).
   * @param {DeviceUser} user
   * @param {unknown} timeoutMs the request's own, if it names one: read as the device's timeoutMs is
   *   (a number of ms or a duration such as "500ms", whole ms up to the one ceiling of limits.js), so
   *   a request takes the forms its driver takes
   * @returns {number|Error} the request's timeout in ms (its own, or the device's), or why it may not go
   */
  _admit (user, timeoutMs) {
    let ms = this.spec.timeoutMs;
    let err = null;
    if (timeoutMs !== undefined) {
      try { ms = readDuration(timeoutMs, 'timeoutMs', F.DURATION_BOUNDS, E.invalidArg); } catch (e) { err = e; }
    }
    if (err === null && (user._closed || this._closing)) {
      err = E.closedError(this, 'request', user._closed ? user : null, undefined);
    } else if (err === null && this._state === 'down') {
      err = E.downError(this, this._since, this._lastError, undefined);
    }
    if (err === null) return ms;
    this._count(user, -1);
    this._count(user, ERROR);
    return err;
  }

  /**
   * Counts a request that may go and finds its place, the same for request() and submit(): the hot
   * path (nobody waiting, a connection with a free slot: taken, and the user's turn with it), or the
   * user's queue.
   * @param {DeviceUser} user
   * @returns {DeviceConnection|null|typeof FULL} the connection to hand it to; null: queue it; FULL:
   *   its user's queue is full (counted as dropped)
   */
  _place (user) {
    this._count(user, -1);
    if (this._queued === 0) {
      const conn = this._takeIdle();
      if (conn !== null) {
        queue.markServed(this, user);
        return conn;
      }
    }
    if (user._q.length < user.queueMax) return null;
    user._stats.dropped++;
    this._stats.dropped++;
    return FULL;
  }

  /** Hands a submitted request to a connection that carries one at a time (_viaSubmit). */
  _callSubmit (conn, user, op, timeoutMs, handler) {
    conn.inflight++;
    user._inFlight++;
    this._inFlight++;
    conn.user = user;
    conn.handler = handler;
    conn.wantsData = handler.wantsData !== false;
    conn.client.submit(op, timeoutMs, conn);
  }

  /**
   * A request on a line of units: refused at once while its unit is down (but for the unit's probe),
   * and its outcome kept as the unit's health.
   */
  _unitRequest (user, op, timeoutMs, startBy) {
    const u = this._units.of(op);
    if (u === undefined) return this._send(user, op, timeoutMs, startBy);
    const refused = this._units.refuse(u);
    if (refused !== null) return this._reject(user, SKIPPED, refused);
    // a probe of a silent unit waits only as long as the unit's answers took (unit-health.js)
    const t = u.probing ? u.probeTimeout(timeoutMs) : timeoutMs;
    return this._send(user, op, t, startBy).then((reply) => {
      this._units.settled(u, null, reply);
      return reply;
    }, (err) => {
      // down now: what it has waiting would only hold the line for a timeout each
      if (this._units.settled(u, err)) queue.rejectWhere(this, (p) => this._units.of(p.op) === u, () => this._units.downError(u, Math.max(0, Math.round(u.retryAt - now()))), SKIPPED);
      throw err;
    });
  }

  /**
   * Sends or queues a request that may go.
   * @param {number} [startBy] performance.now() ms after which it may not start (queue.js enqueue)
   * @returns {Promise<object>}
   */
  _send (user, op, timeoutMs, startBy = Infinity) {
    if (this._conns === null) this.open().catch(noop);
    const conn = this._place(user);
    if (conn === FULL) return Promise.reject(E.queueFull(this, user));
    if (conn !== null) {
      conn.opts.timeoutMs = timeoutMs;
      return this._call(conn, user, op);
    }
    // On a line of units a request may have to wait behind a silent unit's request, which holds the
    // line for a whole timeout (on a serial line for a second one, quiet, after it: _holdQuiet): it
    // gets that wait on top of its own timeout, so a neighbour's silence costs it time, not its answer
    // (unit-health.js). Elsewhere the wait counts into its timeout.
    const allowance = this._units === null ? 1 : this._rtuLine ? 3 : 2;
    return queue.enqueue(this, user, op, timeoutMs, now() + allowance * timeoutMs, null, startBy);
  }

  /** Counts a request (outcome -1) or an outcome for the user and the device. */
  _count (user, outcome) {
    const u = user._stats;
    const d = this._stats;
    if (outcome === -1) { u.requests++; d.requests++; } else if (outcome === OK) { u.ok++; d.ok++; } else if (outcome === TIMED_OUT) { u.timeouts++; d.timeouts++; } else if (outcome === SKIPPED) { u.skipped++; d.skipped++; } else { u.errors++; d.errors++; }
  }

  /** @returns {Promise<never>} a request rejected before it was queued */
  _reject (user, outcome, err) {
    this._count(user, -1);
    this._count(user, outcome);
    return Promise.reject(err);
  }

  /** Hands a request to a connection with a free slot. @returns {Promise<object>} the client's reply or error, unchanged */
  _call (conn, user, op) {
    conn.inflight++;
    user._inFlight++;
    this._inFlight++;
    let p;
    try {
      p = conn.client.request(op, conn.opts);
    } catch (err) {
      p = Promise.reject(err);
    }
    if (!this._pipelined) {
      conn.user = user;
      return p.then(conn.onOk, conn.onErr);
    }
    // Still a free slot: back in the list, at the far end, so the other free connections go first
    if (conn.inflight < conn.limit && !conn.idle) {
      conn.idle = true;
      this._idle.unshift(conn);
    }
    // Several requests share the connection: each remembers its own user
    return p.then((reply) => { this._done(conn, user, OK); return reply; }, (err) => { this._done(conn, user, outcomeOf(err)); throw err; });
  }

  /**
   * A connection's request has settled: count it, free its slot, serve who waits.
   * @param {Error} [err] its error, when it failed
   */
  _done (conn, user, outcome, err) {
    conn.user = null;
    conn.inflight--;
    user._inFlight--;
    this._inFlight--;
    this._count(user, outcome);
    if (outcome === TIMED_OUT && this._rtuLine && this._holdQuiet(conn, err)) return;
    this._free(conn);
  }

  /** A connection may take requests again (if it is still there): listed as free, and who waits is served. */
  _free (conn) {
    if (this._closing || !conn.up || conn.client.state !== 'connected') return;
    if (!conn.idle && conn.inflight < conn.limit) {
      conn.idle = true;
      this._idle.push(conn);
    }
    if (this._queued !== 0) queue.pump(this);
  }

  /**
   * After a request timed out on a serial line (RTU, or RTU over TCP), its driver keeps the line
   * quiet for that request's timeout, in case its reply still comes (drivers/modbus/rtu-transport.js).
   * A request handed to the driver then would wait there with its own timeout running, and be failed
   * unsent if less than half of it were left. So the connection stays taken for that time, as if the
   * request were still on the wire: what waits stays in the device's queue and is handed over with
   * its whole timeout once the line is free. On a line of units a neighbour of a silent unit waits,
   * and loses no answer (its queue allowance covers the wait: _send).
   * @param {DeviceConnection} conn
   * @param {Error & {details?: object}} err a timeout
   * @returns {boolean} whether the connection is held
   */
  _holdQuiet (conn, err) {
    const d = err.details;
    if (!d || d.queued) return false; // it never reached the wire: the line is not kept quiet
    // the driver says how long it holds the line (drivers/modbus/client.js _timeoutError)
    const ms = Number.isFinite(d.quietMs) ? d.quietMs : Number.isFinite(d.timeoutMs) ? d.timeoutMs : this.spec.timeoutMs;
    conn.quiet = setTimeout(() => { conn.quiet = null; this._free(conn); }, Math.ceil(ms) + 1);
    return true;
  }

  /** @returns {DeviceConnection|null} a connected connection with a free slot, taken out of the idle list */
  _takeIdle () {
    const idle = this._idle;
    while (idle.length !== 0) {
      const conn = idle.pop();
      conn.idle = false;
      // A client between a peer's FIN and its 'close' is no longer 'connected': skip it, 'connect' brings
      // it back; one whose limit fell (pipelining fallback) while listed is skipped until a slot frees,
      // one that came back while its line is kept quiet (_holdQuiet) until its quiet period has passed
      if (conn.up && conn.client.state === 'connected' && conn.inflight < conn.limit && conn.quiet === null) return conn;
    }
    return null;
  }

  // --- connections and health -------------------------------------------------------------------

  /** @param {DeviceConnection} conn */
  _listen (conn) {
    const client = conn.client;
    client.on('connect', () => {
      if (this._closing) return;
      if (!conn.up) { conn.up = true; this._openCount++; }
      if (conn.inflight < conn.limit && !conn.idle) { conn.idle = true; this._idle.push(conn); }
      if (this._queued !== 0) queue.pump(this);
      // another connection coming up changes what the health says (connections.open), unless it
      // is back from a planned reconnect, which never said it was gone
      const planned = conn.planned;
      conn.planned = false;
      if (!this._setState('up', true) && !planned) this._emitHealth();
    });
    client.on('close', (err) => {
      if (this._closing) return;
      const wasUp = conn.up;
      if (conn.up) { conn.up = false; this._openCount--; }
      if (conn.idle) { conn.idle = false; this._idle.splice(this._idle.indexOf(conn), 1); }
      // No error: a planned reconnect (ASCII resync after an unanswered timeout, a reboot), not a
      // failure, and not worth a health event: the connection is back at once
      if (err) this._noteError(err);
      else conn.planned = true;
      // one of several connections lost while the device stays up: the count in the health changed
      if (wasUp && err && this._state === 'up') this._emitHealth();
    });
    client.on('error', (err) => {
      if (!this._closing) this._noteError(err);
    });
    client.on('warning', (warning) => {
      if (!this._closing && warning && warning.code === 'NINES_ERR_PIPELINE_UNSUPPORTED') this._fallBack(warning);
    });
  }

  /**
   * One connection's client found that the device takes one request at a time: every connection
   * of the device carries one from now on (they all talk to the same device), and the health says so.
   * @param {{code: string, message: string}} warning
   */
  _fallBack (warning) {
    if (this._inflightLimit === 1) return;
    this._inflightLimit = 1;
    this._warning = { code: warning.code, message: warning.message };
    for (const c of this._conns || []) {
      c.limit = 1;
      if (typeof c.client.limitInflight === 'function') c.client.limitInflight(1);
    }
    this._emitHealth();
  }

  /** A connect failure or a dropped connection. @param {Error & {code?: string}} err */
  _noteError (err) {
    const code = err && typeof err.code === 'string' ? err.code : 'NINES_ERR_CONNECTION_CLOSED';
    const changed = this._lastError === null || this._lastError.code !== code;
    this._lastError = { code, message: err && err.message ? err.message : String(err) };
    if (this._state === 'up' && this._openCount === 0) this._goDown();
    else if (this._state === 'down' && changed) this._emitHealth();
  }

  /** No connection left: fail what waits now, so nothing is replayed when the device comes back. */
  _goDown () {
    this._setState('down', false);
    queue.rejectAll(this, () => E.downError(this, this._since, this._lastError, true));
    this._emitHealth();
  }

  /** @returns {boolean} whether the state changed */
  _setState (state, emit) {
    if (this._state === state) return false;
    this._state = state;
    this._since = this._now();
    if (emit) this._emitHealth();
    return true;
  }

  _emitHealth () {
    if (this.listenerCount('health') !== 0) this.emit('health', this.health);
  }

  /** DeviceUser#close. @param {DeviceUser} user */
  _forget (user) {
    if (this._users.get(user.name) === user) this._users.delete(user.name);
    queue.rejectUser(this, user, () => E.closedError(this, 'request', user, true));
  }
}

module.exports = { Device, DeviceUser };
