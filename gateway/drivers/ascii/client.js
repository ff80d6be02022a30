'use strict';

/**
 * AsciiClient: the driver contract (design.md) over TCP for Brainboxes ED / DCON devices.
 *
 * One request on the wire at a time [HW: the device is strictly request/response]; others wait in
 * a FIFO of at most queueMax. Each request times out on its own timer, started by request().
 *
 * NO MIS-CORRELATION. The device is silent on unknown commands, wrong addresses and bad checksums
 * [HW, DOC], so timeouts are normal, and a reply carries nothing that names its command. The vendor
 * library takes a late reply as the next command's (notes §4.2). Our rule:
 *  1. A line that arrives while nothing is in flight is late (or unsolicited): counted in
 *     stats.lateReplies and dropped. Lines are matched only after the whole received chunk is
 *     framed, and the next command is written only then, so a second line in the same chunk can
 *     never be taken for the next command's reply. Before each write any unfinished line is
 *     dropped: bytes received before a command was sent cannot be its reply.
 *  2. After a request times out on the wire the connection DRAINS for drainMs
 *     (constants.ASCII_DRAIN_MS): nothing is written, arriving lines are late. Since only one
 *     request was on the wire, at most one reply is owed: when it arrives during the drain, the
 *     line is clean again and the queue resumes at once.
 *  3. If the drain ends in silence we cannot tell "silent by design" from "slow": a reply could
 *     still come. With afterTimeout 'reconnect' (default) the client closes the connection and
 *     opens a new one before it writes the next command (at once if one waits; stats.resyncs),
 *     unless the owed line turns up first. A reply to the old connection can never reach the new
 *     one, so no late reply is ever matched, whatever its timing. The cost is one TCP connect per
 *     unanswered timeout.
 *     With afterTimeout 'drain' the client keeps the connection (the device keeps it usable after
 *     silence [HW E1/E2]) and trusts the drain window: a reply later than timeout + drainMs would be
 *     taken by the next command. Two guards narrow that window: the reply must fit the next
 *     command's kind and address (reply.js), and a bad reply right after a silent drain, or
 *     leftover bytes at the drain's end, make the client reconnect as in 3.
 *  4. `$AARS` (reboot) gets no reply and the device drops the connection [DOC]: the queue holds
 *     until it does (or for the request's timeoutMs, then the client reconnects itself), and the
 *     client reconnects with backoff.
 *  5. While the framer discards an over-long line (NINES_ERR_FRAME_TOO_LONG), nothing is written
 *     until its CR has come, for at most drainMs, else the client reconnects as in 3: otherwise the
 *     next reply could be swallowed with the rest of that line.
 *
 * Timing: when the connection is free, request() writes synchronously; sentNs is taken just
 * before socket.write, doneNs when the reply's CR is framed, and the promise settles in the
 * data handler.
 */

const net = require('node:net');
const { EventEmitter } = require('node:events');
const { NinesError } = require('../../base/errors');
const { parseTarget } = require('../target');
const { Backoff } = require('../../base/backoff');
const { AsciiFramer } = require('./framer');
const { encodeCommand, classifyCommand } = require('./command');
const { parseReply } = require('./reply');
const { normalizeOptions, timeoutArg } = require('./client-options');

/** One request; a class so every instance has the same shape. */
class Pending {
  constructor (command, kind, buf, timeoutMs) {
    this.command = command;
    this.kind = kind;
    this.buf = buf;
    this.expectsReply = kind !== 'broadcast' && kind !== 'reboot';
    this.timeoutMs = timeoutMs;
    this.timer = null;
    this.sentNs = 0n;
    this.written = false;
    this.settled = false;
    this.resolve = null;
    this.reject = null;
  }
}

