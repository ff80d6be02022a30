'use strict';

/**
 * Modbus RTU simulator: a slave (or several) on a serial line, over a {@link ModbusModel}, with faults from the
 * shared fault engine. Runs on any serial device, including one end of a socat PTY pair for tests. The line's
 * rules (framing, unit ids, broadcast, faults, quirks) are rtu-line.js; this file opens the port.
 *
 * On a serial line 'close' means the device resets: no reply, pending input and delayed replies forgotten (the
 * port stays open: closing one end of a PTY pair would end socat). The quirk needsInterFrameDelayMs applies per
 * line; needsDelayAfterConnectMs has no connection to count from here and is refused.
 */

const C = require('../../base/constants');
const { NinesError } = require('../../base/errors');
const { FaultPlan } = require('../faults');
const { BAUD_RATES, PARITIES, formatTarget } = require('../../drivers/target');
const { rtuSilenceUs } = require('../../drivers/modbus/frame');
const { resolveModel } = require('./model');
const { RtuLine } = require('./rtu-line');
const { parseQuirks, QUIRK_OPTIONS } = require('./quirks');
const { loadSerialPort } = require('./serial-port');
const { invalid, intOption, oneOf, stringOption, objectOption, noUnknownKeys } = require('./validate');

const OPTIONS = Object.freeze(['path', 'baudRate', 'parity', 'dataBits', 'stopBits', 'model', 'modelOptions',
  'faults', 'faultOptions', 'maxPending', 'silenceMs', 'loadSerialPort', ...QUIRK_OPTIONS]);
/** Ceiling on a configured silence: longer would merge a master's retries into one frame */
const MAX_SILENCE_MS = 1000;

/**
 * @typedef {object} RtuSimStats
 * @property {number} requests CRC-valid frames received
 * @property {number} replies replies sent (exceptions included)
 * @property {number} exceptions exception replies sent
 * @property {number} dropped requests not answered: 'drop' faults, pending-queue overflow, output backlog
 * @property {number} garbage junk replies sent
 * @property {number} closed device resets by a 'close' fault
 * @property {number} refused requests ignored while 'refuse' (powered off)
 * @property {number} badFrames runs of bytes discarded (bad CRC, impossible length, incomplete at silence)
 * @property {number} badBytes bytes discarded in those runs
 * @property {number} ignored requests for a unit id this device does not serve
 * @property {number} broadcasts broadcast (unit 0) writes executed
 * @property {number} tooSoonAfterConnect requests dropped by the needsDelayAfterConnectMs quirk (never on a serial line)
 * @property {number} tooSoonAfterReply requests dropped by the needsInterFrameDelayMs quirk
 */

/** A running Modbus RTU simulator; create with {@link createModbusRtuSimulator}. */
class ModbusRtuSimulator {
  /** @param {object} o checked options */
  constructor (o) {
    this.path = o.path;
    this.baudRate = o.baudRate;
    this._line = { path: o.path, baudRate: o.baudRate, parity: o.parity, dataBits: o.dataBits, stopBits: o.stopBits };
    /** @type {import('./model').ModbusModel} */
    this.model = o.model;
    /** @type {FaultPlan} */
    this.faults = o.faults;
    /** Inter-frame silence that ends a frame of unknown length, ms */
    this.silenceMs = o.silenceMs;
    /** @type {RtuSimStats} */
    this.stats = {
      requests: 0, replies: 0, exceptions: 0, dropped: 0, garbage: 0, closed: 0,
      refused: 0, badFrames: 0, badBytes: 0, ignored: 0, broadcasts: 0, tooSoonAfterConnect: 0, tooSoonAfterReply: 0
    };
    this.port = null;
    this._closing = null;
    this._rtu = new RtuLine({
      model: o.model,
      faults: o.faults,
      maxPending: o.maxPending,
      // Output backlog beyond which replies are dropped (bytes)
      maxWriteBytes: C.MODBUS_RTU_MAX_ADU * o.maxPending,
      silenceMs: o.silenceMs,
      stats: this.stats,
      quirks: o.quirks,
      io: {
        write: (buf) => this.port.write(buf),
        backlog: () => this.port.writableLength,
        open: () => this.port !== null && this.port.isOpen,
        onClose: () => this._rtu.reset()
      }
    });
    // No connection opens on a serial line: nothing is ever too soon after one
    this._rtu.openedAt = -Infinity;
  }

  /** @returns {string} target URL of this simulator */
  get url () {
    const ids = this.model.unitIds;
    const { path, baudRate, parity, dataBits, stopBits } = this._line;
    return formatTarget({ protocol: 'modbus+rtu', path, baudRate, parity, dataBits, stopBits, unitId: ids === 'any' ? 1 : ids[0] });
  }

