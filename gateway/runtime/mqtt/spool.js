'use strict';

const nodeFs = require('node:fs');
const path = require('node:path');
const { NinesError } = require('../../base/errors');
const { encodeRecord, walkRecords, nextRecordAt, MAX_RECORD_BYTES, FLAG_BREAK } = require('./spool-record');
const { SegmentReader } = require('./spool-reader');
const { StateFile } = require('./spool-state');
const { LossTally } = require('./spool-losses');

/** A position is segment index × SEG_SPAN + offset: one number, ordered like the log */
const SEG_SPAN = 2 ** 27;
const SEG_RE = /^(\d{12})\.seg$/;
/** Segments: a sixteenth of the cap, between these bounds, so dropping the oldest frees little at a time */
const SEG_MIN = 64 * 1024;
const SEG_MAX = 16 * 1024 * 1024;

const posOf = (index, off) => index * SEG_SPAN + off;
const segOf = (pos) => Math.floor(pos / SEG_SPAN);
const offOf = (pos) => pos % SEG_SPAN;
const segName = (index) => `${String(index).padStart(12, '0')}.seg`;

/**
 * A disk spool: an append-only log of framed records (spool-record.js, CRC-32 each) in segment
 * files, read back in the order written, bounded on disk by `maxBytes`.
 *
 * Why our own log and not an embedded database: the spool is a FIFO whose cap must hold on disk
 * (LevelDB and LMDB keep deleted data until compaction or reuse, so their files are not bounded by
 * what is live), it needs no index, and it must install on every edge PC without a native build.
 *
 * Durability (the fsync policy):
 * - every append is written at once (write(2)): a SIGKILL of the gateway loses nothing written;
 * - written records are made durable by fdatasync(2) in the background, at most once per
 *   `syncIntervalMs` (group commit), and a record is handed out by next() only once it is durable,
 *   so nothing is ever published that a power loss could take back. A power loss loses at most the
 *   records of the last `syncIntervalMs`, none of which had been published;
 * - the read cursor (what the broker acknowledged) and each job's last numbers are checkpointed
 *   (spool-state.js: two fixed-size slots written in place, so a full disk does not stop it) at
 *   most once per `checkpointIntervalMs` while records come or are acknowledged, when asked (a lost
 *   connection, a stop), and always before a segment is deleted. After a crash the records
 *   acknowledged since the last checkpoint are sent again (at-least-once, the same bytes);
 * - a torn or corrupt record is skipped: the reader resynchronises at the next good record
 *   (spool-record.js walkRecords), so only the damaged records are lost, and opening the spool
 *   counts them per job (spool-losses.js) through `onDrop`. A torn tail of the last segment is cut.
 *
 * Full: appending past `maxBytes` deletes the oldest segment first; its records that were never
 * handed out are reported through `onDrop` (counted per job), those handed out and not yet
 * acknowledged are reported if they are not acknowledged after all. A disk that fills before the
 * cap (ENOSPC) frees what was delivered (the checkpoint needs no new space) and the write is tried
 * once more.
 */
