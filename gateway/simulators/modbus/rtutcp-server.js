'use strict';

/**
 * Modbus RTU over TCP simulator: the RTU slave(s) of rtu-line.js behind a TCP listener, as a serial server
 * (Moxa NPort, Brainboxes ES) or a PLC's "RTU over TCP" port presents them: RTU frames with their CRC, no MBAP
 * header. `nines sim rtutcp` starts one; clients dial modbus+rtutcp://host:port.
 *
 * Each accepted connection is a line of its own (its framer, its delayed replies, its quirk timers) over the one
 * shared model, so several clients (or a second copy of a test suite) never see each other's frames. A real
 * serial server has one line per port and most take one client: run with maxConnections 1 to get that refusal.
 *
 * Faults as on the serial simulator, except 'close', which closes the connection (as a serial server does when its
 * port is reset), and 'refuse', which also resets new connections at once (counted as `refused`). Quirks
 * (quirks.js): a request sooner than needsDelayAfterConnectMs after its connection was accepted, or sooner than
 * needsInterFrameDelayMs after the previous reply on its connection, is dropped unanswered and counted.
 */

const net = require('node:net');
const C = require('../../base/constants');
const { RtuLine } = require('./rtu-line');
const { QUIRK_OPTIONS } = require('./quirks');
const { LISTENER_OPTIONS, listenerOptions, simulatorUrl, listen, refuse, closeAll } = require('./tcp-listener');
const { intOption } = require('./validate');

const OPTIONS = Object.freeze([...LISTENER_OPTIONS, 'silenceMs', ...QUIRK_OPTIONS]);
/** Ceiling on the silence that ends a frame of unknown length, ms */
const MAX_SILENCE_MS = 1000;

/**
 * @typedef {object} RtuTcpSimStats the serial simulator's counters (rtu-server.js RtuSimStats), and
 * @property {number} connections accepted so far
 * @property {number} open connections open now
 */

/** A running RTU-over-TCP simulator; create with {@link createModbusRtuTcpSimulator}. */
class ModbusRtuTcpSimulator {
  /** @param {object} o checked options */
  constructor (o) {
    this.host = o.host;
    /** @type {number} the port listened on (the real one when 0 was asked) */
    this.port = 0;
    /** @type {import('./model').ModbusModel} */
    this.model = o.model;
    /** @type {FaultPlan} */
    this.faults = o.faults;
    this.maxConnections = o.maxConnections;
    this._o = o;
    /** @type {RtuTcpSimStats} */
    this.stats = {
      connections: 0, open: 0, requests: 0, replies: 0, exceptions: 0, dropped: 0, garbage: 0, closed: 0,
      refused: 0, badFrames: 0, badBytes: 0, ignored: 0, broadcasts: 0, tooSoonAfterConnect: 0, tooSoonAfterReply: 0
    };
    /** @type {Map<net.Socket, RtuLine>} */
    this._lines = new Map();
    this._closing = null;
    this.server = net.createServer({ noDelay: true }, (socket) => this._accept(socket));
  }

  /** @returns {string} target URL of this simulator, e.g. modbus+rtutcp://127.0.0.1:4001?unitId=1 */
  get url () {
    return simulatorUrl('modbus+rtutcp', this.host, this.port, this.model);
  }

  /** @param {net.Socket} socket */
  _accept (socket) {
    const stats = this.stats;
    if (this._closing || this.faults.refuse || this._lines.size >= this.maxConnections) {
      stats.refused++;
      refuse(socket);
      return;
    }
    socket.on('error', () => {});
    stats.connections++;
    stats.open++;
    const o = this._o;
    const line = new RtuLine({
      model: o.model,
      faults: o.faults,
      maxPending: o.maxPending,
      maxWriteBytes: C.SIM_MODBUS_MAX_WRITE_BUFFER_BYTES,
      silenceMs: o.silenceMs,
      stats,
      quirks: o.quirks,
      io: {
        write: (buf) => socket.write(buf),
        backlog: () => socket.writableLength,
        open: () => !socket.destroyed,
        onClose: () => socket.destroy()
      }
    });
    this._lines.set(socket, line);
    socket.on('data', (chunk) => line.push(chunk));
    socket.on('close', () => {
      line.close();
      this._lines.delete(socket);
      stats.open--;
    });
  }

  /** @param {number} port @returns {Promise<void>} */
  async _listen (port) {
    this.port = await listen(this.server, this.host, port, 'Modbus RTU-over-TCP simulator');
    this.faults.start();
  }

  /**
   * Stops listening, closes every connection, drops delayed replies and disarms timers. Idempotent.
   * @returns {Promise<void>}
   */
  close () {
    if (!this._closing) {
      this.faults.stop();
      this._closing = closeAll(this.server, this._lines.keys());
    }
    return this._closing;
  }
}

/**
 * Starts a Modbus RTU-over-TCP simulator.
 * @param {object} [options]
 * @param {string} [options.host='127.0.0.1']
 * @param {number} [options.port=4001] 0 picks a free port (tests); 4001 is a Moxa NPort's first serial port
 * @param {import('./model').ModbusModel} [options.model] the data model; or
 * @param {object} [options.modelOptions] options for createModbusModel (unitIds, holes, preset, animate…)
 * @param {string|object|FaultPlan} [options.faults] fault spec (faults.js)
 * @param {{random?: () => number, now?: () => number}} [options.faultOptions] passed to FaultPlan.parse
 * @param {number} [options.maxConnections=32] open connections beyond this are refused and counted (1: as most
 *   serial servers)
 * @param {number} [options.maxPending=64] delayed replies waiting per connection; more are dropped and counted
 * @param {number} [options.silenceMs=10] silence that ends a frame of unknown length (a function code the
 *   simulator cannot size, answered with exception 1), ms
 * @param {number|string} [options.needsDelayAfterConnectMs=0] quirk: drop requests sooner than this after their
 *   connection was accepted
 * @param {number|string} [options.needsInterFrameDelayMs=0] quirk: drop a request sooner than this after the previous
 *   reply on its connection
 * @returns {Promise<ModbusRtuTcpSimulator>} listening; `sim.port`, `sim.url`, `sim.stats`, `sim.close()`
 * @throws {NinesError} NINES_ERR_INVALID_ARG for a bad option, NINES_ERR_PORT_IN_USE when the port is taken
 */
async function createModbusRtuTcpSimulator (options) {
  const { opts, port, o } = listenerOptions(options, OPTIONS, C.SIM_MODBUS_RTUTCP_PORT);
  o.silenceMs = intOption(opts.silenceMs, 'silenceMs', 1, MAX_SILENCE_MS, C.SIM_MODBUS_RTU_MIN_GAP_MS);
  const sim = new ModbusRtuTcpSimulator(o);
  await sim._listen(port);
  return sim;
}

module.exports = { createModbusRtuTcpSimulator, ModbusRtuTcpSimulator };
