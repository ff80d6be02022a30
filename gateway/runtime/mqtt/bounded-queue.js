'use strict';

/**
 * A FIFO bounded by item count and by total bytes. When a push would exceed a bound, the oldest
 * items go, and the caller gets them back to count (nothing is dropped silently). MQTT.js's own
 * offline queue has no limit; this one sits in front of it.
 */
class BoundedQueue {
  /**
   * @param {object} opts
   * @param {number} opts.maxItems >= 0
   * @param {number} [opts.maxBytes=Infinity] bound on the sum of item.bytes
   */
  constructor ({ maxItems, maxBytes = Infinity }) {
    this.maxItems = maxItems;
    this.maxBytes = maxBytes;
    /** @type {Array<{bytes: number}>} */
    this._items = [];
    this._head = 0;
    this._bytes = 0;
  }

  /** @returns {number} items waiting */
  get length () {
    return this._items.length - this._head;
  }

  /** @returns {number} sum of the waiting items' bytes */
  get bytes () {
    return this._bytes;
  }

  /**
   * Appends an item, dropping the oldest ones while a bound is exceeded.
   * @template {{bytes: number}} T
   * @param {T} item
   * @returns {T[]} the items dropped (possibly including `item` itself when it alone is too big)
   */
  push (item) {
    this._items.push(item);
    this._bytes += item.bytes;
    return this._trim();
  }

  /**
   * Puts items back at the head, in the order given (messages that were in flight when the
   * connection dropped are older than everything queued), then trims from the head.
   * @template {{bytes: number}} T
   * @param {T[]} items
   * @returns {T[]} the items dropped
   */
  requeue (items) {
    if (!items.length) return [];
    this._items = items.concat(this._items.slice(this._head));
    this._head = 0;
    for (const it of items) this._bytes += it.bytes;
    return this._trim();
  }

  /** @returns {*} the oldest item, removed, or undefined */
  shift () {
    if (this._head >= this._items.length) return undefined;
    const item = this._items[this._head];
    this._items[this._head++] = undefined;
    this._bytes -= item.bytes;
    // Compact now and then so the array does not grow with the total ever pushed
    if (this._head > 1024 && this._head * 2 > this._items.length) {
      this._items = this._items.slice(this._head);
      this._head = 0;
    }
    return item;
  }

  /** @returns {Array<*>} every waiting item, removed, oldest first */
  drain () {
    const out = this._items.slice(this._head);
    this._items = [];
    this._head = 0;
    this._bytes = 0;
    return out;
  }

  _trim () {
    const dropped = [];
    while (this.length > this.maxItems || (this._bytes > this.maxBytes && this.length > 0)) {
      dropped.push(this.shift());
    }
    return dropped;
  }
}

module.exports = { BoundedQueue };