class Spool {
  /**
   * @param {object} opts
   * @param {string} opts.dir created if missing
   * @param {number} opts.maxBytes cap of the segment files together (>= 4 × 64 KiB)
   * @param {number} [opts.syncIntervalMs=100] at most one fdatasync round per this
   * @param {number} [opts.checkpointIntervalMs=1000]
   * @param {(kind: string, job: string, n: number) => void} [opts.onDrop] records lost to the cap
   * @param {(err: NinesError) => void} [opts.onError] background IO failures (sync, checkpoint)
   * @param {() => void} [opts.onDurable] more records may be ready for next()
   * @param {() => object} [opts.extra] what the owner wants kept in the checkpoint beside the cursor
   * @param {typeof nodeFs} [opts.fs] injectable for tests (disk full)
   */
  constructor ({ dir, maxBytes, syncIntervalMs = 100, checkpointIntervalMs = 1000, onDrop = () => {}, onError = () => {}, onDurable = () => {}, extra = () => ({}), fs = nodeFs }) {
    this.dir = dir;
    this.maxBytes = maxBytes;
    this.segmentBytes = Math.max(SEG_MIN, Math.min(SEG_MAX, Math.floor(maxBytes / 16)));
    this.syncIntervalMs = syncIntervalMs;
    this.checkpointIntervalMs = checkpointIntervalMs;
    this._onDrop = onDrop;
    this._onError = onError;
    this._onDurable = onDurable;
    this._extra = extra;
    this.fs = fs;
    /** @type {Array<{index: number, size: number, file: string}>} oldest first; the last is written */
    this._segs = [];
    this._fd = null;
    this._sealed = false;
    this._dirty = new Set();
    this._retired = [];
    this._bytes = 0;
    this._count = 0;
    this._cursor = 0;
    this._readPos = 0;
    this._writePos = 0;
    this._durablePos = 0;
    /** @type {Array<{pos: number, next: number, rec: object, acked: boolean, orphan: boolean}>} handed out, in log order */
    this._out = [];
    this._reader = new SegmentReader(fs);
    this._syncing = false;
    this._syncTimer = null;
    this._lastSyncAt = 0;
    this._checkpointTimer = null;
    this._stateDirty = false;
    this._closed = false;
    /** @type {Map<string, {seq: number, end: number}>} each job's last spooled summary */
    this.jobs = new Map();
    /** @type {Map<string, number>} each job's last spooled value's number */
    this._valueNos = new Map();
    /** the next summary appended follows numbers that may have gone elsewhere (FLAG_BREAK) */
    this._breakNext = true;
    /** damage up to this position has been counted (by this open, or an earlier one) */
    this._lossesTo = 0;
    /** @type {StateFile|null} */
    this._state = null;
    /** what extra() returned when the checkpoint was last written, as read at open */
    this.savedExtra = {};
    this.counts = { appended: 0, corruptBytes: 0, syncs: 0, dropped: 0 };
  }

  /**
   * Opens the folder and recovers: reads the checkpoint, checks every record of every segment
   * (skipping damaged ones, cutting off a torn tail), learns each job's last numbers and reports
   * through onDrop, per job, the undelivered records that damage took. Synchronous: it runs once,
   * before polling.
   * @returns {{records: number, bytes: number, corruptBytes: number}} what waits to be sent
   * @throws {NinesError} NINES_ERR_IO when the folder cannot be created or read
   */
  open () {
    const fs = this.fs;
    let state;
    try {
      fs.mkdirSync(this.dir, { recursive: true });
      this._state = new StateFile(fs, this.dir, () => this._syncDir());
      state = this._state.read();
      this.savedExtra = state.extra || {};
      for (const [job, s] of Object.entries(state.jobs || {})) this.jobs.set(job, { seq: s.seq, end: s.end });
      for (const [job, n] of Object.entries(state.values || {})) if (Number.isInteger(n)) this._valueNos.set(job, n);
      const cursor = state.cursor ? posOf(state.cursor.seg, state.cursor.off) : 0;
      const tally = new LossTally(Math.max(cursor, state.lossesTo ? posOf(state.lossesTo.seg, state.lossesTo.off) : 0));
      const names = fs.readdirSync(this.dir).filter((n) => SEG_RE.test(n)).sort();
      const files = names.map((name) => path.join(this.dir, name)).filter((file) => fs.lstatSync(file).isFile());
      files.forEach((file, i) => {
        const seg = { index: Number(SEG_RE.exec(path.basename(file))[1]), size: 0, file, holes: [] };
        this._scan(seg, cursor, tally, i === files.length - 1);
        this._segs.push(seg);
        this._bytes += seg.size;
      });
      // damage after a job's last good record, or a log cut short: what the checkpoint knew of and the log lost
      const end = this._segs.length ? posOf(this._segs[this._segs.length - 1].index, this._segs[this._segs.length - 1].size) : 0;
      tally.cutShort = Boolean(state.end) && end < posOf(state.end.seg, state.end.off);
      for (const [job, s] of Object.entries(state.jobs || {})) tally.checkpointed('latency', job, s.seq);
      for (const [job, n] of Object.entries(state.values || {})) tally.checkpointed('value', job, n);
      for (const { kind, job, n } of tally.losses()) this._drop(kind, job, n);
      if (this._segs.length === 0) {
        const next = state.cursor ? state.cursor.seg + 1 : 1;
        this._segs.push({ index: next, size: 0, file: path.join(this.dir, segName(next)), holes: [] });
      }
      const active = this._segs[this._segs.length - 1];
      this._fd = fs.openSync(active.file, 'a');
      // what was written before a SIGKILL may still be only in the page cache
      fs.fdatasyncSync(this._fd);
      this._writePos = this._durablePos = posOf(active.index, active.size);
      if (active.size >= this.segmentBytes) this._sealed = true;
      this._cursor = this._readPos = this._normalize(Math.max(cursor, posOf(this._segs[0].index, 0)));
      this._lossesTo = this._writePos;
    } catch (err) {
      throw this._ioError('open', this.dir, err);
    }
    // the checkpoint's room is taken now, while there is some; the losses just counted are written
    // with the owner's counts at the next checkpoint (an open that crashes first counts them again)
    try {
      if (!this._state.ready) this._state.write({ ...state, v: 1 });
    } catch (err) {
      this._onError(this._ioError('checkpoint', this._state.file, err));
    }
    if (this.counts.dropped > 0) this._markState();
    return { records: this._count, bytes: this._bytes, corruptBytes: this.counts.corruptBytes };
  }

