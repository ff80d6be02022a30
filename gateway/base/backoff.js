'use strict';

const C = require('./constants');

/**
 * Capped exponential backoff with "equal jitter" (the name in AWS's "Exponential Backoff And
 * Jitter"): with ceiling = min(maxMs, initialMs·factor^n), the n-th delay is uniform in
 * [ceiling / 2, ceiling]. Half the delay is kept and half is random, so a retry never comes sooner
 * than half the ceiling; "full jitter" would draw from [0, ceiling] and may retry at once. The
 * jitter keeps a fleet of gateways from reconnecting in lockstep after a shared outage (MQTT.js and
 * Node-RED retry at a fixed period).
 */
class Backoff {
  /**
   * @param {object} [opts]
   * @param {number} [opts.initialMs=100]
   * @param {number} [opts.maxMs=10000]
   * @param {number} [opts.factor=2]
   * @param {() => number} [opts.random=Math.random] injectable, for tests
   */
  constructor ({ initialMs = C.BACKOFF_INITIAL_MS, maxMs = C.BACKOFF_MAX_MS, factor = C.BACKOFF_FACTOR, random = Math.random } = {}) {
    this.initialMs = initialMs;
    this.maxMs = maxMs;
    this.factor = factor;
    this.random = random;
    this.attempt = 0;
  }

  /** @returns {number} the next delay in ms (equal jitter: in [ceiling / 2, ceiling]), and counts the attempt */
  next () {
    const ceiling = Math.min(this.maxMs, this.initialMs * Math.pow(this.factor, this.attempt));
    this.attempt++;
    return Math.round(ceiling / 2 + this.random() * ceiling / 2);
  }

  /** Call after a success: the next failure starts from the initial delay again. */
  reset () {
    this.attempt = 0;
  }
}

module.exports = { Backoff };
