'use strict';

/**
 * One Modbus RTU line of a simulator: request frames in, replies out, over a {@link ModbusModel}, with the
 * shared fault engine and the quirk modes. The serial simulator (rtu-server.js) has one, on its port; the
 * RTU-over-TCP simulator (rtutcp-server.js) has one per accepted connection, on its socket.
 *
 * Framing by length with the inter-frame silence as fallback (rtu-framer.js). Per Modbus over Serial Line v1.02:
 * a frame with a bad CRC gets no reply (counted in badFrames with the bytes skipped to resync); a frame for a unit
 * id the model does not serve gets no reply (it's a bus: another slave's business; counted as `ignored`); unit 0
 * is a broadcast: writes are executed and never answered, reads are ignored. With no fault due, the reply is
 * written synchronously in the 'data' handler.
 *
 * Faults: latency, spikes and stalls delay replies (in order: a slave serves one request at a time); 'drop' → no
 * reply, not executed; 'garbage' → junk bytes instead of the reply; 'close' → the owner's onClose (the serial
 * device resets; the TCP connection closes); 'refuse' → the device is powered off: nothing is answered (counted
 * as `refused`). Quirks (quirks.js): a request too soon after the connection opened or after the line's previous
 * reply is dropped and counted.
 */

const { FC, rtuFrame } = require('../../drivers/modbus/frame');
const { ReplyQueue } = require('./reply-queue');
const { RtuRequestFramer } = require('./rtu-framer');
const { tooSoon } = require('./quirks');

const BROADCAST_UNIT_ID = 0;
const WRITE_FCS = new Set([FC.WRITE_SINGLE_COIL, FC.WRITE_SINGLE_REGISTER, FC.WRITE_MULTIPLE_COILS,
  FC.WRITE_MULTIPLE_REGISTERS, FC.MASK_WRITE_REGISTER]);
/** Bytes of an RTU ADU around the PDU: address before, CRC after */
const RTU_ADDRESS_BYTES = 1;
const RTU_CRC_BYTES = 2;

/**
 * @typedef {object} RtuLineIo where the line's replies go
 * @property {(buf: Buffer) => void} write
 * @property {() => number} backlog bytes written and not yet sent
 * @property {() => boolean} open whether writing is possible now
 * @property {() => void} onClose a 'close' fault fell due
 */

class RtuLine {
  /**
   * @param {object} o
   * @param {import('./model').ModbusModel} o.model
   * @param {import('../faults').FaultPlan} o.faults
   * @param {number} o.maxPending delayed replies that may wait
   * @param {number} o.maxWriteBytes output backlog beyond which replies are dropped
   * @param {number} o.silenceMs inter-frame silence that ends a frame of unknown length, ms
   * @param {Record<string, number>} o.stats the simulator's counters, updated in place
   * @param {import('./quirks').Quirks|null} o.quirks
   * @param {RtuLineIo} o.io
   */
  constructor ({ model, faults, maxPending, maxWriteBytes, silenceMs, stats, quirks, io }) {
    this.model = model;
    this.faults = faults;
    this.stats = stats;
    this._maxWriteBytes = maxWriteBytes;
    this._silenceMs = silenceMs;
    this._quirks = quirks;
    this._io = io;
    // When the line (its connection) opened and when its last reply went out, for the quirks (ms)
    this._openedAt = performance.now();
    this._lastReplyAt = -Infinity;
    this._framer = new RtuRequestFramer({
      onFrame: (buf, start, end) => this._frame(buf, start, end),
      onBadFrame: (n) => {
        stats.badFrames++;
        stats.badBytes += n;
        this.model.noteBusError();
      }
    });
    this._queue = new ReplyQueue({ plan: faults, maxPending, onDue: (item) => this._due(item) });
    this._silenceTimer = null;
    this._onSilence = () => {
      this._silenceTimer = null;
      this._framer.flush();
    };
  }

  /**
   * A serial line has no connection: the quirk that counts from one never applies.
   * @param {number} at performance.now() ms, or -Infinity
   */
  set openedAt (at) {
    this._openedAt = at;
  }

  /** @param {Buffer} chunk bytes received */
  push (chunk) {
    this._framer.push(chunk);
    // Fast path: a whole frame per chunk leaves nothing pending and arms no timer.
    if (this._framer.pendingBytes > 0) {
      if (this._silenceTimer) this._silenceTimer.refresh();
      else this._silenceTimer = setTimeout(this._onSilence, this._silenceMs);
    } else if (this._silenceTimer) {
      clearTimeout(this._silenceTimer);
      this._silenceTimer = null;
    }
  }

  /** The device resets: pending input and delayed replies are forgotten. */
  reset () {
    this._framer.reset();
    this._queue.clear();
  }

  /** Drops delayed replies and disarms timers (the line is going away). */
  close () {
    this._queue.clear();
    clearTimeout(this._silenceTimer);
    this._silenceTimer = null;
    this._framer.reset();
  }

  /** One CRC-checked ADU at buf[start, end) (the framer reuses buf). */
  _frame (buf, start, end) {
    const stats = this.stats;
    const model = this.model;
    stats.requests++;
    model.noteBusMessage();
    const unitId = buf[start];
    if (unitId !== BROADCAST_UNIT_ID && !model.serves(unitId)) {
      stats.ignored++;
      return;
    }
    if (this._quirks !== null && tooSoon(this._quirks, performance.now(), this._openedAt, this._lastReplyAt, stats)) return;
    const pduStart = start + RTU_ADDRESS_BYTES;
    const pduEnd = end - RTU_CRC_BYTES;
    if (unitId === BROADCAST_UNIT_ID) {
      if (WRITE_FCS.has(buf[pduStart])) {
        stats.broadcasts++;
        model.execute(buf, pduStart, pduEnd);
        model.noteNoResponse();
      } else {
        stats.ignored++;
      }
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
    const io = this._io;
    if (!io.open()) return;
    if (io.backlog() > this._maxWriteBytes) {
      // The line cannot keep up (a master ignoring replies): drop rather than buffer without limit.
      stats.dropped++;
      return;
    }
    const pdu = this.model.execute(buf, start, end, unitId);
    stats.replies++;
    if (pdu[0] & 0x80) stats.exceptions++;
    io.write(rtuFrame(unitId, pdu));
    if (this._quirks !== null) this._lastReplyAt = performance.now();
  }

  _due (item) {
    const stats = this.stats;
    if (item.action === 'reply') {
      this._reply(item.unitId, item.pdu, 0, item.pdu.length);
    } else if (item.action === 'garbage') {
      stats.garbage++;
      if (this._io.open()) {
        this._io.write(this.faults.garbage());
        if (this._quirks !== null) this._lastReplyAt = performance.now();
      }
    } else if (item.action === 'close') {
      stats.closed++;
      this._io.onClose();
    }
  }
}

module.exports = { RtuLine };
