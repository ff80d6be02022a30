'use strict';

/**
 * Modbus TCP simulator: a server over a {@link ModbusModel}, with faults from the shared fault engine.
 *
 * Speed: with no fault due, a request is answered synchronously inside the socket's 'data' handler (no timer, no
 * setImmediate: modbus-serial's ServerTCP answers after setTimeout(0), which caps a closed-loop client near
 * 800 req/s), Nagle is off, and several ADUs in one chunk are answered with one corked write.
 *
 * Framing: MBAP across any split and several ADUs per chunk. A header with protocol id != 0, or a length field
 * outside 2-254 (unit id + PDU of 1-253 bytes), cannot be resynchronised — TCP has no frame delimiter — so the
 * connection's buffer is dropped, `badFrames` counted and the connection closed, as real devices do.
 *
 * Unit ids: a unit the model serves is answered; 0 and 255 are answered too by default (`directUnitIds`),
 * because the Modbus TCP implementation guide (§4.4.2) addresses a device reached directly over TCP with 0xFF
 * and lets 0 be used the same way. Any other unit gets no reply (counted as `ignored`), like a missing slave
 * behind a gateway; clients time out.
 *
 * Pipelining: a client may write several requests before the replies come (maxInflight > 1). They are all
 * answered, in the order they arrived, none lost: at once when nothing delays them, else through the reply queue
 * (latency faults keep the order: each reply is due after the one before it). With `oneAtATime`, the simulator
 * behaves like the many devices that take one request at a time: a request that arrives while the previous one
 * is still being served is silently dropped (counted as `busyDropped`). "Still being served" means its reply has
 * not gone out yet (a latency fault delays it), or it came in the same chunk as the request before it (the
 * device reads one request per receive and discards the rest). Clients that pipeline must notice and fall back.
 *
 * Faults (plan.decide() per request): 'reply' with delayMs → answered later, in order; 'drop' → no reply, the
 * request is not executed; 'garbage' → junk bytes instead of the reply, not executed; 'close' → the connection is
 * closed when the reply would have been due. Only 'reply' executes the request, at the time the reply goes out.
 * 'refuse' → new connections are reset at once (counted as `refused`), as are those beyond maxConnections.
 *
 * TLS (tls-listener.js): with the `tls` option it serves Modbus/TCP Security (modbus+tls://), the same frames,
 * faults and quirks inside TLS; with tls.ca it requires a client certificate signed by that CA. A connection
 * counts (connections, requests) only once its handshake has succeeded; failed handshakes are `tlsRejected`.
 *
 * Quirks (quirks.js): a request sooner than needsDelayAfterConnectMs after its connection was accepted, or sooner
 * than needsInterFrameDelayMs after the previous reply on its connection, is dropped unanswered and not executed
 * (counted as tooSoonAfterConnect / tooSoonAfterReply), as devices that need a pause do.
 */

const net = require('node:net');
const C = require('../../base/constants');
const { MBAP_LENGTH, MAX_PDU_LENGTH, mbapFrame, readMbap } = require('../../drivers/modbus/frame');
const { ReplyQueue } = require('./reply-queue');
const { tooSoon, QUIRK_OPTIONS } = require('./quirks');
const { LISTENER_OPTIONS, listenerOptions, simulatorUrl, listen, refuse, closeAll } = require('./tcp-listener');
const { invalid } = require('./validate');
const { checkSimTls, createTlsServer, roleOf } = require('./tls-listener');

const OPTIONS = Object.freeze([...LISTENER_OPTIONS, 'directUnitIds', 'oneAtATime', 'tls', ...QUIRK_OPTIONS]);
/** Bytes of the MBAP header needed to check it: transaction id, protocol id, length */
const MBAP_CHECK_BYTES = 6;
/** MBAP length field bounds: unit id + a PDU of 1..253 bytes */
const MIN_MBAP_LENGTH = 2;
const MAX_MBAP_LENGTH = 1 + MAX_PDU_LENGTH;
const DEFAULT_DIRECT_UNIT_IDS = Object.freeze([0, 255]);