  /** @returns {number} records not yet acknowledged (handed out or waiting) */
  get length () { return this._count; }
  /** @returns {number} records handed out by next() and not yet acknowledged */
  get outstanding () { return this._out.length; }
  /** @returns {number} bytes of the segment files */
  get bytes () { return this._bytes; }

  /**
   * Appends a record (written at once, durable within syncIntervalMs). May delete the oldest
   * segment first to stay under maxBytes.
   * @param {import('./spool-record').SpoolRecord} rec
   * @throws {NinesError} NINES_ERR_IO (ENOSPC, EIO, EFBIG…): the record is not in the spool
   */
  append (rec) {
    return this._append(rec, true);
  }

  /**
   * Notes a summary that went elsewhere (the memory buffer, the disk having refused it), so that a
   * restart numbers on after it: its fate (sent, or dropped and counted) is the buffer's.
   * @param {{job: string, seq: number, time: number}} rec
   */
  noteJob (rec) {
    if (!Number.isInteger(rec.seq)) return;
    this._noteJob(rec);
    this._breakNext = true;
    this._markState();
  }

  _append (rec, mayRetry) {
    // a value's number is the spool's (one up per value of its job); a summary's seq its own
    const numbered = rec.kind === 'value' ? { ...rec, seq: (this._valueNos.get(rec.job) || 0) + 1 } : rec;
    const buf = encodeRecord(rec.kind === 'latency' && this._breakNext ? { ...numbered, flags: FLAG_BREAK } : numbered);
    if (buf.length > MAX_RECORD_BYTES || buf.length > this.segmentBytes) {
      throw new NinesError('NINES_ERR_IO', `a ${rec.kind} record of ${buf.length} bytes does not fit the spool's ${this.segmentBytes}-byte segments`, { file: this.dir, cause: 'EFBIG' });
    }
    const fs = this.fs;
    let active = this._segs[this._segs.length - 1];
    if (this._sealed || active.size + buf.length > this.segmentBytes) active = this._roll();
    while (this._bytes + buf.length > this.maxBytes && this._segs.length > 1) this._dropOldest();
    let done = 0;
    try {
      while (done < buf.length) done += fs.writeSync(this._fd, buf, done, buf.length - done);
    } catch (err) {
      // cut back what part of the record went in, and never append after it again: a new segment
      // gets the next record, so no torn record sits between two good ones
      if (done > 0) { try { fs.ftruncateSync(this._fd, active.size); } catch { /* the scan at open cuts it */ } }
      // (an empty segment that took nothing need not be replaced)
      if (done > 0 || active.size > 0) this._sealed = true;
      // a disk full of what was already delivered: free that, and try once more
      if (mayRetry && err.code === 'ENOSPC' && this._freeDelivered()) return this._append(rec, false);
      this._breakNext = true;
      throw this._ioError('write', active.file, err);
    }
    active.size += buf.length;
    this._bytes += buf.length;
    this._writePos = posOf(active.index, active.size);
    this._count++;
    this.counts.appended++;
    this._dirty.add(this._fd);
    if (rec.kind === 'latency') {
      this._noteJob(rec);
      this._breakNext = false;
    } else {
      this._valueNos.set(rec.job, numbered.seq);
    }
    this._scheduleSync();
    // the numbers just used go into the checkpoint: damage to the log's tail is then counted
    this._markState();
  }

