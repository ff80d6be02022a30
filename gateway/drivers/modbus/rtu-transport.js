'use strict';

/**
 * Modbus RTU transport over a serial port (serialport, loaded lazily: TCP users never need the native
 * module). Same interface as tcp-transport.js (see its header), plus the RTU line discipline:
 *
 * - Frames end by length, not by silence: the expected response length is known from the request
 *   (frame.js rtuResponseLength rules), so a reply is complete the moment its last byte arrives, even
 *   through USB adapters that deliver bytes in bursts.
 * - There is no transaction id, so a reply is checked against the request in flight as far as Modbus
 *   allows: unit id, function code (or its exception code), the byte count of a read, and for a write
 *   the echoed address and value (FC5/6) or quantity (FC15/16). A frame that does not fit is late or
 *   foreign: it is read to its own end (its length follows from its function code and byte count)
 *   and, if its CRC holds, dropped exactly (stats.lateReplies), so a reply right behind it in the same
 *   burst is still read: USB adapters deliver bytes in bursts, and the t3.5 gap between two frames on
 *   the wire does not survive them. A foreign frame whose length cannot be known or whose CRC fails
 *   makes the reader skip input until the line has been quiet for t3.5. Either way the request in
 *   flight keeps waiting for its own reply.
 * - The t3.5 gap is enforced before every write: after the last byte received and after the end of
 *   our own last frame on the wire (users of other gateways report it ignored: mqmgateway #40).
 * - QUIET PERIOD. Those checks cannot tell two replies to reads of the same shape apart (a read reply
 *   names no address), so after a timeout the line is suspect: the timed-out request's reply may
 *   still come, and if it came while the next read of the same shape is in flight, it would be
 *   taken for that read's (issue 12: 63 of 2,540 replies, with a fixed 50 ms drain). So the next
 *   request is written only once the line has been quiet for quietMs (default: the timed-out
 *   request's own timeout, so a reply up to twice its timeout after the request is caught); every
 *   byte that arrives meanwhile restarts the period and is dropped as late. The period ends early
 *   when the owed reply itself arrives whole (a CRC-valid frame that fits the timed-out request):
 *   only one request was on the wire, and a device answers each request once, so the line is clean.
 *   A request that was in flight when the port closed is owed in the same way after it reopens: the
 *   line is held until its timeout plus the quiet period have passed since it was sent.
 *   What remains: a reply later than quietMs after the timeout, into a line that stayed silent all
 *   that time, cannot be told from the answer to a read of the same shape. Raise quietMs for a
 *   device that can be that late.
 *   With no timeout nothing changes: requests follow each other at t3.5.
 * - A request that waited behind a quiet period and has less than half of its timeout left when the
 *   line frees is failed (NINES_ERR_REPLY_TIMEOUT, not written; client.js): written so late, it would
 *   most likely time out on the wire and hold the line quiet again, and so on for every request.
 * - Unit 0 is broadcast: writes get no reply; the request resolves once written and the bus is left
 *   quiet for turnaroundMs.
 *
 * Seam for tests: opts.loadSerialPort() returns the SerialPort class (default require('serialport')).
 * A loader that throws makes every connect fail with NINES_ERR_SERIAL_UNAVAILABLE.
 */

const { NinesError } = require('../../base/errors');
const { rtuFrame, rtuCrcOk, crc16, rtuSilenceUs, rtuResponseLength, deviceIdReplyLength, hex4, DeviceIdWalk, FC43_HEADER, MAX_PDU_LENGTH } = require('./frame');
const { FCS, REPLY, echoLength, responsePduLength } = require('./function-codes');

const hrtime = process.hrtime.bigint;

/**
 * What confirms a quiet period over on a serial port (RtuTransport#_onConfirm): turns of the event
 * loop, and time for the thread pool's read to come back
 */
const SERIAL_CONFIRM = Object.freeze({ turns: 3, ns: 5000000n });
/**
 * The longest a confirmation waits for serialport's read in the thread pool to come back (below):
 * past it the port is taken as quiet. A read that took longer than this would be a port gone bad,
 * not a busy machine.
 */
const SERIAL_READ_WAIT_MAX_NS = 1000000000n;

/** What _need() answers for a frame that cannot be the reply to the request in flight */
const NOT_OURS = 0;

