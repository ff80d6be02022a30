'use strict';

const { BoundedQueue } = require('./bounded-queue');

/**
 * Where the publisher's ordered messages (latency summaries, values) wait for the broker: a FIFO
 * that hands out the oldest, takes acknowledgements, and on a lost connection takes back what was
 * handed out and not acknowledged, so it goes again in order. Two kinds:
 * - MemoryStore: the bounded in-memory FIFO (mqtt.buffer);
 * - SpoolStore: the disk spool (mqtt.spool) in front, the memory FIFO behind it for when the disk
 *   fails (full, read-only, gone): nothing stops, and what cannot be written waits in memory.
 *
 * A message: {kind, job, topic, payload: Buffer, bytes, seq?, time?}. Drops are reported through
 * onDrop(kind, job, n), never silent.
 */

class MemoryStore {
  /**
   * @param {object} opts
   * @param {number} opts.maxItems
   * @param {number} opts.maxBytes
   * @param {(kind: string, job: string, n: number) => void} opts.onDrop
   */
  constructor ({ maxItems, maxBytes, onDrop }) {
    this._q = new BoundedQueue({ maxItems, maxBytes });
    this._onDrop = onDrop;
  }

  /** @returns {number} messages waiting (not handed out) */
  get length () { return this._q.length; }
  /** @returns {number} their bytes */
  get bytes () { return this._q.bytes; }

  /** @param {object} msg */
  push (msg) { this._dropAll(this._q.push(msg)); }

  /** @returns {object|undefined} the oldest waiting message, handed out */
  next () { return this._q.shift(); }

  /** @param {object} msg acknowledged by the broker */
  ack (msg) { /* gone from memory once handed out */ }

  /**
   * @param {object[]} msgs handed out and not acknowledged, oldest first: back at the head
   */
  rewind (msgs) { this._dropAll(this._q.requeue(msgs)); }

  /**
   * Stop: what never went out is dropped (counted).
   * @param {object[]} outstanding handed out and never acknowledged
   * @returns {number} messages let go
   */
  close (outstanding) {
    const left = this._q.drain().concat(outstanding);
    this._dropAll(left);
    return left.length;
  }

  _dropAll (msgs) {
    for (const m of msgs) this._onDrop(m.kind, m.job, 1);
  }
}

/** After a failed write, the disk is tried again for the next message at most this often */
const RETRY_MS = 5000;

class SpoolStore {
  /**
   * @param {object} opts
   * @param {import('./spool').Spool} opts.spool opened
   * @param {MemoryStore} opts.memory for what the disk will not take
   * @param {(kind: string, job: string) => string} opts.topic topic of a spooled record
   * @param {(err: import('../../base/errors').NinesError) => void} opts.onIoError a failed write (NINES_ERR_IO)
   * @param {() => number} [opts.now]
   */
  constructor ({ spool, memory, topic, onIoError, now = Date.now }) {
    this.spool = spool;
    this.memory = memory;
    this._topic = topic;
    this._onIoError = onIoError;
    this._now = now;
    this._failedAt = null;
    /** messages the disk refused (each one went to memory instead) */
    this.writeErrors = 0;
  }

  /**
   * Opens a spool (recovering what a previous run left) and puts it in front of `memory`.
   * @param {object} o
   * @param {string} o.dir
   * @param {number} o.maxBytes
   * @param {number} o.syncIntervalMs
   * @param {MemoryStore} o.memory
   * @param {(kind: string, job: string) => string} o.topic
   * @param {(kind: string, job: string, n: number) => void} o.onDrop
   * @param {(err: import('../../base/errors').NinesError) => void} o.onIoError
   * @param {() => void} o.onDurable
   * @param {() => object} o.extra kept in the spool's state (spool.savedExtra after a restart)
   * @returns {SpoolStore}
   * @throws {import('../../base/errors').NinesError} NINES_ERR_IO when the folder cannot be used
   */
  static open (o) {
    const { Spool } = require('./spool');
    const spool = new Spool({ dir: o.dir, maxBytes: o.maxBytes, syncIntervalMs: o.syncIntervalMs, onDrop: o.onDrop, onError: o.onIoError, onDurable: o.onDurable, extra: o.extra });
    spool.open();
    return new SpoolStore({ spool, memory: o.memory, topic: o.topic, onIoError: o.onIoError });
  }

  /** @returns {{records: number, bytes: number, writeErrors: number, corruptBytes: number}} for the status */
  stats () {
    return { records: this.spool.length, bytes: this.spool.bytes, writeErrors: this.writeErrors, corruptBytes: this.spool.counts.corruptBytes };
  }

  /** @returns {number} waiting: on disk and not handed out, plus in memory */
  get length () { return this.spool.length - this.spool.outstanding + this.memory.length; }
  get bytes () { return this.memory.bytes; }

  /** @param {object} msg */
  push (msg) {
    // everything on disk is older than everything in memory (the disk is read first); so once a
    // write failed, the disk is tried again only when memory is empty, and not too often
    if (this.memory.length === 0 && (this._failedAt === null || this._now() - this._failedAt >= RETRY_MS)) {
      try {
        this.spool.append({ kind: msg.kind, job: msg.job, seq: msg.seq, time: msg.time, payload: msg.payload });
        this._failedAt = null;
        return;
      } catch (err) {
        this._failedAt = this._now();
        this.writeErrors++;
        this._onIoError(err);
      }
    } else if (this._failedAt !== null) {
      this.writeErrors++;
    }
    // a restart numbers on after it (whether memory sends it or counts it dropped), never reusing its seq
    if (msg.kind === 'latency') this.spool.noteJob(msg);
    this.memory.push(msg);
  }

  /** @returns {object|undefined} the oldest durable record on disk, else the oldest in memory */
  next () {
    const entry = this.spool.next();
    if (entry) {
      const r = entry.rec;
      return { kind: r.kind, job: r.job, topic: this._topic(r.kind, r.job), payload: r.payload, bytes: r.payload.length, seq: r.seq, time: r.time, entry };
    }
    // memory holds only what is newer than the whole disk: not while the disk still has records
    if (this.spool.length > this.spool.outstanding) return undefined;
    return this.memory.next();
  }

  /** @param {object} msg */
  ack (msg) { if (msg.entry) this.spool.ack(msg.entry); }

  /** @param {object[]} msgs handed out and not acknowledged, oldest first */
  rewind (msgs) {
    this.spool.rewind();
    this.memory.rewind(msgs.filter((m) => !m.entry));
  }

  /** Records on disk stay for the next start; what only memory held is dropped. @returns {number} let go */
  close (outstanding) {
    const n = this.memory.close(outstanding.filter((m) => !m.entry));
    this.spool.close();
    return n;
  }
}

module.exports = { MemoryStore, SpoolStore };