  /**
   * The oldest durable record not yet handed out, or undefined. Acknowledge it with ack(), or
   * rewind() to have it again.
   * @returns {{rec: import('./spool-record').SpoolRecord}|undefined} an entry to pass to ack()
   */
  next () {
    while (this._readPos < this._durablePos) {
      const pos = this._readPos;
      const seg = this._segs.find((s) => s.index === segOf(pos));
      if (!seg) { this._readPos = this._normalize(pos); continue; }
      const got = this._reader.readAt(seg, offOf(pos));
      if (!got) {
        // damage found at open, or rot since: on to the next good record
        const end = this._holeEnd(seg, offOf(pos));
        this._readPos = end < seg.size ? posOf(seg.index, end) : this._nextSegStart(seg);
        continue;
      }
      const entry = { pos, next: posOf(seg.index, got.next), rec: got.rec, acked: false, orphan: false };
      this._out.push(entry);
      this._readPos = this._normalize(entry.next);
      return entry;
    }
    return undefined;
  }

  /**
   * The broker acknowledged a record: the cursor moves past every acknowledged record at its head.
   * @param {object} entry from next()
   */
  ack (entry) {
    entry.acked = true;
    while (this._out.length && this._out[0].acked) {
      const e = this._out.shift();
      this._count--;
      this._cursor = Math.max(this._cursor, this._normalize(e.next));
    }
    this._markState();
  }

  /** The connection dropped: every record handed out and not acknowledged will be read again. */
  rewind () {
    for (const e of this._out) {
      if (!e.orphan) continue;
      // its segment was deleted while it was out: unacknowledged, it is lost; acknowledged, it was delivered
      this._count--;
      if (!e.acked) this._drop(e.rec.kind, e.rec.job, 1);
    }
    this._out = [];
    this._readPos = this._cursor;
  }

  /**
   * Writes the checkpoint now (cursor, each job's last numbers, extra()) and deletes the segments
   * wholly acknowledged.
   * @throws {NinesError} NINES_ERR_IO
   */
  checkpoint () {
    clearTimeout(this._checkpointTimer);
    this._checkpointTimer = null;
    this._stateDirty = false;
    const state = {
      v: 1,
      cursor: { seg: segOf(this._cursor), off: offOf(this._cursor) },
      jobs: Object.fromEntries(this.jobs),
      values: Object.fromEntries(this._valueNos),
      lossesTo: { seg: segOf(this._lossesTo), off: offOf(this._lossesTo) },
      // where the log ended: a power loss that takes records not yet durable is then seen
      end: { seg: segOf(this._writePos), off: offOf(this._writePos) },
      extra: this._extra()
    };
    try {
      this._state.write(state);
    } catch (err) {
      this._stateDirty = true;
      throw this._ioError('checkpoint', this._state.file, err);
    }
    // only now that the checkpoint says the cursor is past them (and holds the jobs' numbers) may they go
    this._unlinkDelivered();
  }

  /**
   * Makes everything written durable, checkpoints and closes the files. Records not acknowledged
   * stay for the next open().
   */
  close () {
    if (this._closed) return;
    this._closed = true;
    clearTimeout(this._syncTimer);
    clearTimeout(this._checkpointTimer);
    // what is out and unacknowledged is read again at the next open; what of it lost its segment
    // to the cap is counted now, before the counts are checkpointed
    this.rewind();
    for (const fd of this._dirty) { try { this.fs.fdatasyncSync(fd); } catch { /* reported by the writes */ } }
    this._dirty.clear();
    try { this.checkpoint(); } catch (err) { this._onError(err); }
    for (const fd of this._retired.splice(0).concat(this._fd === null ? [] : [this._fd])) { try { this.fs.closeSync(fd); } catch { /* already gone */ } }
    this._fd = null;
    if (this._state) this._state.close();
    this._reader.close();
  }

  // ---- internals ----