/**
 * @typedef {object} TcpSimStats
 * @property {number} connections accepted so far
 * @property {number} open connections open now
 * @property {number} requests well-framed requests received
 * @property {number} replies replies sent (exceptions included)
 * @property {number} exceptions exception replies sent
 * @property {number} dropped requests not answered: 'drop' faults and pending-queue overflow
 * @property {number} garbage junk replies sent
 * @property {number} closed connections closed by a 'close' fault
 * @property {number} refused connections refused ('refuse' fault or maxConnections)
 * @property {number} badFrames connections dropped for a bad MBAP header
 * @property {number} ignored requests to a unit id this device does not serve (no reply)
 * @property {number} busyDropped requests dropped unanswered because they arrived while the one before was still
 *   being served (`oneAtATime` only; not counted in `dropped`)
 * @property {number} tooSoonAfterConnect requests dropped by the needsDelayAfterConnectMs quirk (not in `dropped`)
 * @property {number} tooSoonAfterReply requests dropped by the needsInterFrameDelayMs quirk (not in `dropped`)
 * @property {number} tlsRejected TLS only: handshakes that failed (no client certificate, an untrusted one…)
 */

/** One accepted connection: MBAP reassembly, the synchronous fast path and the delayed-reply queue. */
class Connection {
  /**
   * @param {ModbusTcpSimulator} sim
   * @param {import('node:net').Socket} socket
   */
  constructor (sim, socket) {
    this.sim = sim;
    this.socket = socket;
    /** @type {Buffer|null} an incomplete ADU (at most MODBUS_TCP_MAX_ADU - 1 bytes) */
    this.pending = null;
    this.queue = new ReplyQueue({ plan: sim.faults, maxPending: sim._maxPending, onDue: (item) => this._due(item) });
    this.paused = false;
    // oneAtATime: a request of the chunk being read has been served, so the rest of the chunk came while busy
    this.servedInChunk = false;
    // For the quirks: when the connection was accepted and its last reply went out (performance.now() ms)
    this.openedAt = performance.now();
    this.lastReplyAt = -Infinity;
    socket.setNoDelay(true);
    socket.on('data', (chunk) => this._onData(chunk));
    // Clients vanish (ECONNRESET, EPIPE); that only ends this connection, which 'close' then cleans up.
    socket.on('error', () => {});
    socket.on('close', () => this._onClose());
    socket.on('drain', () => {
      if (this.paused) {
        this.paused = false;
        socket.resume();
      }
    });
  }

  /** @param {Buffer} chunk */
  _onData (chunk) {
    let buf = chunk;
    if (this.pending !== null) {
      buf = Buffer.concat([this.pending, chunk]);
      this.pending = null;
    }
    const socket = this.socket;
    const end = buf.length;
    let off = 0;
    let corked = false;
    this.servedInChunk = false;
    while (end - off >= MBAP_CHECK_BYTES) {
      // With 6 of the 7 header bytes, unitId reads as undefined; it is only used once the whole ADU is here.
      const mbap = readMbap(buf, off);
      if (mbap.protocolId !== 0 || mbap.length < MIN_MBAP_LENGTH || mbap.length > MAX_MBAP_LENGTH) {
        this.sim.stats.badFrames++;
        if (corked) socket.uncork();
        socket.destroy();
        return;
      }
      const aduLength = mbap.aduLength;
      if (end - off < aduLength) break;
      if (!corked && end - off > aduLength) {
        // Several requests in one chunk (pipelining): one write for all their replies.
        socket.cork();
        corked = true;
      }
      this._request(mbap, buf, off);
      off += aduLength;
    }
    if (off < end) this.pending = Buffer.from(buf.subarray(off));
    if (corked) socket.uncork();
  }

  /**
   * Handles one complete ADU at buf[off, off + mbap.aduLength).
   * @param {{transactionId: number, unitId: number, aduLength: number}} mbap its header
   * @param {Buffer} buf
   * @param {number} off
   */
  _request (mbap, buf, off) {
    const sim = this.sim;
    const stats = sim.stats;
    stats.requests++;
    sim.model.noteBusMessage();
    const aduLength = mbap.aduLength;
    const unitId = mbap.unitId;
    if (!sim.model.serves(unitId) && !sim._direct[unitId]) {
      stats.ignored++;
      return;
    }
    if (sim._quirks !== null && tooSoon(sim._quirks, performance.now(), this.openedAt, this.lastReplyAt, stats)) return;
    if (sim.oneAtATime) {
      // Busy: a reply still to go out, or a request before this one in the same chunk
      if (this.servedInChunk || this.queue.length !== 0) {
        stats.busyDropped++;
        return;
      }
      this.servedInChunk = true;
    }
    const plan = sim.faults;
    const d = plan.decide();
    const hold = plan.holdMs();
    if (d.action === 'reply' && d.delayMs === 0 && hold === 0 && this.queue.length === 0) {
      this._reply(mbap.transactionId, unitId, buf, off + MBAP_LENGTH, off + aduLength);
      return;
    }
    if (d.action === 'drop') {
      stats.dropped++;
      return;
    }
    // Slow path: copy the PDU, since the reply goes out after this chunk is gone.
    const item = {
      action: d.action,
      transactionId: mbap.transactionId,
      unitId,
      pdu: Buffer.from(buf.subarray(off + MBAP_LENGTH, off + aduLength))
    };
    if (!this.queue.push(item, d.delayMs, hold)) stats.dropped++;
  }