  /** @returns {Promise<void>} */
  _open (SerialPort, o) {
    return new Promise((resolve, reject) => {
      let port;
      try {
        port = new SerialPort({
          path: o.path, baudRate: o.baudRate, parity: o.parity, dataBits: o.dataBits, stopBits: o.stopBits, autoOpen: false
        });
      } catch (err) {
        reject(new NinesError('NINES_ERR_INVALID_ARG', `Modbus RTU simulator cannot use ${o.path}: ${err.message}`,
          { path: o.path, cause: err.code }));
        return;
      }
      port.open((err) => {
        if (err) {
          const locked = /lock|busy/i.test(err.message);
          reject(new NinesError(locked ? 'NINES_ERR_PORT_IN_USE' : 'NINES_ERR_CONNECT_FAILED',
            `Modbus RTU simulator cannot open ${o.path}: ${err.message}`, { path: o.path, cause: err.code }));
          return;
        }
        this.port = port;
        port.on('data', (chunk) => this._rtu.push(chunk));
        // A serial error (device unplugged) stops the simulator's line but must not crash the process.
        port.on('error', () => {});
        this.faults.start();
        resolve();
      });
    });
  }

  /**
   * Closes the serial port, drops delayed replies and disarms timers. Idempotent.
   * @returns {Promise<void>}
   */
  close () {
    if (!this._closing) {
      this.faults.stop();
      this._rtu.close();
      const port = this.port;
      this._closing = new Promise((resolve) => {
        if (!port || !port.isOpen) return resolve();
        port.close(() => resolve());
      });
    }
    return this._closing;
  }
}

/**
 * Starts a Modbus RTU simulator on a serial device.
 * @param {object} options
 * @param {string} options.path serial device, e.g. /dev/ttyUSB0 or one end of a socat PTY pair
 * @param {number} [options.baudRate=9600] a standard rate (300…921600)
 * @param {'none'|'even'|'odd'|'mark'|'space'} [options.parity='none']
 * @param {8} [options.dataBits=8] Modbus RTU uses 8 data bits
 * @param {1|2} [options.stopBits=1]
 * @param {import('./model').ModbusModel} [options.model] the data model; or
 * @param {object} [options.modelOptions] options for createModbusModel
 * @param {string|object|FaultPlan} [options.faults] fault spec (see faults.js; 'refuse' = device powered off,
 *   'close' = device reset)
 * @param {{random?: () => number, now?: () => number}} [options.faultOptions] passed to FaultPlan.parse
 * @param {number} [options.maxPending=64] delayed replies waiting; more are dropped and counted
 * @param {number} [options.silenceMs] inter-frame silence, ms (default: the 3.5-character time, at least 10 ms)
 * @param {number|string} [options.needsInterFrameDelayMs=0] quirk: drop a request that comes sooner than this after
 *   the previous reply (quirks.js)
 * @param {() => Function} [options.loadSerialPort] returns the SerialPort class (default: lazy require)
 * @returns {Promise<ModbusRtuSimulator>} with the port open
 * @throws {NinesError} NINES_ERR_INVALID_ARG, NINES_ERR_SERIAL_UNAVAILABLE, NINES_ERR_CONNECT_FAILED (cannot open),
 *   NINES_ERR_PORT_IN_USE (port locked)
 */
async function createModbusRtuSimulator (options) {
  const opts = objectOption(options, 'options');
  noUnknownKeys(opts, 'options', OPTIONS);
  const o = { path: stringOption(opts.path, 'path') };
  o.baudRate = opts.baudRate === undefined ? 9600 : opts.baudRate;
  if (!BAUD_RATES.includes(o.baudRate)) invalid('baudRate', o.baudRate, `a standard rate (${BAUD_RATES.join(', ')})`);
  o.parity = oneOf(opts.parity, 'parity', PARITIES, 'none');
  o.dataBits = oneOf(opts.dataBits, 'dataBits', [8], 8);
  o.stopBits = oneOf(opts.stopBits, 'stopBits', [1, 2], 1);
  o.maxPending = intOption(opts.maxPending, 'maxPending', 1, 100000, C.SIM_MODBUS_MAX_PENDING);
  const bitsPerChar = 1 + o.dataBits + (o.parity === 'none' ? 0 : 1) + o.stopBits;
  const defaultSilenceMs = Math.max(Math.ceil(rtuSilenceUs(o.baudRate, bitsPerChar) / 1000), C.SIM_MODBUS_RTU_MIN_GAP_MS);
  o.silenceMs = intOption(opts.silenceMs, 'silenceMs', 1, MAX_SILENCE_MS, defaultSilenceMs);
  if (opts.loadSerialPort !== undefined && typeof opts.loadSerialPort !== 'function') {
    invalid('loadSerialPort', typeof opts.loadSerialPort, 'a function returning the SerialPort class');
  }
  o.model = resolveModel(opts.model, opts.modelOptions);
  o.faults = FaultPlan.parse(opts.faults, opts.faultOptions);
  o.quirks = parseQuirks(opts, { connections: false });
  const SerialPort = (opts.loadSerialPort || loadSerialPort)();
  const sim = new ModbusRtuSimulator(o);
  await sim._open(SerialPort, o);
  return sim;
}

module.exports = { createModbusRtuSimulator, ModbusRtuSimulator };
