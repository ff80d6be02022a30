'use strict';

const { performance } = require('node:perf_hooks');

/**
 * One report per key per window, and a count of the rest: the one way nines rate-limits what it
 * reports (a job's failures, the publisher's values and error messages, a spool's file errors, the
 * embedded broker's refusals), so a dead device polled at 1 kHz or a disk that stays full is one
 * report per window, not one per event, and nothing it stands for goes uncounted.
 *
 * Per key: the first item after a quiet window goes out at once and opens a window. Items offered
 * inside it are held: the newest replaces the one held, or `merge` folds it in. When the window ends
 * the held item goes out with the number of items it stands for, and opens the next window; a window
 * that ends with nothing held closes, so the key's next item goes out at once again.
 *
 * A window ends `windowMs` after it opened (on a timer), or, with windowMs Infinity, only when the
 * owner calls flush(): a job ends its error windows with its latency intervals.
 */
class WindowReporter {
  /**
   * @param {object} opts
   * @param {(key: string, item: *, held: number) => void} opts.emit called with each item that goes
   *   out; `held` is 0 for an item that went out at once, else how many items held in the window it
   *   stands for (itself included)
   * @param {number} [opts.windowMs=Infinity] default window per key, ms: 0 lets everything through,
   *   Infinity ends windows only at flush()
   * @param {(held: *, next: *) => *} [opts.merge] folds a newer item into the held one (default: the
   *   newer one replaces it)
   * @param {() => number} [opts.now] monotonic clock in ms, injectable for tests
   */
  constructor ({ emit, windowMs = Infinity, merge, now = () => performance.now() }) {
    this.windowMs = windowMs;
    this._emit = emit;
    this._merge = merge;
    this._now = now;
    /** @type {Map<string, {openedMs: number, item: *, held: number, timer: NodeJS.Timeout|null}>} keys with an open window */
    this._open = new Map();
    /** Items that never went out on their own: replaced by or merged into a later one */
    this.coalesced = 0;
  }

  /**
   * Offers an item for a key.
   * @param {string} key
   * @param {*} item
   * @param {number} [windowMs] window for this key, ms (default: the reporter's)
   * @returns {boolean} true when the item went out at once
   */
  offer (key, item, windowMs = this.windowMs) {
    const t = this._now();
    const w = this._open.get(key);
    if (w === undefined || (w.timer === null && t - w.openedMs >= windowMs)) {
      this._open.set(key, { openedMs: t, item: undefined, held: 0, timer: null });
      this._emit(key, item, 0);
      return true;
    }
    if (w.held > 0) {
      w.item = this._merge ? this._merge(w.item, item) : item;
      this.coalesced++;
    } else {
      w.item = item;
    }
    w.held++;
    if (w.timer === null && windowMs !== Infinity) w.timer = setTimeout(() => this._end(key), Math.max(0, w.openedMs + windowMs - t));
    return false;
  }

  /** Ends every window now: what each holds goes out (and opens a new window), the others close. */
  flush () {
    for (const key of [...this._open.keys()]) this._end(key);
  }

  /** Cancels every timer and forgets every window and what it holds, uncounted. */
  clear () {
    for (const w of this._open.values()) clearTimeout(w.timer);
    this._open.clear();
  }

  _end (key) {
    const w = this._open.get(key);
    if (w === undefined) return;
    clearTimeout(w.timer);
    w.timer = null;
    if (w.held === 0) {
      this._open.delete(key);
      return;
    }
    const { item, held } = w;
    w.item = undefined;
    w.held = 0;
    w.openedMs = this._now();
    this._emit(key, item, held);
  }
}

module.exports = { WindowReporter };