class AsciiClient extends EventEmitter {
  /**
   * @param {string|import('../target').Target} target e.g. 'ascii://127.0.0.1:9500?address=01&checksum=on'
   * @param {object} [opts] timeoutMs=1000, connectTimeoutMs=5000, queueMax=64, reconnect=true,
   *   backoff={initialMs:100, maxMs:10000}, random=Math.random, afterTimeout='reconnect'|'drain',
   *   drainMs=constants.ASCII_DRAIN_MS (all durations in ms or strings like "1s")
   */
  constructor (target, opts = {}) {
    super();
    const t = parseTarget(target);
    if (t.protocol !== 'ascii') {
      throw new NinesError('NINES_ERR_INVALID_TARGET', `AsciiClient needs an ascii:// target; got ${t.url}`, { target: t.url });
    }
    this.target = t;
    /** @type {string} default device address of the target (two hex digits) */
    this.address = t.address;
    /** @type {boolean} checksum mode: appended to commands, verified on replies */
    this.checksum = t.checksum;
    Object.assign(this, normalizeOptions(opts));
    this._backoff = new Backoff({ ...this.backoff, random: this.random });
    this._state = 'idle';
    this._socket = null;
    this._gen = 0;
    this._connected = false;
    this._expectClose = null;
    this._queue = [];
    this._inflight = null;
    this._draining = null;
    this._owed = false;
    this._suspect = false;
    this._resyncAfterChunk = false;
    this._inData = false;
    this._waiters = [];
    this._timers = { connect: null, reconnect: null, drain: null };
    this._closePromise = null;
    this._memo = null;
    this._stats = {
      requests: 0, ok: 0, errors: 0, timeouts: 0, invalid: 0, queueFull: 0, lateReplies: 0,
      connects: 0, connectFailures: 0, drops: 0, reconnects: 0, resyncs: 0
    };
    this._framer = new AsciiFramer({ onLine: (line) => this._onLine(line), onOverflow: () => this._onOverflow() });
    this._onTimeoutBound = this._onTimeout.bind(this);
    this._onDrainEndBound = this._onDrainEnd.bind(this);
    this._openBound = this._open.bind(this);
  }

  /** @returns {'idle'|'connecting'|'connected'|'reconnecting'|'closed'} */
  get state () { return this._state; }

  /**
   * Counters (plain object, a copy): requests accepted, ok, errors (rejections other than
   * timeouts), timeouts (NINES_ERR_REPLY_TIMEOUT), invalid (rejected before sending), queueFull,
   * lateReplies (lines with no request to answer, dropped), connects, connectFailures, drops
   * (connections lost), reconnects (backoff attempts), resyncs (reconnects after an unanswered
   * timeout), discardedBytes / discardedFrames (over-long or unfinished lines), ignoredLf,
   * emptyLines, queued, inFlight.
   * @returns {Record<string, number>}
   */
  get stats () {
    const f = this._framer;
    return {
      ...this._stats,
      discardedBytes: f.discardedBytes,
      discardedFrames: f.discardedFrames,
      ignoredLf: f.ignoredLf,
      emptyLines: f.emptyLines,
      queued: this._queue.length,
      inFlight: this._inflight ? 1 : 0
    };
  }

  /**
   * Connects (or joins a connection attempt under way).
   * @returns {Promise<void>} rejects with NINES_ERR_CONNECT_FAILED / NINES_ERR_CONNECT_TIMEOUT on the
   *   next failure (background retries go on when reconnect is true), NINES_ERR_CLOSED after close()
   */
  connect () {
    if (this._state === 'closed') return Promise.reject(this._closedError('connect()'));
    if (this._state === 'connected') return Promise.resolve();
    const p = new Promise((resolve, reject) => this._waiters.push({ resolve, reject }));
    if (this._state === 'idle') this._open();
    return p;
  }

  /**
   * Sends one command and waits for its reply.
   * @param {string|{command: string, unchecked?: boolean}} op the command without checksum and CR;
   *   `unchecked: true` skips the prefix/address/case rules (framing rules still apply)
   * @param {{timeoutMs?: number|string}} [opts] overrides the client's timeoutMs
   * @returns {Promise<import('./reply').Reply & {sentNs: bigint, doneNs: bigint, noReply?: true}>}
   */
  request (op, { timeoutMs } = {}) {
    let req;
    try {
      req = this._makePending(op, timeoutMs === undefined ? this.timeoutMs : timeoutArg(timeoutMs, 'timeoutMs'));
    } catch (err) {
      this._stats.invalid++;
      return Promise.reject(err);
    }
    if (this._state === 'closed') return Promise.reject(this._closedError(req.command));
    const free = this._state === 'connected' && this._inflight === null && this._draining === null &&
      !this._owed && this._queue.length === 0 && !this._inData && !this._framer.discarding;
    if (!free && this._queue.length >= this.queueMax) {
      this._stats.queueFull++;
      return Promise.reject(new NinesError('NINES_ERR_QUEUE_FULL',
        `${req.command} not sent: ${this._queue.length} requests already wait (queueMax ${this.queueMax})`,
        { command: req.command, queueMax: this.queueMax, target: this.target.url }));
    }
    this._stats.requests++;
    const p = new Promise((resolve, reject) => { req.resolve = resolve; req.reject = reject; });
    if (free) {
      this._write(req);
    } else {
      this._queue.push(req);
      if (this._state === 'idle') this._open();
      else this._dispatch(); // resyncs first when a timed-out request may still be answered
    }
    if (!req.settled) req.timer = setTimeout(this._onTimeoutBound, req.timeoutMs, req);
    return p;
  }