/** @returns {Function} the SerialPort class */
function defaultLoadSerialPort () {
  // Lazy on purpose: serialport is a native module that may be absent or fail to build
  return require('serialport').SerialPort;
}

class RtuTransport {
  /**
   * @param {{path: string, baudRate: number, parity: string, dataBits: number, stopBits: number, url: string}} target
   * @param {{silenceUs?: number, quietMs?: number, turnaroundMs: number, loadSerialPort?: () => Function}} opts
   * @param {object} sink the client
   * @param {{lateReplies: number, badFrames: number}} stats counters of the client, updated in place
   */
  constructor (target, opts, sink, stats) {
    this._target = target;
    this._sink = sink;
    this._stats = stats;
    this._load = opts.loadSerialPort || defaultLoadSerialPort;
    const timing = this._lineTiming(target, opts);
    // t3.5: the silence kept before every write, after the last byte received and our own last frame
    this._silenceNs = BigInt(timing.silenceUs) * 1000n;
    // How long one character occupies the wire (0: unknown), so the end of our own frame is known
    this._charNs = BigInt(timing.charNs);
    // The quiet period after a timeout; -1n: the timed-out request's own timeout
    this._quietNs = opts.quietMs === undefined ? -1n : BigInt(opts.quietMs) * 1000000n;
    this._turnaroundNs = BigInt(opts.turnaroundMs) * 1000000n;
    this._port = null;
    this._up = false;
    this._closeCb = null;
    /** @type {(() => void)|null} ends the connection attempt in progress */
    this._abortOpen = null;
    /** @type {any} */
    this._p = null;
    this._rx = Buffer.allocUnsafe(256);
    this._rxLen = 0;
    /** The walk of an FC43 frame's objects in _rx, resumed as its bytes come (started again per frame) */
    this._walk = new DeviceIdWalk();
    // Discarding input until the line has been quiet for t3.5
    this._skipping = false;
    // Collecting a frame that does not answer the request in flight, by its own length
    this._foreign = false;
    /** Length of the frame _readFramed() has just read whole and intact, in _rx; 0: none */
    this._frameLen = 0;
    this._lastRxNs = 0n;
    // Earliest time the next request may be written
    this._lineFreeAt = 0n;
    /** @type {any} a timed-out request whose reply may still come: the line is held quiet until it does */
    this._owed = null;
    // The quiet period for _owed (ns): every byte received restarts it
    this._owedQuietNs = 0n;
    // The line was held quiet after a timeout and nothing has been written since
    this._held = false;
    // The quiet period for _owed has passed by the clock AND what arrived before its end has been read (ready())
    this._confirmed = false;
    // When the clock first said so (0n: not yet), and the turns of the event loop since
    this._confirmFrom = 0n;
    this._confirmTurns = 0;
    /** @type {NodeJS.Immediate|null} the check that a poll phase has run, pending */
    this._confirming = null;
    this._wakeTimer = null;
    this._wakeAt = 0n;
    this._txOp = null;
    this._txUnit = -1;
    this._txBuf = null;
    this._onData = this._onData.bind(this);
    this._wake = this._wake.bind(this);
    this._onConfirm = this._onConfirm.bind(this);
  }