  /** Executes a request and writes its reply now. */
  _reply (transactionId, unitId, buf, start, end) {
    const pdu = this.sim.model.execute(buf, start, end, unitId);
    const stats = this.sim.stats;
    stats.replies++;
    if (pdu[0] & 0x80) stats.exceptions++;
    const socket = this.socket;
    socket.write(mbapFrame(transactionId, unitId, pdu));
    if (this.sim._quirks !== null) this.lastReplyAt = performance.now();
    if (!this.paused && socket.writableLength > C.SIM_MODBUS_MAX_WRITE_BUFFER_BYTES) {
      // The client sends faster than it reads: stop reading until it catches up, so nothing grows unbounded.
      this.paused = true;
      socket.pause();
    }
  }

  /** A delayed request falls due. */
  _due (item) {
    if (this.socket.destroyed) return;
    const stats = this.sim.stats;
    if (item.action === 'reply') {
      this._reply(item.transactionId, item.unitId, item.pdu, 0, item.pdu.length);
    } else if (item.action === 'garbage') {
      stats.garbage++;
      this.socket.write(this.sim.faults.garbage());
      if (this.sim._quirks !== null) this.lastReplyAt = performance.now();
    } else if (item.action === 'close') {
      stats.closed++;
      this.queue.clear();
      this.socket.destroy();
    }
  }

  _onClose () {
    this.queue.clear();
    this.pending = null;
    this.sim._connections.delete(this);
    this.sim.stats.open--;
  }
}

/** A running Modbus TCP simulator; create with {@link createModbusTcpSimulator}. */
class ModbusTcpSimulator {
  /** @param {object} o checked options */
  constructor (o) {
    this.host = o.host;
    /** @type {number} the port listened on (the real one when 0 was asked) */
    this.port = 0;
    /** @type {import('./model').ModbusModel} */
    this.model = o.model;
    /** @type {FaultPlan} change at run time with sim.faults.set(spec), stall with sim.faults.stall(ms) */
    this.faults = o.faults;
    this.maxConnections = o.maxConnections;
    /** @type {boolean} drop requests that arrive while the one before is being served (file header) */
    this.oneAtATime = o.oneAtATime;
    /** @type {import('./quirks').Quirks|null} */
    this._quirks = o.quirks;
    this._maxPending = o.maxPending;
    this._direct = new Uint8Array(256);
    for (const id of o.directUnitIds) this._direct[id] = 1;
    /** @type {TcpSimStats} */
    this.stats = {
      connections: 0, open: 0, requests: 0, replies: 0, exceptions: 0, dropped: 0,
      garbage: 0, closed: 0, refused: 0, badFrames: 0, ignored: 0, busyDropped: 0, tooSoonAfterConnect: 0, tooSoonAfterReply: 0, tlsRejected: 0
    };
    /** @type {Set<Connection>} */
    this._connections = new Set();
    this._closing = null;
    /** @type {boolean} serves Modbus/TCP Security (modbus+tls) */
    this.tls = o.tls !== null;
    /** @type {string|null} TLS: why the last failed handshake failed (OpenSSL's code) */
    this.lastTlsError = null;
    /** @type {Array<string|null>} TLS: the role each accepted client's certificate carried (tls-listener.js), in order */
    this.clientRoles = [];
    this.server = o.tls === null
      ? net.createServer({ noDelay: true }, (socket) => this._accept(socket))
      : createTlsServer(o.tls, (socket) => this._acceptTls(socket), (err) => {
        this.stats.tlsRejected++;
        this.lastTlsError = /** @type {any} */ (err).code || err.message;
      });
  }