  /**
   * Stops reconnecting, rejects queued and in-flight requests with NINES_ERR_CLOSED, ends the socket.
   * @returns {Promise<void>} resolves once the socket is closed
   */
  close () {
    if (this._closePromise) return this._closePromise;
    const wasConnected = this._connected;
    this._state = 'closed';
    this._connected = false;
    this._clearTimers();
    this._draining = null;
    if (this._inflight) this._fail(this._inflight, this._closedError(this._inflight.command));
    this._inflight = null;
    this._failQueued((req) => this._closedError(req.command));
    for (const w of this._waiters.splice(0)) w.reject(this._closedError('connect()'));
    const socket = this._socket;
    this._socket = null;
    this._gen++; // the socket's own close handler is now stale
    this._closePromise = new Promise((resolve) => {
      const done = () => {
        if (wasConnected) this.emit('close', undefined);
        resolve();
      };
      if (!socket || socket.closed) return done();
      socket.once('close', done);
      socket.destroy();
    });
    return this._closePromise;
  }

  // ---- requests ----

  _makePending (op, timeoutMs) {
    let command = op;
    let unchecked = false;
    if (op !== null && typeof op === 'object') {
      command = op.command;
      unchecked = op.unchecked === true;
    }
    // The scheduler repeats one command: keep its encoding instead of re-validating each time
    const m = this._memo;
    if (m !== null && m.command === command && m.unchecked === unchecked) return new Pending(command, m.kind, m.buf, timeoutMs);
    const buf = encodeCommand(command, { checksum: this.checksum, framingOnly: unchecked });
    const kind = classifyCommand(command);
    this._memo = { command, unchecked, kind, buf };
    return new Pending(command, kind, buf, timeoutMs);
  }

  _write (req) {
    if (this._framer.bufferedBytes !== 0) this._framer.dropPartial();
    this._inflight = req;
    req.written = true;
    req.sentNs = process.hrtime.bigint();
    this._socket.write(req.buf);
    if (!req.expectsReply) this._finishNoReply(req);
  }

  _finishNoReply (req) {
    const doneNs = process.hrtime.bigint();
    this._inflight = null;
    this._settle(req);
    this._stats.ok++;
    req.resolve({ ok: true, noReply: true, command: req.command, kind: req.kind, sentNs: req.sentNs, doneNs });
    if (req.kind === 'reboot') { // the device drops the connection [DOC]; hold the queue until it does
      this._expectClose = 'reboot';
      this._startDrain('reboot', req.timeoutMs);
    }
  }

  _dispatch () {
    if (this._inflight !== null || this._draining !== null || this._inData || this._state !== 'connected') return;
    if (this._owed) { // rule 3: a reply may still come on this connection; use a fresh one
      if (this._queue.length !== 0) this._resync();
      return;
    }
    if (this._framer.discarding) { // rule 5: wait for the over-long line's CR
      if (this._queue.length !== 0) this._startDrain('overflow', this.drainMs);
      return;
    }
    while (this._queue.length !== 0 && this._inflight === null && this._draining === null && this._state === 'connected') {
      this._write(this._queue.shift());
    }
  }

  _settle (req) {
    req.settled = true;
    if (req.timer !== null) {
      clearTimeout(req.timer);
      req.timer = null;
    }
  }

  _fail (req, err) {
    this._settle(req);
    if (req.written) err.sentNs = req.sentNs;
    if (err.code === 'NINES_ERR_REPLY_TIMEOUT') this._stats.timeouts++;
    else this._stats.errors++;
    req.reject(err);
  }

  _failQueued (makeErr) {
    const queue = this._queue;
    this._queue = [];
    for (const req of queue) this._fail(req, makeErr(req));
  }

