'use strict';

/**
 * Lets one report of each kind through per window and counts the rest into the next one, so a disk
 * that stays full is one line every 10 s, not one per message.
 */
class ReportLimiter {
  /**
   * @param {object} [opts]
   * @param {number} [opts.windowMs=10000]
   * @param {() => number} [opts.now]
   */
  constructor ({ windowMs = 10000, now = Date.now } = {}) {
    this.windowMs = windowMs;
    this._now = now;
    /** @type {Map<string, {at: number, suppressed: number}>} */
    this._seen = new Map();
  }

  /**
   * @param {string} key the kind of report
   * @returns {number|null} null: hold it back (counted); else report it, saying this many like it
   *   were held back since the last one
   */
  pass (key) {
    const now = this._now();
    const seen = this._seen.get(key);
    if (seen && now - seen.at < this.windowMs) { seen.suppressed++; return null; }
    this._seen.set(key, { at: now, suppressed: 0 });
    return seen ? seen.suppressed : 0;
  }
}

module.exports = { ReportLimiter };
