'use strict';

const { Fifo } = require('../base/fifo');

/**
 * The waiters of a worker thread's deadline driver (wait.js), earliest first: a FIFO (an array and
 * a head index, base/fifo.js) kept in deadline order.
 *
 * Deadlines mostly come in order (each lane's next is after everything already waiting), so a
 * waiter is put in at the end, moved down past any later ones, and the earliest are taken from
 * the head. The head moves forward instead of the array shifting down: `Array.prototype.copyWithin`,
 * which shifted it on every release, is a generic element-by-element builtin, and with 1,000 jobs in
 * one thread (question 7's fleet, 10,000 releases/s over ~1,000 waiters) it was 20 % of the
 * thread's CPU in a profile.
 */
class DeadlineQueue extends Fifo {
  /**
   * @param {number} i 0 for the earliest
   * @returns {any} the i-th earliest waiter (i < length)
   */
  get (i) {
    return this._items[this._head + i];
  }

  /** @param {{at: number}} w queued after every waiter due at or before it */
  add (w) {
    const head = this._head;
    let i = this._tail;
    this.push(w);
    const a = this._items;
    while (i > head && a[i - 1].at > w.at) { a[i] = a[i - 1]; i--; }
    a[i] = w;
  }

  /**
   * Takes out every waiter due at `now`, earliest first, into `out` from slot `at` on. Stored by
   * index, not pushed onto an array emptied after: `out` keeps its slots from one release to the
   * next, where emptying it gave up its backing store each time (base/fifo.js says what that cost).
   * @param {number} now
   * @param {Array<any>} out
   * @param {number} [at=0] the first slot of `out` to fill
   * @returns {number} how many were taken
   */
  takeDue (now, out, at = 0) {
    let n = 0;
    while (this.length > 0 && this.peek().at <= now) out[at + n++] = this.shift();
    return n;
  }
}

module.exports = { DeadlineQueue };
