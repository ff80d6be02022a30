'use strict';

/**
 * Cuts a byte stream from a serial line into Modbus RTU request frames (pure: no timers, no I/O).
 *
 * Frames are found by length (`rtuRequestLength`, from the function code and, for FC15/16, the byte count), so a
 * request is served as soon as its last byte arrives, without waiting for the 3.5-character silence. The owner
 * calls `flush()` when the line has been silent for the inter-frame time; that ends a frame whose length cannot be
 * known (an unsupported function code, answered by the model with exception 1) and discards a partial one.
 *
 * Resync: a candidate frame whose CRC is wrong is not answered (Modbus over Serial Line §2.5.1.2); the framer
 * then drops one byte and looks for a valid frame starting at the next one. When the head byte pair names a
 * function code it cannot size, it looks ahead for a complete CRC-valid frame and skips to it, so garbage before a
 * good request costs only the garbage, not a silence. Bytes dropped in one run are reported once through
 * `onBadFrame(count)`.
 *
 * Bounded: at most MODBUS_RTU_MAX_ADU bytes wait; a longer run without a frame is discarded and reported.
 */

const C = require('../../base/constants');
const { rtuRequestLength, rtuCrcOk } = require('../../drivers/modbus/frame');

/** Smallest RTU ADU: address, function code, CRC */
const MIN_ADU = 4;

class RtuRequestFramer {
  /**
   * @param {object} o
   * @param {(buf: Buffer, start: number, end: number) => void} o.onFrame a CRC-checked ADU at buf[start, end);
   *   the buffer is reused: copy what must outlive the call
   * @param {(discardedBytes: number) => void} [o.onBadFrame] bytes discarded while resynchronising
   * @param {number} [o.maxAdu=MODBUS_RTU_MAX_ADU]
   */
  constructor ({ onFrame, onBadFrame, maxAdu = C.MODBUS_RTU_MAX_ADU }) {
    this._onFrame = onFrame;
    this._onBadFrame = onBadFrame || (() => {});
    this._max = maxAdu;
    // Room for one whole ADU plus as much again, so each copy-in step makes progress.
    this._buf = Buffer.allocUnsafe(2 * maxAdu);
    this._len = 0;
    this._discarded = 0;
  }

  /** @returns {number} bytes waiting for the rest of their frame (or for silence) */
  get pendingBytes () {
    return this._len;
  }

  /**
   * Feeds received bytes; complete frames are delivered before it returns.
   * @param {Buffer} chunk
   */
  push (chunk) {
    let i = 0;
    while (i < chunk.length) {
      const n = Math.min(this._buf.length - this._len, chunk.length - i);
      chunk.copy(this._buf, this._len, i, i + n);
      this._len += n;
      i += n;
      this._scan(false);
    }
    if (this._len === 0) this._reportDiscarded();
  }

  /** The line went silent: end the current frame (deliver it if its CRC holds, else resync through it). */
  flush () {
    if (this._len >= MIN_ADU && rtuRequestLength(this._view()) === -1 && rtuCrcOk(this._view())) {
      // A function code we cannot size, ended by silence as the spec frames it: let the model answer it.
      const len = this._len;
      this._len = 0;
      this._reportDiscarded();
      this._onFrame(this._buf, 0, len);
      return;
    }
    while (this._len > 0) {
      this._drop(1);
      this._scan(true);
    }
    this._reportDiscarded();
  }

  /** Forgets everything waiting (device reset). */
  reset () {
    this._len = 0;
    this._discarded = 0;
  }

  _view () {
    return this._buf.subarray(0, this._len);
  }

  /**
   * Delivers every complete frame at the head, dropping bytes that cannot start one.
   * @param {boolean} ending called from flush: a frame of unknown length cannot be waited for
   */
  _scan (ending) {
    while (this._len >= 2) {
      const need = rtuRequestLength(this._view());
      if (need === 0) break;
      if (need === -1) {
        if (ending || this._len >= this._max) {
          this._drop(1);
          continue;
        }
        // Unknown function code: either a request we cannot size (ended by silence) or garbage. A complete,
        // CRC-valid frame further on means garbage: skip to it now rather than wait for the silence.
        const at = this._findFrame();
        if (at < 0) break;
        this._drop(at);
        continue;
      }
      if (need > this._max) {
        this._drop(1);
        continue;
      }
      if (this._len < need) break;
      if (!rtuCrcOk(this._buf.subarray(0, need))) {
        this._drop(1);
        continue;
      }
      this._reportDiscarded();
      this._onFrame(this._buf, 0, need);
      this._consume(need);
    }
  }

  /**
   * @returns {number} offset of the first complete, CRC-valid frame of known length after the head, or -1
   */
  _findFrame () {
    for (let k = 1; k + MIN_ADU <= this._len; k++) {
      const rest = this._buf.subarray(k, this._len);
      const need = rtuRequestLength(rest);
      if (need > 0 && need <= rest.length && need <= this._max && rtuCrcOk(rest.subarray(0, need))) return k;
    }
    return -1;
  }

  _drop (n) {
    this._discarded += n;
    this._consume(n);
  }

  _consume (n) {
    // onFrame may have reset the framer (a fault resets the device): never go below empty.
    if (n >= this._len) {
      this._len = 0;
      return;
    }
    this._buf.copy(this._buf, 0, n, this._len);
    this._len -= n;
  }

  _reportDiscarded () {
    if (this._discarded > 0) {
      const n = this._discarded;
      this._discarded = 0;
      this._onBadFrame(n);
    }
  }
}

module.exports = { RtuRequestFramer };
