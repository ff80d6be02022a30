'use strict';

/**
 * CR framing for the ASCII protocol, in the manner of serialport's parser-delimiter but bounded:
 * push() takes bytes in any split (a byte at a time, several replies in one chunk) and hands out
 * each complete line without its CR, as latin1 text [DOC: one CR ends every reply].
 *
 * Rules:
 * - A line longer than maxLineBytes (255 [OURS]) is discarded up to the next CR. The drop is
 *   announced when the limit is crossed (so a waiting request can fail at once) and counted in
 *   discardedFrames / discardedBytes. Bytes held are therefore always ≤ maxLineBytes.
 * - LF bytes are dropped and counted in ignoredLf [OURS]: the device never sends LF, but a serial
 *   converter or a hand-made simulator may send CR LF, and a kept LF would become the first byte
 *   of the next reply and break its lead.
 * - An empty line (a lone CR) is dropped and counted in emptyLines [OURS]: no DCON reply is empty
 *   (the shortest is `>`), and taking it as a reply would fail the request and desynchronise.
 */

const { EventEmitter } = require('node:events');
const C = require('../../base/constants');

const CR = 0x0d;

class AsciiFramer extends EventEmitter {
  /**
   * @param {object} [opts]
   * @param {number} [opts.maxLineBytes=255] longest line kept, CR excluded
   * @param {(line: string) => void} [opts.onLine] called for each line (default: emit 'line')
   * @param {(info: {maxLineBytes: number}) => void} [opts.onOverflow] called when a line crosses the
   *   limit (default: emit 'overflow'); its remaining bytes up to the CR are then discarded
   */
  constructor ({ maxLineBytes = C.ASCII_MAX_LINE_BYTES, onLine, onOverflow } = {}) {
    super();
    this.maxLineBytes = maxLineBytes;
    this._onLine = onLine || ((line) => this.emit('line', line));
    this._onOverflow = onOverflow || ((info) => this.emit('overflow', info));
    this._buf = '';
    this._discarding = false;
    /** lines dropped for being too long */
    this.discardedFrames = 0;
    /** bytes dropped: over-long lines and partial lines dropped by dropPartial() */
    this.discardedBytes = 0;
    this.ignoredLf = 0;
    this.emptyLines = 0;
  }

  /** @returns {number} bytes of an unfinished line held, always ≤ maxLineBytes */
  get bufferedBytes () { return this._buf.length; }

  /** @returns {boolean} true while the rest of an over-long line is being discarded */
  get discarding () { return this._discarding; }

  /**
   * Feeds received bytes; calls onLine synchronously for every line completed by them.
   * @param {Buffer|string} chunk (a string is taken as latin1)
   */
  push (chunk) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk;
    let start = 0;
    while (start < buf.length) {
      const cr = buf.indexOf(CR, start);
      this._append(buf, start, cr === -1 ? buf.length : cr);
      if (cr === -1) return;
      start = cr + 1;
      if (this._discarding) {
        this._discarding = false;
      } else if (this._buf.length === 0) {
        this.emptyLines++;
      } else {
        const line = this._buf;
        this._buf = '';
        this._onLine(line);
      }
    }
  }

  _append (buf, start, end) {
    if (start === end) return;
    let text = buf.toString('latin1', start, end);
    if (text.indexOf('\n') !== -1) {
      const before = text.length;
      text = text.replace(/\n/g, '');
      this.ignoredLf += before - text.length;
    }
    if (this._discarding) {
      this.discardedBytes += text.length;
      return;
    }
    if (this._buf.length + text.length <= this.maxLineBytes) {
      this._buf += text;
      return;
    }
    this.discardedBytes += this._buf.length + text.length;
    this.discardedFrames++;
    this._buf = '';
    this._discarding = true;
    this._onOverflow({ maxLineBytes: this.maxLineBytes });
  }

  /**
   * Drops an unfinished line (counted in discardedBytes) but keeps discarding an over-long one up
   * to its CR. The client calls this before writing a command: bytes received before the write
   * cannot be part of its reply.
   * @returns {number} bytes dropped
   */
  dropPartial () {
    const n = this._buf.length;
    this.discardedBytes += n;
    this._buf = '';
    return n;
  }

  /** Forgets all framing state (new connection); counters are kept. */
  reset () {
    this.dropPartial();
    this._discarding = false;
  }
}

module.exports = { AsciiFramer };