  /** @param {number} connectTimeoutMs @param {(err: NinesError|null) => void} cb */
  open (connectTimeoutMs, cb) {
    const t = this._target;
    let SerialPort;
    try {
      SerialPort = this._load();
      if (typeof SerialPort !== 'function') throw new Error('the loader did not return a SerialPort class');
    } catch (err) {
      cb(new NinesError('NINES_ERR_SERIAL_UNAVAILABLE', `serial support is unavailable for ${t.path}: ${err.message}; install the serialport package`,
        { target: t.url, cause: err.code || err.message }));
      return;
    }
    let port;
    try {
      port = new SerialPort({ path: t.path, baudRate: t.baudRate, parity: t.parity, dataBits: t.dataBits, stopBits: t.stopBits, autoOpen: false });
    } catch (err) {
      cb(new NinesError('NINES_ERR_CONNECT_FAILED', `cannot open serial port ${t.path}: ${err.message}`, { target: t.url, cause: err.message }));
      return;
    }
    this._port = port;
    let settled = false;
    // Ends the attempt once: on open, on error, on timeout, or when close() aborts it
    const settle = (err) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      this._abortOpen = null;
      if (err && this._port === port) this._port = null;
      cb(err);
    };
    const timer = setTimeout(() => settle(new NinesError('NINES_ERR_CONNECT_TIMEOUT',
      `opening serial port ${t.path} timed out after ${connectTimeoutMs} ms`, { target: t.url, connectTimeoutMs })), connectTimeoutMs);
    this._abortOpen = () => settle(new NinesError('NINES_ERR_CONNECT_FAILED', `opening ${t.path} was aborted`, { target: t.url }));
    let lastError = null;
    // Without a listener a port error would crash the process; errors surface through open/close
    port.on('error', (err) => { lastError = err; });
    port.on('close', (err) => {
      const wasUp = this._portClosed(port);
      const done = this._closeCb;
      this._closeCb = null;
      if (done) done();
      else if (wasUp) {
        const cause = (err && err.message) || (lastError && lastError.message) || 'closed';
        this._sink._onDown(new NinesError('NINES_ERR_CONNECTION_CLOSED', `serial port ${t.path} closed: ${cause}`,
          { target: t.url, cause, disconnected: !!(err && err.disconnected) }));
      }
    });
    port.open((err) => {
      if (settled) {
        // Timed out or aborted meanwhile: give the port back
        if (!err) port.close(() => {});
        return;
      }
      if (err) {
        settle(new NinesError('NINES_ERR_CONNECT_FAILED', `cannot open serial port ${t.path}: ${err.message}`, { target: t.url, cause: err.code || err.message }));
        return;
      }
      this._portOpened(port);
      settle(null);
    });
  }

  /**
   * The line's timing, from the serial settings: t3.5 (or opts.silenceUs) and the time of one character.
   * @param {{baudRate: number, parity: string, dataBits: number, stopBits: number}} target
   * @param {{silenceUs?: number}} opts
   * @returns {{silenceUs: number, charNs: number}}
   */
  _lineTiming (target, opts) {
    const bitsPerChar = 1 + target.dataBits + (target.parity === 'none' ? 0 : 1) + target.stopBits;
    return {
      silenceUs: opts.silenceUs !== undefined ? opts.silenceUs : rtuSilenceUs(target.baudRate, bitsPerChar),
      charNs: Math.ceil(bitsPerChar * 1e9 / target.baudRate)
    };
  }

  /**
   * The port (or socket) just opened: read from it, with the receiver's state fresh.
   * @param {{on: Function}} port
   */
  _portOpened (port) {
    this._up = true;
    this._p = null;
    this._rxLen = 0;
    this._skipping = false;
    this._foreign = false;
    // Whatever was on the line before we opened it must end before we speak, and a reply still
    // owed from before a drop keeps the line held (_owe)
    const free = hrtime() + this._silenceNs;
    if (free > this._lineFreeAt) this._lineFreeAt = free;
    port.on('data', this._onData);
  }

  /**
   * A port (or socket) closed; forgets it when it is the current one.
   * @param {object} port
   * @returns {boolean} it was the current port, and open: the sink must hear of the drop
   */
  _portClosed (port) {
    const wasUp = this._up && this._port === port;
    if (this._port === port) {
      // The request in flight may still be answered on the same wire once the port is back: its
      // reply may come until its timeout, and late for a quiet period after that
      const p = this._p;
      if (p !== null) this._owe(p, p.sentNs + BigInt(p.timeoutMs) * 1000000n);
      this._port = null;
      this._up = false;
      this._p = null;
    }
    return wasUp;
  }

  /**
   * Calls cb once the written bytes have left (a broadcast gets no reply: it is done when sent).
   * @param {{drain: (cb: () => void) => void}} port
   * @param {() => void} cb
   */
  _drained (port, cb) {
    port.drain(cb);
  }

  /** @returns {boolean} the line was held quiet after a timeout and nothing has been written since */
  get held () { return this._held; }

  /**
   * True when a request can be written now; otherwise arranges for sink._pump() when the line is free.
   * @returns {boolean}
   */
  ready () {
    if (!this._up) return false;
    const now = hrtime();
    if (now < this._lineFreeAt) {
      this._armWake(this._lineFreeAt, now);
      return false;
    }
    // After a timeout the period has passed by the clock; but if this thread was busy meanwhile, the
    // owed reply may have come in time and wait unread, and a write now (from a timer: this wake-up,
    // a scheduler's) would go before it is read, and the reply would be taken for the new request's
    // (issue 18: 1 % of values on a serial line under load). So the write waits until what arrived
    // before the period's end has been read (_onConfirm).
    if (this._owed !== null && !this._confirmed) {
      if (this._confirming === null) {
        this._confirmFrom = now;
        this._confirmTurns = 0;
        this._confirming = setImmediate(this._onConfirm);
      }
      return false;
    }
    return true;
  }

  /**
   * Runs after a poll phase (setImmediate) while the quiet period is being confirmed. A socket's
   * bytes are read in the poll phase itself, so one turn suffices; a serial port's reach us later:
   * serialport reads through the libuv thread pool (fs.read once the fd polls readable), so its
   * bytes come a poll phase or two after they arrived, and later when that pool is busy. So a port
   * waits SERIAL_CONFIRM (turns and ms), and for its read in the pool to come back (_readInFlight).
   */
  _onConfirm () {
    this._confirming = null;
    if (this._owed === null || hrtime() < this._lineFreeAt) {
      // the owed reply came, or bytes restarted the period: ready() decides afresh
      this._sink._pump();
      return;
    }
    this._confirmTurns++;
    const { turns, ns } = this._confirmNeeds();
    const waited = hrtime() - this._confirmFrom;
    if (this._confirmTurns < turns || waited < ns || (this._readInFlight() && waited < SERIAL_READ_WAIT_MAX_NS)) {
      this._confirming = setImmediate(this._onConfirm);
      return;
    }
    this._confirmed = true;
    this._sink._pump();
  }

  /** @returns {{turns: number, ns: bigint}} what confirms a quiet period on a serial port (above) */
  _confirmNeeds () {
    return SERIAL_CONFIRM;
  }

  /**
   * True while serialport's binding has a read of its own in the thread pool: bytes the kernel held
   * before now may be on their way to us. Its binding (@serialport/bindings-cpp, unix-read.js) waits
   * for the port to poll readable (a 'readable' listener on binding.poller, served in this thread's
   * poll phase) and only then reads in the pool. Parked on the poller, after a poll phase: nothing had
   * arrived. Not parked: a read is under way, and on a busy machine the pool's thread can take a
   * hundred milliseconds to run it, so a write now could go before an owed reply that came in time
   * (test/modbus/client-rtu-pool.test.js keeps the pool busy across the period's end and shows it). A
   * binding without a poller (another platform, a stand-in) gives no such sign: turns and time only.
   * @returns {boolean}
   */
  _readInFlight () {
    const binding = this._port !== null ? this._port.port : undefined;
    const poller = binding !== undefined && binding !== null ? binding.poller : undefined;
    if (poller === undefined || poller === null || typeof poller.listenerCount !== 'function') return false;
    return binding.isOpen === true && poller.listenerCount('readable') === 0;
  }

  /** @param {{op: any, pdu: Buffer, unitId: number, sentNs: bigint}} p */
  send (p) {
    let frame = this._txBuf;
    if (p.op !== this._txOp || p.unitId !== this._txUnit) {
      frame = this._txBuf = rtuFrame(p.unitId, p.pdu);
      this._txOp = p.op;
      this._txUnit = p.unitId;
    }
    this._rxLen = 0;
    this._skipping = false;
    this._foreign = false;
    // The line was quiet long enough (or the owed reply came): whatever the old request owed is given up
    this._owed = null;
    this._held = false;
    this._confirmed = false;
    const broadcast = p.unitId === 0;
    this._p = broadcast ? null : p;
    const port = this._port;
    const sentNs = p.sentNs = hrtime();
    // The frame (and for a broadcast the turnaround delay) occupies the line before anyone may speak again
    const onWire = sentNs + BigInt(frame.length) * this._charNs;
    this._lineFreeAt = onWire + (broadcast ? this._turnaroundNs : this._silenceNs);
    port.write(frame);
    if (broadcast) this._drained(port, () => this._sink._onNoReply(p));
  }

  /**
   * The request in flight timed out: its reply may still come, so hold the line quiet (file header).
   * @param {{unitId: number, op: any, pdu: Buffer, timeoutMs: number}} p
   */
  abort (p) {
    if (this._p === p) this._p = null;
    this._rxLen = 0;
    this._skipping = false;
    this._foreign = false;
    this._owe(p, hrtime());
  }

  /**
   * Holds the line quiet for p's late reply: for the quiet period from `from`.
   * @param {{timeoutMs: number}} p
   * @param {bigint} from hrtime ns when p's reply was due (its timeout)
   */
  _owe (p, from) {
    // A request that waited in the client's queue was written with less than its timeout left, but
    // its reply is due no sooner for that: the line is held for its whole timeout after the write,
    // then for the quiet period. So a reply within timeout + quiet of its request's write is never
    // taken for another's (issue 18)
    const timeoutNs = BigInt(p.timeoutMs) * 1000000n;
    let quiet = this._quietNs >= 0n ? this._quietNs : timeoutNs;
    if (quiet < this._silenceNs) quiet = this._silenceNs;
    this._owed = p;
    this._owedQuietNs = quiet;
    this._held = true;
    this._confirmed = false;
    let until = from + quiet;
    if (p.sentNs !== 0n && p.sentNs + timeoutNs + quiet > until) until = p.sentNs + timeoutNs + quiet;
    if (until > this._lineFreeAt) this._lineFreeAt = until;
  }

  /**
   * @returns {number} ms from now until the line may be written again (0 when it may be now): after a
   *   timeout, how long it is held for the late reply
   */
  heldForMs () {
    const left = this._lineFreeAt - hrtime();
    return left > 0n ? Math.ceil(Number(left) / 1e6) : 0;
  }

  /** @param {() => void} cb called when the port is closed */
  close (cb) {
    this._p = null;
    if (this._wakeTimer) { clearTimeout(this._wakeTimer); this._wakeTimer = null; }
    if (this._confirming !== null) { clearImmediate(this._confirming); this._confirming = null; }
    // A port still opening is closed by its open callback, whenever that comes
    if (this._abortOpen) this._abortOpen();
    const port = this._port;
    if (!port || !port.isOpen) { this._port = null; cb(); return; }
    this._closeCb = cb;
    port.close(() => {});
  }

  /** @param {bigint} at @param {bigint} now */
  _armWake (at, now) {
    if (this._wakeTimer !== null && this._wakeAt <= at) return;
    if (this._wakeTimer !== null) clearTimeout(this._wakeTimer);
    this._wakeAt = at;
    const ms = Math.max(1, Math.ceil(Number(at - now) / 1e6));
    this._wakeTimer = setTimeout(this._wake, ms);
  }

  _wake () {
    this._wakeTimer = null;
    this._sink._pump();
  }

  /** @param {Buffer} chunk */
  _onData (chunk) {
    const now = hrtime();
    const quietBefore = now - this._lastRxNs >= this._silenceNs;
    this._lastRxNs = now;
    // Whatever arrives keeps the line busy: the next write waits for t3.5 of silence after it
    const free = now + this._silenceNs;
    if (free > this._lineFreeAt) this._lineFreeAt = free;
    if (this._p !== null) this._readReply(chunk, quietBefore);
    else if (this._owed !== null) this._readOwed(chunk, now, quietBefore);
    else if (quietBefore) this._stats.lateReplies++; // nothing asked or owed: noise, or a reply later than any quiet period; count each burst once
  }

  /**
   * Bytes while a request is in flight: its reply, or late and foreign frames to skip.
   * @param {Buffer} chunk
   * @param {boolean} quietBefore the line was quiet for t3.5 before this chunk
   */
  _readReply (chunk, quietBefore) {
    if (this._skipped(quietBefore)) return;
    const rx = this._rx;
    const n = chunk.length;
    let off = 0;
    while (off < n) {
      if (this._foreign) {
        // a frame that is not ours: read it by its own length, then drop exactly it
        off = this._readFramed(chunk, off);
        if (off >= 0 && this._frameLen === 0) continue;
        this._stats.lateReplies++;
        this._foreign = false;
        if (off < 0) return;
        continue;
      }
      const need = this._need();
      if (need === NOT_OURS) {
        this._foreign = true;
        continue;
      }
      // read up to the frame's end, or up to where its length can be told more closely
      const take = Math.min((need < 0 ? -need : need) - this._rxLen, n - off);
      chunk.copy(rx, this._rxLen, off, off + take);
      this._rxLen += take;
      off += take;
      if (this._rxLen === need) {
        const echo = need === 5 ? 0 : echoLength(this._p.op);
        if (echo !== 0 && !echoes(rx, this._p.pdu, echo) && rtuCrcOk(rx.subarray(0, need))) {
          // An intact write reply that echoes another address or value: a late reply to an earlier
          // write, not ours. Drop it and keep reading: ours may be right behind it
          this._stats.lateReplies++;
          this._rxLen = 0;
          continue;
        }
        if (off < n) {
          // Bytes after a complete reply belong to nothing we asked
          this._stats.badFrames++;
          this._skipping = true;
        }
        this._complete(need);
        return;
      }
    }
  }

  /**
   * Bytes while nothing is in flight but a timed-out request's reply is owed: every byte restarts the
   * quiet period; a whole, intact frame that fits the owed request is its reply and ends the period.
   * @param {Buffer} chunk
   * @param {bigint} now hrtime ns of the chunk
   * @param {boolean} quietBefore the line was quiet for t3.5 before this chunk
   */
  _readOwed (chunk, now, quietBefore) {
    this._confirmed = false;
    const until = now + this._owedQuietNs;
    if (until > this._lineFreeAt) this._lineFreeAt = until;
    // Counted per burst, as on an idle line: the owed reply, noise, a foreign frame
    if (quietBefore) this._stats.lateReplies++;
    if (this._skipped(quietBefore)) return;
    const rx = this._rx;
    const n = chunk.length;
    let off = 0;
    while (off < n) {
      off = this._readFramed(chunk, off);
      // Not a reply we could read to its end, or a bad frame: skipped until t3.5 of silence (the period runs on)
      if (off < 0) return;
      if (this._frameLen !== 0 && fits(rx, this._frameLen, this._owed)) {
        // The owed reply: the line is clean again after t3.5 (bytes behind it in this chunk, if
        // any, arrived now too, so t3.5 covers them)
        this._owed = null;
        this._lineFreeAt = now + this._silenceNs;
        if (off < n) this._stats.badFrames++;
        // A request may be waiting for the end of the period: wake it at the new, earlier time
        this._armWake(this._lineFreeAt, now);
        return;
      }
    }
  }

  /**
   * Whether a chunk is skipped: after a frame that could not be read, input is discarded until t3.5
   * of silence, and what follows the silence starts a new frame.
   * @param {boolean} quietBefore the line was quiet for t3.5 before this chunk
   * @returns {boolean}
   */
  _skipped (quietBefore) {
    if (!this._skipping) return false;
    if (!quietBefore) return true;
    this._skipping = false;
    this._rxLen = 0;
    return false;
  }

  /**
   * Reads a frame that is not the reply in flight (a foreign or late frame, or a timed-out request's
   * owed reply) by its own length (rtuResponseLength), from chunk[off]: up to its end, or a byte at a
   * time while its length is not known yet. A frame that cannot be read to its end (unknown function
   * code, longer than the buffer), or whose CRC is bad (counted in badFrames), is skipped until t3.5
   * of silence.
   * @param {Buffer} chunk
   * @param {number} off
   * @returns {number} the offset in chunk after the bytes taken, this._frameLen then the length of the
   *   whole, intact frame in rx (0: not whole yet); -1: the rest of the chunk is skipped
   */
  _readFramed (chunk, off) {
    const rx = this._rx;
    if (this._rxLen < 1 + FC43_HEADER) this._walk.start(1, MAX_PDU_LENGTH);
    const len = this._rxLen >= 2 ? rtuResponseLength(rx, this._rxLen, this._walk) : 0;
    this._frameLen = 0;
    if (len < 0 || len > rx.length) {
      this._rxLen = 0;
      this._skipping = true;
      return -1;
    }
    // length not known yet: the next byte, or as far as an FC43 walk needs (its need stays 0 for other frames)
    const want = len === 0 ? Math.max(this._rxLen + 1, this._walk.need) : len;
    const take = Math.min(want - this._rxLen, chunk.length - off);
    chunk.copy(rx, this._rxLen, off, off + take);
    this._rxLen += take;
    if (len === 0 || this._rxLen < len) return off + take;
    this._rxLen = 0;
    if (!rtuCrcOk(rx.subarray(0, len))) {
      this._stats.badFrames++;
      this._skipping = true;
      return -1;
    }
    this._frameLen = len;
    return off + take;
  }

  /**
   * Bytes needed for the frame being received, given the bytes so far.
   * @returns {number} the whole frame's length once it is known; -n while it is not (a header of n
   *   bytes, or an FC43 reply's objects walked up to byte n): read up to n bytes and ask again;
   *   NOT_OURS when the frame cannot answer the request in flight
   */
  _need () {
    const rx = this._rx;
    const len = this._rxLen;
    const p = this._p;
    if (len < 1) return -1;
    if (rx[0] !== p.unitId) return NOT_OURS;
    if (len < 2) return -2;
    const fc = p.op.fc;
    if (rx[1] === (fc | 0x80)) return 5;
    if (rx[1] !== fc) return NOT_OURS;
    const t = FCS[fc];
    if (t.replyLength === REPLY.FIXED) return 3 + t.replyPdu;
    if (t.replyLength === REPLY.WALKED) {
      // a new frame passes here before its header is whole: its walk starts again
      if (len < 1 + FC43_HEADER) this._walk.start(1, MAX_PDU_LENGTH);
      const total = deviceIdReplyLength(rx, 1, len, this._walk);
      if (total < 0 || total > rx.length) return NOT_OURS;
      return total === 0 ? -this._walk.need : total;
    }
    if (len < 3) return -3;
    const bytes = responsePduLength(p.op) - 2;
    return rx[2] === bytes ? 5 + bytes : NOT_OURS;
  }

  /** @param {number} len complete frame length in rx */
  _complete (len) {
    const p = this._p;
    this._p = null;
    // Copy out: rx is reused, and the frame is handed to the caller as reply.raw
    const frame = Buffer.allocUnsafe(len);
    this._rx.copy(frame, 0, 0, len);
    this._rxLen = 0;
    if (!rtuCrcOk(frame)) {
      const crc = crc16(frame, 0, len - 2);
      const got = frame[len - 2] | (frame[len - 1] << 8);
      this._sink._onFrameError(p, new NinesError('NINES_ERR_BAD_CHECKSUM',
        `reply to ${p.describe()} has CRC ${hex4(got)}, expected ${hex4(crc)}`,
        { raw: frame.toString('hex'), crc: hex4(got), expectedCrc: hex4(crc), target: this._target.url }));
      return;
    }
    this._sink._onResponse(p, frame, 0, len, 1, len - 2);
  }
}

