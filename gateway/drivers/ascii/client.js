'use strict';

/**
 * AsciiClient: the driver contract (design.md) over TCP for Brainboxes ED / DCON devices. The
 * lifecycle (states, connect() waiters, reconnect with backoff, the bounded queue, deadlines,
 * counters, events) is the shared Connection (../connection.js); the socket is tcp-transport.js.
 * This file holds the protocol rules below.
 *
 * One request on the wire at a time [HW: the device is strictly request/response]; others wait in
 * a FIFO of at most queueMax. Each request times out timeoutMs after request() was called.
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
 *     request was on the wire and the device answers each command once, at most one reply is
 *     owed: when a line that parses as an answer to the timed-out command arrives (during the
 *     drain or later, while nothing is in flight), the line is clean again and the queue resumes
 *     at once. Any other line leaves the reply owed.
 *  3. If the drain ends in silence we cannot tell "silent by design" from "slow": a reply could
 *     still come. So the client closes the connection and opens a new one before it writes the
 *     next command (at once if one waits; stats.resyncs). A reply to the old connection can never
 *     reach the new one, so no late reply is ever matched, whatever its timing. The cost is one
 *     TCP connect per unanswered timeout.
 *     There is deliberately no mode that keeps the connection instead (an `afterTimeout: 'drain'`
 *     option once did, issue 12): on the same connection a reply later than timeout + drainMs is
 *     taken by the next command, and no check can catch it, because a DCON reply names neither
 *     its command nor, for `@AA`, its address (`>00FF` answers every `@AA`). A quiet period as on
 *     Modbus RTU would only move the limit; the reconnect removes it.
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

const { NinesError } = require('../../base/errors');
const { parseTarget } = require('../target');
const { Connection, NS_PER_MS } = require('../connection');
const { AsciiFramer } = require('./framer');
const { encodeCommand, classifyCommand } = require('./command');
const { parseReply } = require('./reply');
const { normalizeOptions } = require('./client-options');
const { timeoutArg } = require('../connection-options');
const { TcpTransport } = require('./tcp-transport');

const hrtime = process.hrtime.bigint;

/** One request; a class so every instance has the same shape. */
class Pending {
  constructor (command, kind, buf, timeoutMs) {
    this.command = command;
    this.kind = kind;
    this.buf = buf;
    this.expectsReply = kind !== 'broadcast' && kind !== 'reboot';
    this.timeoutMs = timeoutMs;
    /** @type {bigint} when it times out (hrtime ns) */
    this.deadline = 0n;
    /** @type {bigint} hrtime ns just before the write; 0n until written */
    this.sentNs = 0n;
    this.resolve = null;
    this.reject = null;
  }

  /** @returns {string} the command, for error messages */
  describe () {
    return this.command;
  }
}

/**
 * ASCII (DCON) client.
 * Events: 'connect'; 'close' (err|undefined) when an open connection ends (undefined for a resync or
 * a reboot); 'reconnecting' ({attempt, delayMs}); 'error' (err), emitted only when someone listens.
 */
class AsciiClient extends Connection {
  /**
   * @param {string|import('../target').Target} target e.g. 'ascii://127.0.0.1:9500?address=01&checksum=on'
   * @param {object} [opts] timeoutMs=1000, connectTimeoutMs=5000, queueMax=64, reconnect=true,
   *   backoff={initialMs:100, maxMs:10000}, random=Math.random, drainMs=constants.ASCII_DRAIN_MS
   *   (how long to wait for the reply to a timed-out command before reconnecting), interFrameDelayMs=0,
   *   delayAfterConnectMs=0 (line quirks, ../connection.js); durations in ms or strings like "1s"
   * @throws {NinesError} NINES_ERR_INVALID_TARGET, NINES_ERR_INVALID_ARG
   */
  constructor (target, opts) {
    const t = parseTarget(target);
    if (t.protocol !== 'ascii') {
      throw new NinesError('NINES_ERR_INVALID_TARGET', `AsciiClient needs an ascii:// target; got ${t.url}`, { target: t.url });
    }
    const o = normalizeOptions(opts);
    super(t, o, { resyncs: 0 });
    /** @type {string} default device address of the target (two hex digits) */
    this.address = t.address;
    /** @type {boolean} checksum mode: appended to commands, verified on replies */
    this.checksum = t.checksum;
    /** @type {number} ms to wait for a late reply after a timeout (rule 2) */
    this.drainMs = o.drainMs;
    this._transport = new TcpTransport(t, this);
    /** @type {null|'timeout'|'reboot'|'overflow'} why nothing may be written now */
    this._draining = null;
    this._drainTimer = null;
    /** @type {Pending|null} the timed-out request whose reply may still come on this connection (rules 2, 3) */
    this._owed = null;
    this._inData = false;
    this._memo = null;
    this._framer = new AsciiFramer({ onLine: (line) => this._onLine(line), onOverflow: () => this._onOverflow() });
    this._onDrainEndBound = this._onDrainEnd.bind(this);
  }

