'use strict';

const { FLAG_BREAK } = require('./spool-record');

/**
 * Counts, per kind and job, the records a spool lost to damage, while the spool is opened and its
 * log walked in order (records and damaged stretches, as walkRecords finds them).
 *
 * A damaged record cannot say whose it was, but its neighbours can: within a job, the numbers
 * of its records go up by one (a summary's seq; a value's number, given by the spool), so the
 * records of a job missing across a damaged stretch are the gap between its last record before
 * and its first after. A gap is not counted when:
 * - no undelivered damage lies between the two (the damage is before `countFrom`: delivered, or
 *   counted by an earlier open), or the numbers did not go up;
 * - a record flagged FLAG_BREAK lies between them: numbers may have gone to the memory buffer
 *   there (a refused write, a restart), which counts its own drops.
 * Damage after a job's last record (the log's tail) is measured against the checkpoint's numbers:
 * what the checkpoint knew of and the log no longer holds. So is a log that ends before where the
 * checkpoint saw it end (a power loss took records written but not yet durable, never published).
 */
class LossTally {
  /** @param {number} countFrom log position: damage that ends at or before it is not counted */
  constructor (countFrom) {
    this.countFrom = countFrom;
    this._holes = 0;
    this._allHoles = 0;
    this._breaks = 0;
    /** the log ends before where the checkpoint saw it end */
    this.cutShort = false;
    /** @type {Map<string, {seq: number, holes: number, allHoles: number, breaks: number}>} kind\0job → its last record so far */
    this._last = new Map();
    /** @type {Map<string, number>} kind\0job → records lost */
    this._lost = new Map();
  }

  /** A damaged stretch of the log, [start, end) as positions. */
  hole (start, end) {
    this._allHoles++;
    if (end > this.countFrom) this._holes++;
  }

  /** A point no gap may be counted across (damage counted before). */
  boundary () {
    this._breaks++;
  }

  /** @param {import('./spool-record').SpoolRecord} rec the next good record */
  record (rec) {
    if (rec.flags & FLAG_BREAK) this._breaks++;
    // a value spooled before values were numbered carries -1: nothing to compare
    if (!(rec.seq >= 0)) return;
    const key = `${rec.kind}\0${rec.job}`;
    this._gap(key, this._last.get(key), rec.seq - 1, false);
    this._last.set(key, { seq: rec.seq, holes: this._holes, allHoles: this._allHoles, breaks: this._breaks });
  }

  /**
   * After the walk: the checkpoint's last number of a job.
   * @param {string} kind
   * @param {string} job
   * @param {number} seq
   */
  checkpointed (kind, job, seq) {
    const key = `${kind}\0${job}`;
    if (Number.isInteger(seq)) this._gap(key, this._last.get(key), seq, true);
  }

  /** @returns {Array<{kind: string, job: string, n: number}>} what was lost, per kind and job */
  losses () {
    return [...this._lost].map(([key, n]) => {
      const [kind, job] = key.split('\0');
      return { kind, job, n };
    });
  }

  /**
   * Records numbered after `last` up to `upTo` went missing if undelivered damage lies between
   * (or, at the tail, if the log was cut short and no damage, delivered or not, could hold them).
   */
  _gap (key, last, upTo, tail) {
    if (!last || upTo <= last.seq || last.breaks !== this._breaks) return;
    const lost = last.holes < this._holes || (tail && this.cutShort && last.allHoles === this._allHoles);
    if (lost) this._lost.set(key, (this._lost.get(key) || 0) + upTo - last.seq);
  }
}

module.exports = { LossTally };