/**
 * An intact frame could be the reply to request p: same unit id, and its exception, or its function
 * code with the read's byte count or the write's echo.
 * @param {Buffer} rx the frame at rx[0, len)
 * @param {number} len
 * @param {{unitId: number, op: any, pdu: Buffer}} p
 * @returns {boolean}
 */
function fits (rx, len, p) {
  if (rx[0] !== p.unitId) return false;
  const fc = p.op.fc;
  if (rx[1] === (fc | 0x80)) return len === 5;
  if (rx[1] !== fc) return false;
  const t = FCS[fc];
  if (t.replyLength === REPLY.COUNTED) return len === 3 + responsePduLength(p.op);
  if (t.replyLength === REPLY.WALKED) return len === deviceIdReplyLength(rx, 1, len);
  return len === 3 + t.replyPdu && echoes(rx, p.pdu, echoLength(p.op));
}

/**
 * A fixed-length reply echoes the first n bytes of its request PDU (echoLength).
 * @param {Buffer} rx the reply frame, unit id first
 * @param {Buffer} pdu the request PDU
 * @param {number} n
 * @returns {boolean}
 */
function echoes (rx, pdu, n) {
  for (let i = 0; i < n; i++) if (rx[1 + i] !== pdu[i]) return false;
  return true;
}

module.exports = { RtuTransport, defaultLoadSerialPort };
