'use strict';

const { decodeRecord, HEAD_BYTES } = require('./spool-record');

/** Bytes read at a time: many records per read(2) while a backlog is replayed */
const READ_AHEAD = 256 * 1024;

/**
 * Reads a spool's records one at a time through a read-ahead buffer over one segment file at a
 * time (the spool reads in log order, so one open file and one buffer serve).
 */
class SegmentReader {
  /** @param {typeof import('node:fs')} fs */
  constructor (fs) {
    this.fs = fs;
    /** @type {{index: number, fd: number, buf: Buffer, start: number, len: number}|null} */
    this._rb = null;
  }

  /**
   * @param {{index: number, size: number, file: string}} seg
   * @param {number} off
   * @returns {{rec: import('./spool-record').SpoolRecord, next: number}|null} null: no good
   *   record starts there (damage, or the segment ends)
   */
  readAt (seg, off) {
    let need = READ_AHEAD;
    for (let attempt = 0; attempt < 2; attempt++) {
      const rb = this._rb;
      if (rb && rb.index === seg.index && off >= rb.start && off < rb.start + rb.len) {
        const at = off - rb.start;
        const d = decodeRecord(rb.buf.subarray(0, rb.len), at);
        if (!d.bad) return { rec: d.rec, next: rb.start + d.next };
        if (d.bad !== 'short') return null;
        // a record longer than the read-ahead: read it whole
        if (rb.len - at >= HEAD_BYTES) need = Math.max(need, HEAD_BYTES + rb.buf.readUInt32LE(at));
      }
      const want = Math.min(seg.size - off, need);
      if (want <= 0) return null;
      this._fill(seg, off, want);
    }
    return null;
  }

  /** Lets go of a segment's file (it is being deleted); undefined: whichever is open. @param {number} [index] */
  close (index) {
    const rb = this._rb;
    if (!rb || (index !== undefined && rb.index !== index)) return;
    try { this.fs.closeSync(rb.fd); } catch { /* already gone */ }
    this._rb = null;
  }

  _fill (seg, off, want) {
    if (this._rb && this._rb.index !== seg.index) this.close();
    if (!this._rb) this._rb = { index: seg.index, fd: this.fs.openSync(seg.file, 'r'), buf: Buffer.alloc(0), start: 0, len: 0 };
    const rb = this._rb;
    if (rb.buf.length < want) rb.buf = Buffer.allocUnsafe(want);
    let len = 0;
    while (len < want) {
      const n = this.fs.readSync(rb.fd, rb.buf, len, want - len, off + len);
      if (n === 0) break;
      len += n;
    }
    rb.start = off;
    rb.len = len;
  }
}

module.exports = { SegmentReader };
