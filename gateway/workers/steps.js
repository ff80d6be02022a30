'use strict';

/**
 * A FIFO of small pieces of work, one per turn of the event loop (setImmediate): the pieces of a
 * job's interval summary (summarize each histogram, encode, post) instead of one block. In a thread
 * that polls, a reply that arrives meanwhile waits for the piece under way only, not for the whole
 * summary: a summary took 1-2.5 ms in one go, the stall of whichever request was in flight
 * (issue 11). Messages that must follow a job's summaries (its end, its stop) go through the same
 * FIFO, so their order holds.
 */

const { Fifo } = require('../base/fifo');

class Steps {
  /** @param {(err: Error) => void} onError a piece that threw (the rest still run) */
  constructor (onError) {
    this._q = new Fifo();
    this._scheduled = false;
    this._onError = onError;
    this._run = () => this._runOne();
  }

  /** @param {() => void} fn runs in a later turn, after everything added before it */
  add (fn) {
    this._q.push(fn);
    if (!this._scheduled) {
      this._scheduled = true;
      setImmediate(this._run);
    }
  }

  /** @returns {number} pieces waiting */
  get length () {
    return this._q.length;
  }

  _runOne () {
    const fn = this._q.shift();
    try {
      fn();
    } catch (err) {
      this._onError(err);
    }
    if (this._q.length !== 0) setImmediate(this._run);
    else this._scheduled = false;
  }
}

module.exports = { Steps };