  /**
   * Checks a segment at open, record by record, resynchronising past damage (kept as seg.holes so
   * the reader skips it, and told to the tally); the last segment's torn tail is cut off. Counts
   * what waits.
   */
  _scan (seg, cursor, tally, last) {
    const buf = this.fs.readFileSync(seg.file);
    walkRecords(buf, 0, (rec, off) => {
      tally.record(rec);
      if (rec.kind === 'latency') this._noteJob(rec);
      else if (rec.seq >= (this._valueNos.get(rec.job) || 0)) this._valueNos.set(rec.job, rec.seq);
      if (posOf(seg.index, off) >= cursor) this._count++;
    }, (start, end) => {
      this.counts.corruptBytes += end - start;
      tally.hole(posOf(seg.index, start), posOf(seg.index, end));
      seg.holes.push({ start, end });
    });
    seg.size = buf.length;
    const tail = seg.holes[seg.holes.length - 1];
    if (last && tail && tail.end === buf.length) {
      // appends go on after the last good record, never after garbage
      this.fs.truncateSync(seg.file, tail.start);
      seg.size = tail.start;
      seg.holes.pop();
    }
  }

  /**
   * The end of the damage at `off` in a segment: known from open (and counted then), or rot found
   * now, counted here: its bytes, and per job the gaps it leaves among the segment's own records.
   * A job whose neighbouring records lie in other segments, or beyond damage counted at open, is
   * not counted per job: only corruptBytes tells of it.
   * @returns {number} the offset of the next good record, or the segment's size
   */
  _holeEnd (seg, off) {
    const known = seg.holes.find((h) => h.start === off);
    if (known) return known.end;
    let buf = Buffer.alloc(0);
    try {
      buf = this.fs.readFileSync(seg.file).subarray(0, seg.size);
    } catch (err) {
      this._onError(this._ioError('read', seg.file, err));
    }
    const end = buf.length > off ? nextRecordAt(buf, off + 1) : seg.size;
    const tally = new LossTally(0);
    walkRecords(buf, 0, (rec) => tally.record(rec), (start, e) => { if (start === off) tally.hole(start, e); else tally.boundary(); });
    for (const { kind, job, n } of tally.losses()) {
      this._count -= n;
      this._drop(kind, job, n);
    }
    this.counts.corruptBytes += end - off;
    seg.holes.push({ start: off, end });
    return end;
  }

  _noteJob (rec) {
    const j = this.jobs.get(rec.job);
    if (!j || rec.seq >= j.seq) this.jobs.set(rec.job, { seq: rec.seq, end: rec.time });
  }

  /** A position at the end of a segment that is not the last is the start of the next one. */
  _normalize (pos) {
    for (const seg of this._segs) {
      if (seg.index < segOf(pos)) continue;
      if (seg.index > segOf(pos)) return posOf(seg.index, 0);
      if (offOf(pos) < seg.size || seg === this._segs[this._segs.length - 1]) return pos;
    }
    return this._writePos;
  }

  _nextSegStart (seg) {
    const i = this._segs.indexOf(seg);
    return i + 1 < this._segs.length ? posOf(this._segs[i + 1].index, 0) : this._writePos;
  }

  _roll () {
    const last = this._segs[this._segs.length - 1];
    const seg = { index: last.index + 1, size: 0, file: path.join(this.dir, segName(last.index + 1)), holes: [] };
    let fd;
    try {
      fd = this.fs.openSync(seg.file, 'a');
      this._syncDir();
    } catch (err) {
      if (fd !== undefined) { try { this.fs.closeSync(fd); } catch { /* ignore */ } }
      throw this._ioError('create', seg.file, err);
    }
    // the old file is closed once a sync round has made it durable
    if (this._fd !== null) this._retired.push(this._fd);
    this._fd = fd;
    this._sealed = false;
    this._segs.push(seg);
    if (this._readPos === this._writePos) this._readPos = posOf(seg.index, 0);
    if (this._cursor === this._writePos) this._cursor = posOf(seg.index, 0);
    if (this._durablePos === this._writePos) this._durablePos = posOf(seg.index, 0);
    this._writePos = posOf(seg.index, 0);
    this._scheduleSync();
    return seg;
  }

