'use strict';

const D = require('./defaults');

/**
 * Slows down password guessing on the metrics endpoint and the status page (HTTP Basic).
 *
 * - Per client address: the first HTTP_LOGIN_FREE_FAILURES wrong logins cost nothing (typos); each
 *   one after locks the address out for a delay that doubles, from HTTP_LOGIN_LOCKOUT_MIN_MS up
 *   to HTTP_LOGIN_LOCKOUT_MAX_MS. A locked-out address gets 429 with Retry-After for every
 *   request, the right login included (else guessing would go on during the lockout). A right
 *   login, outside a lockout, forgets the address's failures.
 * - Overall: more than HTTP_LOGIN_GLOBAL_FAILURES wrong logins within HTTP_LOGIN_GLOBAL_WINDOW_MS
 *   (from any number of addresses) lock out every address that has not logged in rightly
 *   recently, until the window ends, so spreading a guess over many addresses does not help.
 *   Addresses that have logged in (a browser, a Prometheus server) keep being served.
 * - Bounded: at most HTTP_LOGIN_TRACKED_ADDRESSES addresses of each kind are remembered; the one
 *   seen longest ago is forgotten first.
 * A correct login in normal use (no recent failures from its address) never waits.
 */
class LoginThrottle {
  /**
   * @param {object} [opts] each defaults to its HTTP_LOGIN_* value in defaults.js
   * @param {number} [opts.freeFailures]
   * @param {number} [opts.lockoutMinMs]
   * @param {number} [opts.lockoutMaxMs]
   * @param {number} [opts.globalFailures]
   * @param {number} [opts.globalWindowMs]
   * @param {number} [opts.trackedAddresses]
   * @param {() => number} [opts.now] clock, ms (tests inject one)
   */
  constructor ({
    freeFailures = D.HTTP_LOGIN_FREE_FAILURES, lockoutMinMs = D.HTTP_LOGIN_LOCKOUT_MIN_MS, lockoutMaxMs = D.HTTP_LOGIN_LOCKOUT_MAX_MS,
    globalFailures = D.HTTP_LOGIN_GLOBAL_FAILURES, globalWindowMs = D.HTTP_LOGIN_GLOBAL_WINDOW_MS,
    trackedAddresses = D.HTTP_LOGIN_TRACKED_ADDRESSES, now = Date.now
  } = {}) {
    Object.assign(this, { freeFailures, lockoutMinMs, lockoutMaxMs, globalFailures, globalWindowMs, trackedAddresses, now });
    /** @type {Map<string, {failures: number, lockedUntil: number}>} address → its failures, oldest first */
    this.failing = new Map();
    /** @type {Map<string, number>} address → when it last logged in rightly, oldest first */
    this.known = new Map();
    this.windowStart = 0;
    this.windowFailures = 0;
    /** wrong logins and refused (429) requests since start, for tests and logs */
    this.counts = { failures: 0, refused: 0 };
  }

  /**
   * Whether a request from this address may try to log in now.
   * @param {string} address
   * @returns {{waitMs: number, why: string}|null} null when it may; otherwise how long until it
   *   may (for Retry-After) and why not, for the answer
   */
  lockout (address) {
    const now = this.now();
    const entry = this.failing.get(address);
    const own = entry ? Math.max(0, entry.lockedUntil - now) : 0;
    const everyone = now - this.windowStart < this.globalWindowMs && this.windowFailures > this.globalFailures && !this.known.has(address)
      ? this.windowStart + this.globalWindowMs - now
      : 0;
    if (own === 0 && everyone === 0) return null;
    this.counts.refused++;
    return own >= everyone
      ? { waitMs: own, why: `${entry.failures} wrong logins from ${address}` }
      : { waitMs: everyone, why: `${this.windowFailures} wrong logins from all addresses within ${this.globalWindowMs / 1000} s, and ${address} has not logged in rightly lately` };
  }

  /**
   * @param {string} address
   * @returns {number} 0 when a request from it may try to log in now; otherwise ms until it may
   */
  waitMs (address) {
    const l = this.lockout(address);
    return l === null ? 0 : l.waitMs;
  }

  /** @param {string} address a wrong or missing login came from it */
  failed (address) {
    const now = this.now();
    this.counts.failures++;
    if (now - this.windowStart >= this.globalWindowMs) { this.windowStart = now; this.windowFailures = 0; }
    this.windowFailures++;
    const entry = this.failing.get(address) || { failures: 0, lockedUntil: 0 };
    entry.failures++;
    const over = entry.failures - this.freeFailures;
    if (over > 0) entry.lockedUntil = now + Math.min(this.lockoutMaxMs, this.lockoutMinMs * 2 ** Math.min(over - 1, 30));
    remember(this.failing, address, entry, this.trackedAddresses);
  }

  /** @param {string} address the right login came from it */
  succeeded (address) {
    this.failing.delete(address);
    remember(this.known, address, this.now(), this.trackedAddresses);
  }
}

/** Sets key → value as the newest entry, forgetting the oldest past max */
function remember (map, key, value, max) {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value);
}

module.exports = { LoginThrottle };