  _onTimeout (req) {
    req.timer = null;
    if (req.settled) return;
    if (req === this._inflight) {
      this._inflight = null;
      const err = new NinesError('NINES_ERR_REPLY_TIMEOUT',
        `no reply to ${req.command} within ${req.timeoutMs} ms (the device is silent on unknown commands, wrong addresses and bad checksums)`,
        { command: req.command, timeoutMs: req.timeoutMs, written: true, target: this.target.url });
      err.doneNs = process.hrtime.bigint();
      this._fail(req, err);
      this._owed = true;
      this._startDrain('timeout', this.drainMs);
      return;
    }
    const i = this._queue.indexOf(req);
    if (i !== -1) this._queue.splice(i, 1);
    const details = { command: req.command, timeoutMs: req.timeoutMs, written: false, state: this._state, target: this.target.url };
    this._fail(req, this._state === 'connected'
      ? new NinesError('NINES_ERR_REPLY_TIMEOUT', `${req.command} timed out after ${req.timeoutMs} ms while still queued`, details)
      : new NinesError('NINES_ERR_NOT_CONNECTED', `${req.command} not sent within ${req.timeoutMs} ms: not connected to ${this._where()} (${this._state})`, details));
  }

  // ---- received data ----

  _onData (chunk) {
    this._inData = true;
    try {
      this._framer.push(chunk);
    } finally {
      this._inData = false;
    }
    if (this._draining === 'overflow' && !this._framer.discarding) this._endDrain();
    if (this._resyncAfterChunk) {
      this._resyncAfterChunk = false;
      this._resync();
    } else {
      this._dispatch();
    }
  }

  _onLine (line) {
    const req = this._inflight;
    if (req === null) return this._onLate();
    const doneNs = process.hrtime.bigint();
    this._inflight = null;
    let reply;
    try {
      reply = parseReply(line, { command: req.command, kind: req.kind, checksum: this.checksum });
    } catch (err) {
      err.doneNs = doneNs;
      if (this._suspect && err.code === 'NINES_ERR_BAD_REPLY') this._resyncAfterChunk = true;
      this._suspect = false;
      return this._fail(req, err);
    }
    this._suspect = false;
    this._settle(req);
    reply.sentNs = req.sentNs;
    reply.doneNs = doneNs;
    this._stats.ok++;
    req.resolve(reply);
  }

  _onOverflow () {
    const req = this._inflight;
    if (req === null) return this._onLate();
    this._inflight = null;
    const err = new NinesError('NINES_ERR_FRAME_TOO_LONG',
      `reply to ${req.command} is longer than ${this._framer.maxLineBytes} bytes; discarded up to its CR`,
      { command: req.command, maxLineBytes: this._framer.maxLineBytes, target: this.target.url });
    err.doneNs = process.hrtime.bigint();
    this._fail(req, err);
  }

  _onLate () {
    this._stats.lateReplies++;
    // The one reply owed by the timed-out request has come: the line is clean again (rule 2)
    this._owed = false;
    if (this._draining === 'timeout') this._endDrain();
  }

  // ---- drain after a timeout, hold after a reboot ----

  _startDrain (reason, ms) {
    this._draining = reason;
    this._timers.drain = setTimeout(this._onDrainEndBound, ms);
  }

  _endDrain () {
    clearTimeout(this._timers.drain);
    this._timers.drain = null;
    this._draining = null;
  }

  _onDrainEnd () {
    const reason = this._draining;
    this._timers.drain = null;
    this._draining = null;
    if (reason === 'reboot') return this._resync(); // the device did not drop the connection itself
    if (reason === 'overflow') return this._resync(); // the over-long line never ended
    if (this._owed && this.afterTimeout === 'drain' && this._framer.bufferedBytes === 0 && !this._framer.discarding) {
      this._owed = false; // trust the window (rule 3, 'drain'); watch the next reply
      this._suspect = true;
    }
    this._dispatch(); // with a reply still owed: reconnects first if a request waits, else on the next one
  }

  _resync () {
    if (!this._socket || !this._connected) return;
    this._stats.resyncs++;
    this._expectClose = 'resync';
    this._state = 'reconnecting';
    this._socket.destroy();
  }

  // ---- connection ----

  _where () { return `${this.target.host}:${this.target.port}`; }

  _closedError (command) {
    return new NinesError('NINES_ERR_CLOSED', `${command}: the client for ${this._where()} is closed`, { command, target: this.target.url });
  }

