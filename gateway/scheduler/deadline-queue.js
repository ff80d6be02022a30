'use strict';

/**
 * The waiters of a worker thread's deadline driver (wait.js), earliest first.
 *
 * Deadlines mostly come in order (each lane's next is after everything already waiting), so a
 * sorted array takes them in at its end and gives them out at its head. The head moves forward
 * instead of the array shifting down: `Array.prototype.copyWithin`, which shifted it on every
 * release, is a generic element-by-element builtin, and with 1,000 jobs in one thread (question
 * 7's fleet, 10,000 releases/s over ~1,000 waiters) it was 20 % of the thread's CPU in a profile.
 * The array is compacted once the head has passed half of it, so each waiter is moved at most a
 * few times whatever the rate.
 */

/** Compact only past this many taken slots (and past half the array): small queues never copy */
const COMPACT_MIN = 64;

class DeadlineQueue {
  constructor () {
    /** @type {Array<{at: number}|undefined>} sorted by `at` from `head` on; taken slots are undefined */
    this.a = [];
    this.head = 0;
  }

  /** @returns {number} waiters queued */
  get size () {
    return this.a.length - this.head;
  }

  /**
   * @param {number} i 0 for the earliest
   * @returns {any} the i-th earliest waiter (i < size)
   */
  get (i) {
    return this.a[this.head + i];
  }

  /** @param {{at: number}} w queued after every waiter due at or before it */
  add (w) {
    const a = this.a;
    const head = this.head;
    let i = a.length;
    a.push(w);
    while (i > head && a[i - 1].at > w.at) { a[i] = a[i - 1]; i--; }
    a[i] = w;
  }

  /**
   * Takes out every waiter due at `now`, earliest first, onto `out`.
   * @param {number} now
   * @param {Array<any>} out
   * @returns {number} how many were taken
   */
  takeDue (now, out) {
    const a = this.a;
    const end = a.length;
    let h = this.head;
    const from = h;
    while (h < end && a[h].at <= now) { out.push(a[h]); a[h] = undefined; h++; }
    const n = h - from;
    if (n === 0) return 0;
    if (h === end) {
      a.length = 0;
      h = 0;
    } else if (h >= COMPACT_MIN && h * 2 >= end) {
      // a plain loop: fast on a packed array, unlike copyWithin
      for (let i = h; i < end; i++) a[i - h] = a[i];
      a.length = end - h;
      h = 0;
    }
    this.head = h;
    return n;
  }
}

module.exports = { DeadlineQueue };