  /** @returns {string} target URL of this simulator, e.g. modbus+tcp://127.0.0.1:5020?unitId=1 (modbus+tls:// over TLS) */
  get url () {
    return simulatorUrl(this.tls ? 'modbus+tls' : 'modbus+tcp', this.host, this.port, this.model);
  }

  /** @param {import('node:tls').TLSSocket} socket a connection whose handshake succeeded */
  _acceptTls (socket) {
    const peer = socket.getPeerCertificate();
    this.clientRoles.push(peer && peer.raw ? roleOf(peer.raw) : null);
    this._accept(socket);
  }

  /** @param {import('node:net').Socket} socket */
  _accept (socket) {
    const stats = this.stats;
    if (this._closing || this.faults.refuse || this._connections.size >= this.maxConnections) {
      stats.refused++;
      refuse(socket);
      return;
    }
    stats.connections++;
    stats.open++;
    this._connections.add(new Connection(this, socket));
  }

  /** @param {number} port @returns {Promise<void>} */
  async _listen (port) {
    this.port = await listen(this.server, this.host, port, 'Modbus TCP simulator');
    this.faults.start();
  }

  /**
   * Stops listening, destroys every open connection, drops delayed replies and disarms scheduled stalls.
   * Idempotent.
   * @returns {Promise<void>}
   */
  close () {
    if (!this._closing) {
      this.faults.stop();
      // Once every socket has closed, each connection has dropped its delayed replies and stats.open is 0.
      this._closing = closeAll(this.server, [...this._connections].map((c) => c.socket));
    }
    return this._closing;
  }
}

/**
 * Starts a Modbus TCP simulator.
 * @param {object} [options]
 * @param {string} [options.host='127.0.0.1']
 * @param {number} [options.port=5020] 0 picks a free port (tests)
 * @param {import('./model').ModbusModel} [options.model] the data model; or
 * @param {object} [options.modelOptions] options for createModbusModel (default: 10000 of each, unit 1)
 * @param {string|object|FaultPlan} [options.faults] fault spec, e.g. 'latency=2ms,drop=0.001' (see faults.js)
 * @param {{random?: () => number, now?: () => number}} [options.faultOptions] passed to FaultPlan.parse
 * @param {number} [options.maxConnections=32] open connections beyond this are refused and counted
 * @param {number} [options.maxPending=64] delayed replies waiting per connection; more are dropped and counted
 * @param {number[]} [options.directUnitIds=[0, 255]] unit ids answered besides the model's ("this device")
 * @param {boolean} [options.oneAtATime=false] serve one request at a time per connection: one that arrives while
 *   the one before is still being served is dropped unanswered, as many real devices do (see the file header)
 * @param {number|string} [options.needsDelayAfterConnectMs=0] quirk: drop requests sooner than this after their
 *   connection was accepted
 * @param {number|string} [options.needsInterFrameDelayMs=0] quirk: drop a request sooner than this after the previous
 *   reply on its connection
 * @param {{cert: string|Buffer, key: string|Buffer, ca?: string|Buffer, maxVersion?: string}} [options.tls] serve
 *   Modbus/TCP Security with this certificate and key (PEM); with ca, require client certificates signed by it
 * @returns {Promise<ModbusTcpSimulator>} listening; `sim.port`, `sim.url`, `sim.stats`, `sim.close()`
 * @throws {NinesError} NINES_ERR_INVALID_ARG for a bad option, NINES_ERR_PORT_IN_USE when the port is taken
 */
async function createModbusTcpSimulator (options) {
  const { opts, port, o } = listenerOptions(options, OPTIONS, options && options.tls ? C.SIM_MODBUS_TLS_PORT : C.SIM_MODBUS_PORT);
  const ids = opts.directUnitIds === undefined ? DEFAULT_DIRECT_UNIT_IDS : opts.directUnitIds;
  if (!Array.isArray(ids) || !ids.every((id) => Number.isInteger(id) && id >= 0 && id <= 255)) {
    invalid('directUnitIds', JSON.stringify(ids), 'an array of integers from 0 to 255 (may be empty)');
  }
  o.directUnitIds = ids;
  if (opts.oneAtATime !== undefined && typeof opts.oneAtATime !== 'boolean') invalid('oneAtATime', opts.oneAtATime, 'true or false');
  o.oneAtATime = opts.oneAtATime === true;
  o.tls = checkSimTls(opts.tls);
  const sim = new ModbusTcpSimulator(o);
  await sim._listen(port);
  return sim;
}

module.exports = { createModbusTcpSimulator, ModbusTcpSimulator };
