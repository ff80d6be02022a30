'use strict';

const { mergeDigests } = require('./payloads');

/**
 * What waits for the broker, in the order it goes: the retained status first (one, always the
 * newest), then the error digests (one slot per topic: a newer digest merges into the one waiting),
 * then latency summaries in order, then values in order (message-store.js: bounded FIFOs in memory,
 * or the disk spool).
 *
 * @typedef {{kind: 'status'|'error'|'latency'|'value', topic: string, payload?: Buffer, job?: string,
 *   data?: import('./payloads').ErrorDigest, qos?: 0|1|2, retain?: boolean}} Message
 */
class Outbox {
  /**
   * @param {object} opts
   * @param {Record<'latency'|'value', import('./message-store').MemoryStore|import('./message-store').SpoolStore>} opts.stores
   *   shared with the owner, who may swap a store before the first connection (spool-stores.js)
   * @param {() => Message} opts.status the retained status as of now
   */
  constructor ({ stores, status }) {
    this.stores = stores;
    this._status = status;
    this._statusPending = false;
    /** @type {Map<string, Message>} error digests ready to go, newest per topic (insertion order = send order) */
    this._slots = new Map();
    /** Error digests merged while waiting in a slot (each saves one message) */
    this.coalesced = 0;
  }

  /** The status changed (or a connection came up): send it next. */
  statusChanged () {
    this._statusPending = true;
  }

  /**
   * @param {string} job
   * @param {string} topic
   * @param {import('./payloads').ErrorDigest} data
   */
  putError (job, topic, data) {
    const prev = this._slots.get(topic);
    if (prev) {
      this.coalesced++;
      data = mergeDigests(prev.data, data);
    }
    this._slots.set(topic, { kind: 'error', job, topic, data });
  }

  /** @returns {Message|undefined} the next message to send, taken out (a store's stays on its disk until acked) */
  next () {
    if (this._statusPending) {
      this._statusPending = false;
      return this._status();
    }
    if (this._slots.size) {
      const [topic, slot] = this._slots.entries().next().value;
      this._slots.delete(topic);
      return slot;
    }
    return this.stores.latency.next() || this.stores.value.next();
  }

  /** The broker acknowledged a message (or refused it for good): a store lets it go. */
  done (msg) {
    if (msg.kind === 'latency' || msg.kind === 'value') this.stores[msg.kind].ack(msg);
  }

  /**
   * Messages the broker did not acknowledge before the connection dropped go back: summaries and
   * values at the head of their FIFOs (in the order sent), errors into their slots, merged with a
   * newer one waiting there. A status is not kept: the next connection sends a fresh one.
   * @param {Message[]} msgs in the order sent
   */
  putBack (msgs) {
    for (const kind of ['latency', 'value']) this.stores[kind].rewind(msgs.filter((m) => m.kind === kind));
    for (const m of msgs) {
      if (m.kind !== 'error') continue;
      const newer = this._slots.get(m.topic);
      if (!newer) this._slots.set(m.topic, m);
      else { newer.data = mergeDigests(m.data, newer.data); this.coalesced++; }
    }
  }

  /** @returns {boolean} whether nothing waits */
  get empty () {
    return !this._statusPending && !this._slots.size && !this.stores.latency.length && !this.stores.value.length;
  }

  /**
   * At stop: closes the stores (a spool keeps its records for the next start) and forgets the slots.
   * @param {Message[]} outstanding sent and not acknowledged
   * @returns {number} messages that never went out (error digests included), to be counted
   */
  close (outstanding) {
    let left = 0;
    for (const kind of ['latency', 'value']) left += this.stores[kind].close(outstanding.filter((m) => m.kind === kind));
    left += this._slots.size + outstanding.filter((m) => m.kind === 'error').length;
    this._slots.clear();
    return left;
  }
}

module.exports = { Outbox };