  /**
   * Counters (plain object, a copy): the shared ones (../connection.js: requests, ok, errors,
   * timeouts, … lateReplies are lines with no request to answer), resyncs (reconnects after an
   * unanswered timeout), discardedBytes / discardedFrames (over-long or unfinished lines),
   * ignoredLf, emptyLines, and the gauges queued and inFlight.
   * @returns {Record<string, number>}
   */
  get stats () {
    const s = super.stats;
    const f = this._framer;
    s.discardedBytes = f.discardedBytes;
    s.discardedFrames = f.discardedFrames;
    s.ignoredLf = f.ignoredLf;
    s.emptyLines = f.emptyLines;
    return s;
  }

  /**
   * Sends one command and waits for its reply.
   * @param {string|{command: string, unchecked?: boolean}} op the command without checksum and CR;
   *   `unchecked: true` skips the prefix/address/case rules (framing rules still apply)
   * @param {{timeoutMs?: number|string}} [opts] overrides the client's timeoutMs
   * @returns {Promise<import('./reply').Reply & {sentNs: bigint, doneNs: bigint, noReply?: true}>}
   */
  request (op, opts) {
    const custom = opts !== undefined && opts !== null && opts.timeoutMs !== undefined;
    let req;
    try {
      req = this._makePending(op, custom ? timeoutArg(opts.timeoutMs, 'timeoutMs') : this._timeoutMs);
    } catch (err) {
      this._stats.invalid++;
      return Promise.reject(err);
    }
    const timeoutNs = custom ? BigInt(req.timeoutMs) * NS_PER_MS : this._timeoutNs;
    const p = new Promise((resolve, reject) => { req.resolve = resolve; req.reject = reject; });
    const free = this._state === 'connected' && this._inflight === null && this._draining === null &&
      this._owed === null && this._queue.length === 0 && !this._inData && !this._framer.discarding &&
      (this._ifdMs === 0 || this._rested());
    if (this._refused(req, free)) return p;
    if (free) {
      this._write(req);
      if (!req.expectsReply) return p; // settled by the write
      req.deadline = req.sentNs + timeoutNs;
    } else {
      req.deadline = hrtime() + timeoutNs;
      this._queue.push(req);
      if (this._state === 'idle') this._startConnect();
      else this._pump(); // resyncs first when a timed-out request may still be answered
    }
    this._watch(req.deadline);
    return p;
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
    req.sentNs = hrtime();
    this._transport.send(req.buf);
    if (!req.expectsReply) this._finishNoReply(req);
  }

  _finishNoReply (req) {
    const doneNs = hrtime();
    this._inflight = null;
    if (this._ifdMs !== 0) this._rest();
    this._stats.ok++;
    req.resolve({ ok: true, noReply: true, command: req.command, kind: req.kind, sentNs: req.sentNs, doneNs });
    if (req.kind === 'reboot') { // the device drops the connection [DOC]; hold the queue until it does
      this._expectedDrop = 'expected';
      this._startDrain('reboot', req.timeoutMs);
    }
  }

  /** Writes the next queued command when the line may be used (rules 1, 3, 5). */
  _pump () {
    if (this._inflight !== null || this._draining !== null || this._inData || this._state !== 'connected') return;
    if (this._owed !== null) { // rule 3: a reply may still come on this connection; use a fresh one
      if (this._queue.length !== 0) this._resync();
      return;
    }
    if (this._framer.discarding) { // rule 5: wait for the over-long line's CR
      if (this._queue.length !== 0) this._startDrain('overflow', this.drainMs);
      return;
    }
    while (this._queue.length !== 0 && this._inflight === null && this._draining === null && this._state === 'connected' &&
      (this._ifdMs === 0 || this._rested())) {
      this._write(this._queue.shift());
    }
  }

  // ---- received data ----

  /** Transport: bytes received. @param {Buffer} chunk */
  _onData (chunk) {
    this._inData = true;
    try {
      this._framer.push(chunk);
    } finally {
      this._inData = false;
    }
    if (this._draining === 'overflow' && !this._framer.discarding) this._endDrain();
    this._pump();
  }

  /** Transport: the device closed its side; stop writing now, the drop follows. */
  _onPeerEnd () {
    if (this._state === 'connected') this._state = 'reconnecting';
  }

  _onLine (line) {
    const req = this._inflight;
    if (req === null) return this._onLate(line);
    const doneNs = hrtime();
    this._inflight = null;
    if (this._ifdMs !== 0) this._rest();
    let reply;
    try {
      reply = parseReply(line, { command: req.command, kind: req.kind, checksum: this.checksum });
    } catch (err) {
      err.doneNs = doneNs;
      // "?" or a bare "!" is the device answering: the link is fine
      if (err.code === 'NINES_ERR_DEVICE_INVALID' || err.code === 'NINES_ERR_DEVICE_IGNORED') this._answered();
      return this._fail(req, err);
    }
    reply.sentNs = req.sentNs;
    reply.doneNs = doneNs;
    this._stats.ok++;
    this._answered();
    req.resolve(reply);
  }

