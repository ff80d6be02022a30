'use strict';

/**
 * A FIFO with O(1) push and shift: an array and a head index, compacted once the dead prefix is
 * both large and more than half the array. Array#shift copies the whole array on every call once
 * it is large, and a user's queue may hold up to 100,000 requests.
 */
class Fifo {
  constructor () {
    /** @type {any[]} */
    this._items = [];
    this._head = 0;
  }

  /** @returns {number} items waiting */
  get length () {
    return this._items.length - this._head;
  }

  /** @param {any} item */
  push (item) {
    this._items.push(item);
  }

  /** @returns {any} the oldest item (undefined when empty), removed */
  shift () {
    const items = this._items;
    if (this._head === items.length) return undefined;
    const item = items[this._head];
    items[this._head++] = undefined; // let it be collected
    if (this._head === items.length) {
      this._items = [];
      this._head = 0;
    } else if (this._head >= 1024 && this._head * 2 >= items.length) {
      this._items = items.slice(this._head);
      this._head = 0;
    }
    return item;
  }

  /** @returns {any} the oldest item, not removed */
  peek () {
    return this._items[this._head];
  }

  /**
   * Removes the items `drop` picks, keeping the order of the rest.
   * @param {(item: any) => boolean} drop
   * @returns {any[]} the removed items, oldest first
   */
  removeWhere (drop) {
    const kept = [];
    const removed = [];
    const items = this._items;
    for (let i = this._head; i < items.length; i++) (drop(items[i]) ? removed : kept).push(items[i]);
    this._items = kept;
    this._head = 0;
    return removed;
  }

  /** @returns {any[]} every item, oldest first; the FIFO is empty afterwards */
  clear () {
    const out = this._head === 0 ? this._items : this._items.slice(this._head);
    this._items = [];
    this._head = 0;
    return out;
  }
}

module.exports = { Fifo };
