'use strict';

const path = require('node:path');
const { crc32 } = require('./spool-record');

const FILE = 'state.slots';
/** What spools before the slots kept: read once, removed when the slots are first written */
const LEGACY_FILE = 'state.json';
/** Slot: u32 LE length L of the JSON, u32 LE CRC-32 of bytes 8..16+L, f64 LE generation, JSON */
const SLOT_HEAD = 16;
/** The smallest slot; a slot has room for twice the state it was sized for (more jobs come) */
const MIN_SLOT = 2048;

/**
 * The spool's checkpoint (cursor, each job's last numbers, its owner's drop counts) in a file of
 * two fixed-size slots, written in place, alternately, each with its CRC-32 and a generation.
 *
 * Why in place: the checkpoint must be written before delivered segments may be deleted, and a
 * full disk refuses a new file (the write-and-rename it replaces needed one per checkpoint), so a
 * spool that had filled the disk could never free it again. Overwriting bytes already allocated
 * needs no new block (ext4, xfs, tmpfs; a copy-on-write file system such as btrfs or zfs may still
 * refuse). The file is written whole, zeros included, when it is made, never sparse.
 *
 * Crash safety: a write goes to the slot that does not hold the newest good state and is made
 * durable (fdatasync) before the caller deletes anything on its strength. A write torn by a crash
 * fails its CRC, and the other slot, the previous checkpoint, is read: still true, only older.
 * Only when the state outgrows its slot is a new, bigger file made (write, fsync, rename).
 */
class StateFile {
  /**
   * @param {typeof import('node:fs')} fs
   * @param {string} dir
   * @param {() => void} syncDir makes a rename in the folder durable
   */
  constructor (fs, dir, syncDir) {
    this.fs = fs;
    this.file = path.join(dir, FILE);
    this.legacy = path.join(dir, LEGACY_FILE);
    this._syncDir = syncDir;
    this._fd = null;
    this._slotBytes = 0;
    this._gen = 0;
    this._hasLegacy = false;
  }

  /** @returns {boolean} whether the file exists and is open: writes go in place */
  get ready () { return this._fd !== null; }

  /**
   * @returns {object} the newest good state ({} for a new spool)
   * @throws {Error} a read error other than a missing file
   */
  read () {
    // a new file that a crash kept from being renamed: it would only take space
    try { this.fs.unlinkSync(this.file + '.tmp'); } catch { /* none */ }
    let buf;
    try {
      buf = this.fs.readFileSync(this.file);
    } catch (err) {
      if (err.code !== 'ENOENT') throw err;
      return this._readLegacy();
    }
    this._slotBytes = buf.length / 2;
    // a file of another shape is replaced by the next write
    if (this._slotBytes >= MIN_SLOT && Number.isInteger(this._slotBytes)) this._fd = this.fs.openSync(this.file, 'r+');
    let best = null;
    for (const at of [0, this._slotBytes]) {
      const s = parseSlot(buf.subarray(at, at + this._slotBytes));
      if (s && (!best || s.gen > best.gen)) best = s;
    }
    if (!best) return {};
    this._gen = best.gen;
    return best.state;
  }

  /**
   * Writes a state durably: in place, or into a new file when there is none yet or it has outgrown
   * its slots. Open the spool with it (a state as read) so that its room is taken while there is some.
   * @param {object} state
   * @throws {Error} the file system's error (ENOSPC only when a new file was needed)
   */
  write (state) {
    const json = Buffer.from(JSON.stringify(state));
    const gen = this._gen + 1;
    if (this._fd === null || SLOT_HEAD + json.length > this._slotBytes) {
      this._create(json, gen);
    } else {
      const slot = encodeSlot(json, gen, SLOT_HEAD + json.length);
      writeAll(this.fs, this._fd, slot, (gen % 2) * this._slotBytes);
      this.fs.fdatasyncSync(this._fd);
    }
    this._gen = gen;
  }

  close () {
    if (this._fd === null) return;
    try { this.fs.closeSync(this._fd); } catch { /* already gone */ }
    this._fd = null;
  }

  _create (json, gen) {
    let slotBytes = MIN_SLOT;
    while (slotBytes < 2 * (SLOT_HEAD + json.length)) slotBytes *= 2;
    const whole = Buffer.alloc(2 * slotBytes);
    encodeSlot(json, gen, slotBytes).copy(whole, (gen % 2) * slotBytes);
    const tmp = this.file + '.tmp';
    const fd = this.fs.openSync(tmp, 'w');
    try {
      writeAll(this.fs, fd, whole, 0);
      this.fs.fsyncSync(fd);
    } finally {
      this.fs.closeSync(fd);
    }
    this.fs.renameSync(tmp, this.file);
    this._syncDir();
    this.close();
    this._fd = this.fs.openSync(this.file, 'r+');
    this._slotBytes = slotBytes;
    if (this._hasLegacy) {
      this._hasLegacy = false;
      try { this.fs.unlinkSync(this.legacy); } catch { /* the slots are read first anyway */ }
    }
  }

  _readLegacy () {
    try {
      const s = JSON.parse(this.fs.readFileSync(this.legacy, 'utf8'));
      this._hasLegacy = true;
      return s && s.v === 1 ? s : {};
    } catch (err) {
      if (err.code === 'ENOENT' || err instanceof SyntaxError) return {};
      throw err;
    }
  }
}

/** @returns {Buffer} a slot's bytes: header and JSON, zero-padded to `size` */
function encodeSlot (json, gen, size) {
  const slot = Buffer.alloc(size);
  slot.writeUInt32LE(json.length, 0);
  slot.writeDoubleLE(gen, 8);
  json.copy(slot, SLOT_HEAD);
  slot.writeUInt32LE(crc32(slot.subarray(8, SLOT_HEAD + json.length)), 4);
  return slot;
}

/** @returns {{gen: number, state: object}|null} null for an empty, torn or rotten slot */
function parseSlot (slot) {
  if (slot.length < SLOT_HEAD) return null;
  const len = slot.readUInt32LE(0);
  if (len === 0 || SLOT_HEAD + len > slot.length) return null;
  if (crc32(slot.subarray(8, SLOT_HEAD + len)) !== slot.readUInt32LE(4)) return null;
  try {
    const state = JSON.parse(slot.toString('utf8', SLOT_HEAD, SLOT_HEAD + len));
    return state && state.v === 1 ? { gen: slot.readDoubleLE(8), state } : null;
  } catch {
    return null;
  }
}

function writeAll (fs, fd, buf, pos) {
  let done = 0;
  while (done < buf.length) done += fs.writeSync(fd, buf, done, buf.length - done, pos + done);
}

module.exports = { StateFile, STATE_FILE: FILE };
