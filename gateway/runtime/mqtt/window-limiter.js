'use strict';

const { performance } = require('node:perf_hooks');

/**
 * Per-key rate limiter where the latest item wins: the first item after a quiet window goes out
 * at once; items arriving inside the window replace (or, with `merge`, fold into) one pending
 * item, which goes out when the window ends. So a job polled at 10 kHz publishes its values at
 * most once per window, and the last value is never lost.
 */
class WindowLimiter {
  /**
   * @param {object} opts
   * @param {number} opts.minIntervalMs default window per key, ms (0 = no limit)
   * @param {(key: string, item: *) => void} opts.emit called with each item that goes out
   * @param {(pending: *, next: *) => *} [opts.merge] folds a new item into the pending one
   *   (default: the new one replaces it)
   * @param {() => number} [opts.now] monotonic clock in ms, injectable for tests
   */
  constructor ({ minIntervalMs, emit, merge, now = () => performance.now() }) {
    this.minIntervalMs = minIntervalMs;
    this._emit = emit;
    this._merge = merge;
    this._now = now;
    /** @type {Map<string, {lastMs: number, pending: *, has: boolean, timer: NodeJS.Timeout|null}>} */
    this._state = new Map();
    /** Items that never went out on their own: replaced or merged into a later one */
    this.coalesced = 0;
  }

  /**
   * Offers an item for a key.
   * @param {string} key
   * @param {*} item
   * @param {number} [minIntervalMs] window for this key, ms (default: the limiter's)
   * @returns {boolean} true when the item went out at once
   */
  offer (key, item, minIntervalMs = this.minIntervalMs) {
    let s = this._state.get(key);
    if (!s) {
      s = { lastMs: -Infinity, pending: undefined, has: false, timer: null };
      this._state.set(key, s);
    }
    const t = this._now();
    if (!s.timer && t - s.lastMs >= minIntervalMs) {
      s.lastMs = t;
      this._emit(key, item);
      return true;
    }
    if (s.has) {
      s.pending = this._merge ? this._merge(s.pending, item) : item;
      this.coalesced++;
    } else {
      s.pending = item;
      s.has = true;
    }
    if (!s.timer) s.timer = setTimeout(() => this._fire(key), Math.max(0, s.lastMs + minIntervalMs - t));
    return false;
  }

  _fire (key) {
    const s = this._state.get(key);
    if (!s) return;
    clearTimeout(s.timer);
    s.timer = null;
    if (!s.has) return;
    const item = s.pending;
    s.pending = undefined;
    s.has = false;
    s.lastMs = this._now();
    this._emit(key, item);
  }

  /** Sends every pending item now (used on stop). */
  flush () {
    for (const key of [...this._state.keys()]) this._fire(key);
  }

  /** Cancels every timer and forgets every pending item and window. */
  clear () {
    for (const s of this._state.values()) clearTimeout(s.timer);
    this._state.clear();
  }
}

module.exports = { WindowLimiter };
