'use strict';

/**
 * What never went out, per kind (latency summaries, values) and per job: the numbers the retained
 * status carries so that every gap in a stream is explained. Counted since the stream began: with
 * a spool they are kept on disk and carried over a restart (seed()).
 */
class DropCounts {
  constructor () {
    /** @type {Record<'latency'|'value', {total: number, jobs: Map<string, number>}>} */
    this._by = { latency: { total: 0, jobs: new Map() }, value: { total: 0, jobs: new Map() } };
  }

  /**
   * @param {string} kind 'value', or anything else for latency
   * @param {string} job
   * @param {number} n
   */
  add (kind, job, n) {
    const d = this._by[kind === 'value' ? 'value' : 'latency'];
    d.total += n;
    d.jobs.set(job, (d.jobs.get(job) || 0) + n);
  }

  /**
   * Carries over counts kept from before a restart.
   * @param {'latency'|'value'} kind
   * @param {Record<string, number>} jobs
   */
  seed (kind, jobs) {
    for (const [job, n] of Object.entries(jobs || {})) if (Number.isInteger(n) && n > 0) this.add(kind, job, n);
  }

  /** @param {'latency'|'value'} kind @returns {number} */
  total (kind) { return this._by[kind].total; }

  /** @param {'latency'|'value'} kind @returns {Record<string, number>} */
  jobs (kind) { return Object.fromEntries(this._by[kind].jobs); }

  /** @param {'latency'|'value'} kind @returns {{total: number, jobs: Record<string, number>}} as in the status */
  toJSON (kind) { return { total: this.total(kind), jobs: this.jobs(kind) }; }
}

module.exports = { DropCounts };