  _onOverflow () {
    const req = this._inflight;
    if (req === null) return this._onLate(null);
    this._inflight = null;
    if (this._ifdMs !== 0) this._rest();
    const err = new NinesError('NINES_ERR_FRAME_TOO_LONG',
      `reply to ${req.command} is longer than ${this._framer.maxLineBytes} bytes; discarded up to its CR`,
      { command: req.command, maxLineBytes: this._framer.maxLineBytes, target: this._target.url });
    err.doneNs = hrtime();
    this._fail(req, err);
  }

  /** A line (null: an over-long one) with no request to answer. @param {string|null} line */
  _onLate (line) {
    this._stats.lateReplies++;
    const owed = this._owed;
    if (owed === null || line === null || !this._answers(line, owed)) return;
    // The one reply owed by the timed-out request has come: the line is clean again (rule 2). Only
    // one command was on the wire, and the device answers each command once [HW]
    this._owed = null;
    if (this._draining === 'timeout') this._endDrain();
  }

  /** @param {string} line @param {Pending} req @returns {boolean} the line parses as a reply to req */
  _answers (line, req) {
    try {
      parseReply(line, { command: req.command, kind: req.kind, checksum: this.checksum });
      return true;
    } catch (err) {
      // "?AA" and a bare "!" are the device answering req too (invalid parameter, watchdog)
      return err.code === 'NINES_ERR_DEVICE_INVALID' || err.code === 'NINES_ERR_DEVICE_IGNORED';
    }
  }

  // ---- drain after a timeout, hold after a reboot ----

  _startDrain (reason, ms) {
    this._draining = reason;
    this._drainTimer = setTimeout(this._onDrainEndBound, ms);
  }

  _endDrain () {
    clearTimeout(this._drainTimer);
    this._drainTimer = null;
    this._draining = null;
  }

  _onDrainEnd () {
    const reason = this._draining;
    this._drainTimer = null;
    this._draining = null;
    if (reason === 'reboot') return this._resync(); // the device did not drop the connection itself
    if (reason === 'overflow') return this._resync(); // the over-long line never ended
    this._pump(); // with a reply still owed: reconnects first if a request waits, else on the next one
  }

  /** Replaces a doubtful connection with a fresh one, at once (rules 3, 4, 5). */
  _resync () {
    if (this._reopen()) this._stats.resyncs++;
  }

  // ---- hooks of Connection ----

  _onUp () {
    this._owed = null;
    this._framer.reset();
  }

  _onDrop () {
    this._owed = null;
    if (this._draining !== null) this._endDrain();
  }

  _onClosing () {
    if (this._draining !== null) this._endDrain();
  }

  /** Rule 2: the reply may still come; drain before anything else is written. @param {Pending} req */
  _afterTimeout (req) {
    this._owed = req;
    this._startDrain('timeout', this.drainMs);
  }

  // ---- the words of the errors ----

  _where () { return `${this._target.host}:${this._target.port}`; }

  _timeoutError (req) {
    const err = new NinesError('NINES_ERR_REPLY_TIMEOUT',
      `no reply to ${req.command} within ${req.timeoutMs} ms (the device is silent on unknown commands, wrong addresses and bad checksums)`,
      { command: req.command, timeoutMs: req.timeoutMs, written: true, target: this._target.url });
    err.doneNs = hrtime();
    return err;
  }

  _queuedTimeoutError (req) {
    return new NinesError('NINES_ERR_REPLY_TIMEOUT', `${req.command} timed out after ${req.timeoutMs} ms while still queued`,
      { command: req.command, timeoutMs: req.timeoutMs, written: false, state: this._state, target: this._target.url });
  }

  _queueFullError (req) {
    return new NinesError('NINES_ERR_QUEUE_FULL',
      `${req.command} not sent: ${this._queue.length} requests already wait (queueMax ${this._queueMax})`,
      { command: req.command, queueMax: this._queueMax, target: this._target.url });
  }

  _lostError (req, err) {
    const cause = err.details.cause;
    const lost = new NinesError('NINES_ERR_CONNECTION_CLOSED',
      `connection to ${this._where()} closed while ${req.command} was waiting for its reply${cause ? ' (' + cause + ')' : ''}`,
      { command: req.command, cause, target: this._target.url });
    lost.doneNs = hrtime();
    return lost;
  }

  /** @param {Pending} req @param {NinesError|null} cause null: its deadline passed while disconnected */
  _notConnected (req, cause) {
    if (cause === null) {
      return new NinesError('NINES_ERR_NOT_CONNECTED', `${req.command} not sent within ${req.timeoutMs} ms: not connected to ${this._where()} (${this._state})`,
        { command: req.command, timeoutMs: req.timeoutMs, written: false, state: this._state, target: this._target.url });
    }
    return new NinesError('NINES_ERR_NOT_CONNECTED', `${req.command} not sent: not connected to ${this._where()} (${cause.message})`,
      { command: req.command, cause: (cause.details && cause.details.cause) || cause.code, target: this._target.url });
  }

  _closedError (command = 'connect()') {
    return new NinesError('NINES_ERR_CLOSED', `${command}: the client for ${this._where()} is closed`, { command, target: this._target.url });
  }
}

module.exports = { AsciiClient };