  /** The cap is reached: the oldest segment goes, and what in it was never delivered is counted. */
  _dropOldest () {
    const seg = this._segs[0];
    const next = posOf(this._segs[1].index, 0);
    const from = Math.max(this._readPos, posOf(seg.index, 0));
    if (from < next) {
      const lost = new Map();
      // damage in it was counted when the spool was opened
      walkRecords(this.fs.readFileSync(seg.file).subarray(0, seg.size), offOf(from), (rec) => {
        const key = `${rec.kind}\0${rec.job}`;
        lost.set(key, (lost.get(key) || 0) + 1);
      });
      for (const [key, n] of lost) {
        const [kind, job] = key.split('\0');
        this._count -= n;
        this._drop(kind, job, n);
      }
    }
    for (const e of this._out) if (e.pos < next) e.orphan = true;
    this._cursor = Math.max(this._cursor, next);
    this._readPos = Math.max(this._readPos, next);
    // the checkpoint must hold the jobs' numbers and the drop counts before the records that prove them go
    this.checkpoint();
    if (this._segs[0] === seg) this._unlinkOldest();
  }

  /**
   * Deletes the segments wholly acknowledged. The one being written goes too when a failed write
   * sealed it and all of it was delivered: a new one takes the appends (a full disk is often full of
   * that one segment). Call it only once the checkpoint is written.
   */
  _unlinkDelivered () {
    const active = this._segs[this._segs.length - 1];
    if (this._sealed && active.size > 0 && this._cursor >= this._writePos && !this._closed) {
      try { this._roll(); } catch (err) { this._onError(err); }
    }
    while (this._segs.length > 1 && posOf(this._segs[1].index, 0) <= this._cursor) this._unlinkOldest();
  }

  /**
   * The disk is full (ENOSPC): frees what was delivered, writing the checkpoint in place first.
   * @returns {boolean} whether a segment was deleted (a write may succeed now)
   */
  _freeDelivered () {
    const before = this._segs[0];
    try {
      this.checkpoint();
    } catch (err) {
      this._onError(err);
      return false;
    }
    return this._segs[0] !== before;
  }

  _unlinkOldest () {
    const seg = this._segs.shift();
    this._bytes -= seg.size;
    this._reader.close(seg.index);
    try { this.fs.unlinkSync(seg.file); } catch (err) { this._onError(this._ioError('delete', seg.file, err)); }
  }

  _drop (kind, job, n) {
    this.counts.dropped += n;
    this._onDrop(kind, job, n);
  }

  _scheduleSync () {
    if (this._syncTimer || this._syncing || this._closed) return;
    const waitMs = Math.max(0, this._lastSyncAt + this.syncIntervalMs - Date.now());
    this._syncTimer = setTimeout(() => { this._syncTimer = null; this._sync(); }, waitMs);
  }

  /** One group-commit round: fdatasync every file written since the last round, then hand out. */
  _sync () {
    if (this._closed) return;
    const target = this._writePos;
    const fds = [...this._dirty];
    this._dirty.clear();
    const retired = this._retired.splice(0);
    this._syncing = true;
    let failed = null;
    let i = 0;
    const step = (err) => {
      if (err && !failed) failed = err;
      if (i < fds.length && !this._closed) { this.fs.fdatasync(fds[i++], step); return; }
      this._syncing = false;
      this._lastSyncAt = Date.now();
      this.counts.syncs++;
      for (const fd of retired) { try { this.fs.closeSync(fd); } catch { /* ignore */ } }
      if (this._closed) return;
      // a failed fdatasync leaves the records written but maybe not durable: still sent (holding
      // them back would stop delivery for good), and reported
      if (failed) this._onError(this._ioError('sync', this.dir, failed));
      this._durablePos = Math.max(this._durablePos, target);
      if (this._dirty.size || this._retired.length) this._scheduleSync();
      this._onDurable();
    };
    step(null);
  }

  _markState () {
    this._stateDirty = true;
    if (this._checkpointTimer || this._closed) return;
    this._checkpointTimer = setTimeout(() => {
      this._checkpointTimer = null;
      if (!this._stateDirty) return;
      try { this.checkpoint(); } catch (err) { this._onError(err); }
    }, this.checkpointIntervalMs);
  }

  _syncDir () {
    let fd;
    try {
      fd = this.fs.openSync(this.dir, 'r');
      this.fs.fsyncSync(fd);
    } catch {
      // some file systems cannot fsync a folder; the rename or create is then as durable as they make it
    } finally {
      if (fd !== undefined) this.fs.closeSync(fd);
    }
  }

  _ioError (what, file, err) {
    if (err instanceof NinesError) return err;
    return new NinesError('NINES_ERR_IO', `spool ${what} ${file}: ${err.message}`, { file, cause: err.code });
  }
}

module.exports = { Spool };
