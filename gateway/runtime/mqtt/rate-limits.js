'use strict';

const { WindowReporter } = require('../../base/window-reporter');
const { mergeDigests } = require('./payloads');

/**
 * The per-job rate limits of what the runtime hands the publisher, before it waits for the broker
 * (base/window-reporter.js): values at most once per the job's window (the latest wins, each keeps
 * its read time `ts`), error digests at most once per window (merged: their counts add up). What
 * leaves a window waits in the outbox in order, so an outage delays values but does not thin them
 * further.
 */
class RateLimits {
  /**
   * @param {object} opts
   * @param {number} opts.valuesMinIntervalMs a job's value window unless setValueWindows() gives its own
   * @param {number} opts.errorsMinIntervalMs
   * @param {(job: string, payload: *) => void} opts.value a value leaves its window
   * @param {(job: string, digest: import('./payloads').ErrorDigest) => void} opts.error a digest leaves its window
   */
  constructor ({ valuesMinIntervalMs, errorsMinIntervalMs, value, error }) {
    this._values = new WindowReporter({ windowMs: valuesMinIntervalMs, emit: (job, payload) => value(job, payload) });
    this._errors = new WindowReporter({ windowMs: errorsMinIntervalMs, merge: mergeDigests, emit: (job, d) => error(job, d) });
    /** @type {Map<string, number>} job → value window, ms */
    this._valueMs = new Map();
  }

  /** @param {Map<string, number>} windows job → value window, ms (jobs not named use the default) */
  setValueWindows (windows) {
    this._valueMs = windows;
  }

  /** @param {string} job @param {*} payload */
  value (job, payload) {
    this._values.offer(job, payload, this._valueMs.get(job));
  }

  /** @param {string} job @param {import('./payloads').ErrorDigest} digest */
  error (job, digest) {
    this._errors.offer(job, digest);
  }

  /** @returns {{values: number, errors: number}} items merged into or replaced by later ones */
  get coalesced () {
    return { values: this._values.coalesced, errors: this._errors.coalesced };
  }

  /** Lets out what the windows hold (at stop). */
  flush () {
    this._values.flush();
    this._errors.flush();
  }

  /** Cancels the windows' timers. */
  clear () {
    this._values.clear();
    this._errors.clear();
  }
}

module.exports = { RateLimits };