  _open () {
    this._timers.reconnect = null;
    if (this._state === 'closed') return;
    const gen = ++this._gen;
    this._state = this._state === 'idle' ? 'connecting' : 'reconnecting';
    this._connected = false;
    let failure = null;
    const socket = net.connect({ host: this.target.host, port: this.target.port });
    this._socket = socket;
    socket.setNoDelay(true);
    socket.setKeepAlive(true);
    this._timers.connect = setTimeout(() => {
      failure = new NinesError('NINES_ERR_CONNECT_TIMEOUT', `connect to ${this._where()} timed out after ${this.connectTimeoutMs} ms`,
        { target: this.target.url, connectTimeoutMs: this.connectTimeoutMs });
      socket.destroy();
    }, this.connectTimeoutMs);
    socket.once('connect', () => { if (gen === this._gen) this._onConnect(); });
    socket.on('data', (chunk) => { if (gen === this._gen) this._onData(chunk); });
    socket.on('end', () => {
      // The peer closed: stop writing now, the close handler follows
      if (gen === this._gen && this._state === 'connected') this._state = 'reconnecting';
      socket.destroy();
    });
    socket.on('error', (err) => { if (!failure) failure = err; });
    socket.on('close', () => { if (gen === this._gen) this._onSocketClose(failure); });
  }

  _onConnect () {
    clearTimeout(this._timers.connect);
    this._timers.connect = null;
    this._connected = true;
    this._state = 'connected';
    this._owed = false;
    this._framer.reset();
    this._backoff.reset();
    this._stats.connects++;
    for (const w of this._waiters.splice(0)) w.resolve();
    this._dispatch(); // queued requests first, then listeners
    this.emit('connect');
  }

  _onSocketClose (failure) {
    clearTimeout(this._timers.connect);
    this._timers.connect = null;
    this._socket = null;
    const wasConnected = this._connected;
    this._connected = false;
    if (!wasConnected) return this._onConnectFailed(failure);
    const expected = this._expectClose;
    this._expectClose = null;
    if (this._state !== 'closed') this._state = 'reconnecting'; // no writes while listeners run
    this._owed = false;
    this._suspect = false;
    if (this._draining !== null) this._endDrain();
    this._stats.drops++;
    const cause = failure && failure.code ? failure.code : undefined;
    const dropErr = expected ? undefined
      : new NinesError('NINES_ERR_CONNECTION_CLOSED', `connection to ${this._where()} closed${cause ? ' (' + cause + ')' : ''}`, { cause, target: this.target.url });
    const req = this._inflight;
    this._inflight = null;
    if (req) {
      const err = new NinesError('NINES_ERR_CONNECTION_CLOSED', `connection to ${this._where()} closed while ${req.command} was waiting for its reply${cause ? ' (' + cause + ')' : ''}`,
        { command: req.command, cause, target: this.target.url });
      err.doneNs = process.hrtime.bigint();
      this._fail(req, err);
    }
    this.emit('close', dropErr);
    if (dropErr && this.listenerCount('error')) this.emit('error', dropErr);
    if (this._state === 'closed') return; // a listener closed us
    if (expected === 'resync') return this._open(); // at once: the device is there, only the line was doubtful
    this._retryOrGiveUp(dropErr || new NinesError('NINES_ERR_CONNECTION_CLOSED', `connection to ${this._where()} closed by the device`, { target: this.target.url }));
  }

  _onConnectFailed (failure) {
    const err = failure instanceof NinesError ? failure
      : new NinesError('NINES_ERR_CONNECT_FAILED', `connect to ${this._where()} failed${failure && failure.code ? ' (' + failure.code + ')' : ''}`,
        { cause: failure && failure.code ? failure.code : undefined, target: this.target.url });
    this._stats.connectFailures++;
    for (const w of this._waiters.splice(0)) w.reject(err);
    if (this.listenerCount('error')) this.emit('error', err);
    if (this._state === 'closed') return;
    this._retryOrGiveUp(err);
  }

  _retryOrGiveUp (err) {
    if (this.reconnect) {
      const delayMs = this._backoff.next();
      this._state = 'reconnecting';
      this._stats.reconnects++;
      this._timers.reconnect = setTimeout(this._openBound, delayMs);
      this.emit('reconnecting', { attempt: this._backoff.attempt, delayMs });
      return;
    }
    // Nobody will reconnect: waiting requests fail now; a later request() connects on demand
    this._state = 'idle';
    this._failQueued((req) => new NinesError('NINES_ERR_NOT_CONNECTED', `${req.command} not sent: not connected to ${this._where()} (${err.message})`,
      { command: req.command, cause: (err.details && err.details.cause) || err.code, target: this.target.url }));
  }

  _clearTimers () {
    for (const k of Object.keys(this._timers)) {
      clearTimeout(this._timers[k]);
      this._timers[k] = null;
    }
  }
}

module.exports = { AsciiClient };
