'use strict';

/**
 * Modbus RTU simulator: a slave (or several) on a serial line, over a {@link ModbusModel}, with faults from the
 * shared fault engine. Runs on any serial device, including one end of a socat PTY pair for tests.
 *
 * Framing by length with the inter-frame silence as fallback (rtu-framer.js). Per Modbus over Serial Line v1.02:
 * a frame with a bad CRC gets no reply (counted in badFrames with the bytes skipped to resync); a frame for a unit
 * id the model does not serve gets no reply (it's a bus: another slave's business; counted as `ignored`); unit 0
 * is a broadcast: writes are executed and never answered, reads are ignored. With no fault due, the reply is
 * written synchronously in the 'data' handler.
 *
 * Faults on a serial line: latency, spikes and stalls delay replies (in order: a slave serves one request at a
 * time); 'drop' → no reply, not executed; 'garbage' → junk bytes instead of the reply; 'close' → the device resets:
 * no reply, pending input and delayed replies forgotten (the port stays open: closing one end of a PTY pair would
 * end socat); 'refuse' → the device is powered off: nothing is answered (counted as `refused`).
 */

const C = require('../../base/constants');
const { NinesError } = require('../../base/errors');
const { FaultPlan } = require('../faults');
const { BAUD_RATES, PARITIES, formatTarget } = require('../../drivers/target');
const { FC, rtuFrame, rtuSilenceUs } = require('../../drivers/modbus/frame');
const { resolveModel } = require('./model');
const { ReplyQueue } = require('./reply-queue');
const { RtuRequestFramer } = require('./rtu-framer');
const { loadSerialPort } = require('./serial-port');
const { invalid, intOption, oneOf, stringOption, objectOption, noUnknownKeys } = require('./validate');

const OPTIONS = Object.freeze(['path', 'baudRate', 'parity', 'dataBits', 'stopBits', 'model', 'modelOptions',
  'faults', 'faultOptions', 'maxPending', 'silenceMs', 'loadSerialPort']);
const BROADCAST_UNIT_ID = 0;
const WRITE_FCS = new Set([FC.WRITE_SINGLE_COIL, FC.WRITE_SINGLE_REGISTER, FC.WRITE_MULTIPLE_COILS,
  FC.WRITE_MULTIPLE_REGISTERS]);
/** Bytes of an RTU ADU around the PDU: address before, CRC after */
const RTU_ADDRESS_BYTES = 1;
const RTU_CRC_BYTES = 2;
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
 */

/** A running Modbus RTU simulator; create with {@link createModbusRtuSimulator}. */
class ModbusRtuSimulator {
  /** @param {object} o checked options */
  constructor (o) {
    this.path = o.path;
    this.baudRate = o.baudRate;
    this._line = { path: o.path, baudRate: o.baudRate, parity: o.parity, dataBits: o.dataBits, stopBits: o.stopBits };
    /** Output backlog beyond which replies are dropped (bytes) */
    this._maxWriteBytes = C.MODBUS_RTU_MAX_ADU * o.maxPending;
    /** @type {import('./model').ModbusModel} */
    this.model = o.model;
    /** @type {FaultPlan} */
    this.faults = o.faults;
    /** Inter-frame silence that ends a frame of unknown length, ms */
    this.silenceMs = o.silenceMs;
    /** @type {RtuSimStats} */
    this.stats = {
      requests: 0, replies: 0, exceptions: 0, dropped: 0, garbage: 0, closed: 0,
      refused: 0, badFrames: 0, badBytes: 0, ignored: 0, broadcasts: 0
    };
    this.port = null;
    this._closing = null;
    this._framer = new RtuRequestFramer({
      onFrame: (buf, start, end) => this._frame(buf, start, end),
      onBadFrame: (n) => {
        this.stats.badFrames++;
        this.stats.badBytes += n;
      }
    });
    this._queue = new ReplyQueue({ plan: o.faults, maxPending: o.maxPending, onDue: (item) => this._due(item) });
    this._silenceTimer = null;
    this._onSilence = () => {
      this._silenceTimer = null;
      this._framer.flush();
    };
  }

  /** @returns {string} target URL of this simulator */
  get url () {
    const ids = this.model.unitIds;
    const { path, baudRate, parity, dataBits, stopBits } = this._line;
    return formatTarget({ protocol: 'modbus+rtu', path, baudRate, parity, dataBits, stopBits, unitId: ids === 'any' ? 1 : ids[0] });
  }

  /** @param {Buffer} chunk */
  _onData (chunk) {
    this._framer.push(chunk);
    // Fast path: a whole frame per chunk leaves nothing pending and arms no timer.
    if (this._framer.pendingBytes > 0) {
      if (this._silenceTimer) this._silenceTimer.refresh();
      else this._silenceTimer = setTimeout(this._onSilence, this.silenceMs);
    } else if (this._silenceTimer) {
      clearTimeout(this._silenceTimer);
      this._silenceTimer = null;
    }
  }

  /** One CRC-checked ADU at buf[start, end) (the framer reuses buf). */
  _frame (buf, start, end) {
    const stats = this.stats;
    const model = this.model;
    stats.requests++;
    const unitId = buf[start];
    const pduStart = start + RTU_ADDRESS_BYTES;
    const pduEnd = end - RTU_CRC_BYTES;
    if (unitId === BROADCAST_UNIT_ID) {
      if (WRITE_FCS.has(buf[pduStart])) {
        stats.broadcasts++;
        model.execute(buf, pduStart, pduEnd);
      } else {
        stats.ignored++;
      }
      return;
    }
    if (!model.serves(unitId)) {
      stats.ignored++;
      return;
    }
    const plan = this.faults;
    if (plan.refuse) {
      stats.refused++;
      return;
    }
    const d = plan.decide();
    const hold = plan.holdMs();
    if (d.action === 'reply' && d.delayMs === 0 && hold === 0 && this._queue.length === 0) {
      this._reply(unitId, buf, pduStart, pduEnd);
      return;
    }
    if (d.action === 'drop') {
      stats.dropped++;
      return;
    }
    const item = { action: d.action, unitId, pdu: Buffer.from(buf.subarray(pduStart, pduEnd)) };
    if (!this._queue.push(item, d.delayMs, hold)) stats.dropped++;
  }

  _reply (unitId, buf, start, end) {
    const stats = this.stats;
    const port = this.port;
    if (!port || !port.isOpen) return;
    if (port.writableLength > this._maxWriteBytes) {
      // The line cannot keep up (a master ignoring replies): drop rather than buffer without limit.
      stats.dropped++;
      return;
    }
    const pdu = this.model.execute(buf, start, end);
    stats.replies++;
    if (pdu[0] & 0x80) stats.exceptions++;
    port.write(rtuFrame(unitId, pdu));
  }

  _due (item) {
    const stats = this.stats;
    if (item.action === 'reply') {
      this._reply(item.unitId, item.pdu, 0, item.pdu.length);
    } else if (item.action === 'garbage') {
      stats.garbage++;
      if (this.port && this.port.isOpen) this.port.write(this.faults.garbage());
    } else if (item.action === 'close') {
      stats.closed++;
      this._framer.reset();
      this._queue.clear();
    }
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
        port.on('data', (chunk) => this._onData(chunk));
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
      this._queue.clear();
      clearTimeout(this._silenceTimer);
      this._silenceTimer = null;
      this._framer.reset();
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
  const SerialPort = (opts.loadSerialPort || loadSerialPort)();
  const sim = new ModbusRtuSimulator(o);
  await sim._open(SerialPort, o);
  return sim;
}

module.exports = { createModbusRtuSimulator, ModbusRtuSimulator };
