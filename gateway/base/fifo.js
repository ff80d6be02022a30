'use strict';

/**
 * A FIFO with O(1) push and shift: an array, a head index and a tail index. Array#shift copies the
 * whole array on every call once it is large, and a user's queue may hold up to 100,000 requests.
 *
 * Emptied, it keeps its array and starts again at slot 0. A fresh array instead (or `length = 0`,
 * which gives up V8's backing store) costs a new backing store on the next push, 150-184 bytes: a
 * queue that empties at every item, as a fixed-rate lane's wait does, allocated that much per
 * request (the deadline driver, scheduler/wait.js). The array is given up only when emptied at
 * more than KEEP_SLOTS slots, and its dead prefix is dropped once it is both large and more than
 * half the array.
 */
const KEEP_SLOTS = 1024;

class Fifo {
  constructor () {
    /** @type {any[]} slots [_head, _tail) hold the items; every other slot is undefined */
    this._items = [];
    this._head = 0;
    this._tail = 0;
  }

  /** @returns {number} items waiting */
  get length () {
    return this._tail - this._head;
  }

  /** @param {any} item */
  push (item) {
    const items = this._items;
    if (this._tail < items.length) items[this._tail] = item;
    else items.push(item);
    this._tail++;
  }

  /** @returns {any} the oldest item (undefined when empty), removed */
  shift () {
    const items = this._items;
    if (this._head === this._tail) return undefined;
    const item = items[this._head];
    items[this._head++] = undefined; // let it be collected
    if (this._head === this._tail) {
      if (items.length > KEEP_SLOTS) this._items = [];
      this._head = 0;
      this._tail = 0;
    } else if (this._head >= KEEP_SLOTS && this._head * 2 >= this._tail) {
      this._items = items.slice(this._head, this._tail);
      this._tail -= this._head;
      this._head = 0;
    }
    return item;
  }

  /** @returns {any} the oldest item, not removed (undefined when empty) */
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
    for (let i = this._head; i < this._tail; i++) (drop(items[i]) ? removed : kept).push(items[i]);
    this._items = kept;
    this._head = 0;
    this._tail = kept.length;
    return removed;
  }

  /** @returns {any[]} every item, oldest first; the FIFO is empty afterwards */
  clear () {
    const out = this._items.slice(this._head, this._tail);
    this._items = [];
    this._head = 0;
    this._tail = 0;
    return out;
  }
}

module.exports = { Fifo };
