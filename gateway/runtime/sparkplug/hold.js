'use strict';

const path = require('node:path');
const Long = require('long');
const { MemoryStore, SpoolStore } = require('../mqtt/message-store');
const D = require('./defaults');

/**
 * Store and forward for the edge node: the DATA (NDATA, DDATA) it could not publish because its
 * primary host was offline (or the broker away), oldest first, to be published again as
 * historical once the host is back. Bounded, and every message dropped is counted.
 *
 * Two places, the publisher's own (mqtt/message-store.js): with `mqtt.spool` the held DATA goes to
 * disk (`<spool dir>/sparkplug`, a spool of its own capped at `hold.maxBytes`), survives a restart
 * and a SIGKILL, and memory takes only what the disk refuses; without it, memory, capped at
 * `hold.maxMessages` and `hold.maxBytes`. Full: the oldest go first (a host gets the most recent
 * history), counted in `dropped`.
 *
 * A held message: {device: string|null (null: the node's NDATA), ts, metrics}, the metrics as
 * sparkplug-payload takes them (aliases, no names, is_historical set). Kept as JSON, with 64-bit
 * values (Long) as decimal text so every digit survives.
 */

/** Spool "job" of the node's own DATA (a device id is never empty) */
const NODE_JOB = '';

/**
 * @param {object} metrics sparkplug-payload metrics
 * @returns {Buffer}
 */
function encodeHeld (metrics) {
  return Buffer.from(JSON.stringify(metrics, function (key, v) {
    const raw = this[key];
    return Long.isLong(raw) ? { $long: raw.toString(), unsigned: raw.unsigned } : v;
  }));
}

/**
 * @param {Buffer} bytes
 * @returns {object[]} the metrics, 64-bit values as Long again
 */
function decodeHeld (bytes) {
  return JSON.parse(bytes.toString('utf8'), (key, v) => (v !== null && typeof v === 'object' && typeof v.$long === 'string' ? Long.fromString(v.$long, v.unsigned) : v));
}

class HeldData {
  /**
   * @param {object} opts
   * @param {number} opts.maxMessages
   * @param {number} opts.maxBytes
   * @param {{dir: string, syncIntervalMs: number}|null} [opts.spool] the gateway's mqtt.spool: hold on disk
   * @param {(n: number) => void} [opts.onDrop] messages dropped (full, damaged on disk)
   * @param {(err: import('../../base/errors').NinesError) => void} [opts.onError] file errors
   * @param {() => number} [opts.now]
   */
  constructor ({ maxMessages, maxBytes, spool = null, onDrop = () => {}, onError = () => {}, now = Date.now }) {
    this._now = now;
    this._onError = onError;
    /** @type {() => void} set by the owner: held messages on disk may now be read back */
    this.onDurable = () => {};
    this._onDrop = onDrop;
    this.dropped = 0;
    /** @type {object|null} a message handed out and given back (putBack): the next one out */
    this._back = null;
    /** read times of what is held, oldest first (for the oldest held age) */
    this._times = [];
    this._head = 0;
    const drop = (_kind, _job, n) => {
      this.dropped += n;
      this._forget(n);
      this._onDrop(n);
    };
    this.memory = new MemoryStore({ maxItems: maxMessages, maxBytes, onDrop: drop });
    this.store = this.memory;
    this.dir = null;
    if (spool) {
      const dir = path.join(spool.dir, D.HOLD_DIR);
      try {
        this.store = SpoolStore.open({ dir, maxBytes, syncIntervalMs: spool.syncIntervalMs, memory: this.memory, topic: () => '', onDrop: drop, onIoError: onError, onDurable: () => this.onDurable(), extra: () => ({}) });
        this.dir = dir;
        this._recovered();
      } catch (err) {
        // a folder that cannot be used: reported, and memory holds instead
        onError(err);
      }
    }
  }

  /** @returns {number} messages held (not yet published again) */
  get count () { return this.store.length + (this._back === null ? 0 : 1); }

  /**
   * @param {number} [now]
   * @returns {number|null} age of the oldest held message, ms; null when none is held
   */
  oldestAgeMs (now = this._now()) {
    return this.count === 0 || this._head >= this._times.length ? null : Math.max(0, now - this._times[this._head]);
  }

  /**
   * Holds one DATA message.
   * @param {string|null} device null for the node's NDATA
   * @param {number} ts epoch ms, its read time
   * @param {object[]} metrics
   */
  push (device, ts, metrics) {
    const payload = encodeHeld(metrics);
    this._times.push(ts);
    this.store.push({ kind: 'value', job: device === null ? NODE_JOB : device, topic: '', payload, bytes: payload.length, time: ts });
  }

  /**
   * The oldest held message, taken out; ack() it once published. On disk, only what is durable is
   * handed out: undefined with `count` > 0 means "wait for onDurable".
   * @returns {{device: string|null, ts: number, metrics: object[], msg: object}|undefined}
   */
  next () {
    if (this._back !== null) {
      const back = this._back;
      this._back = null;
      this._forget(1);
      return back;
    }
    const msg = this.store.next();
    if (msg === undefined) return undefined;
    this._forget(1);
    let metrics;
    try {
      metrics = decodeHeld(msg.payload);
    } catch {
      // not ours any more (the CRC held, the JSON did not): counted, never published
      this.store.ack(msg);
      this.dropped++;
      this._onDrop(1);
      return this.next();
    }
    return { device: msg.job === NODE_JOB ? null : msg.job, ts: msg.time, metrics, msg };
  }

  /** @param {{msg: object}} held published */
  ack (held) { this.store.ack(held.msg); }

  /**
   * Gives back the message next() handed out last, unpublished: it is the next one out again.
   * @param {{ts: number}} held
   */
  putBack (held) {
    this._back = held;
    if (this._head > 0) this._head--;
    else this._times.unshift(held.ts);
  }

  /**
   * The replay emptied the hold: on disk, the cursor is saved now rather than within the spool's
   * checkpoint interval, so a SIGKILL right after a replay does not make the next start send it again.
   */
  settled () {
    if (this.dir === null || this.store === this.memory) return;
    try {
      this.store.spool.checkpoint();
    } catch (err) {
      this._onError(err);
    }
  }

  /** Stops: what is on disk stays for the next start; what only memory held is dropped (counted). */
  close () {
    // one given back is still out: on disk it stays for the next start, in memory it is let go
    const n = this.store.close(this._back !== null ? [this._back.msg] : []);
    this._back = null;
    if (n > 0) this.dropped += n;
  }

  _forget (n) {
    this._head = Math.min(this._times.length, this._head + n);
    if (this._head > 1024 && this._head * 2 > this._times.length) {
      this._times = this._times.slice(this._head);
      this._head = 0;
    }
  }

  /** Held messages a previous run left on disk: their ages, from the oldest's read time */
  _recovered () {
    const n = this.store.length;
    if (n === 0) return;
    const first = this.store.spool.next();
    const t = first ? first.rec.time : this._now();
    this.store.spool.rewind();
    for (let i = 0; i < n; i++) this._times.push(t);
  }
}

module.exports = { HeldData };
