'use strict';

/**
 * Per-job recorder: three histograms (response time from the intended send, service time from the
 * actual send, dispatch lag) and the counts ok / errors / timeouts / skipped / clamped / invalid,
 * handed over once per interval by snapshot() (latency-method.md rules 3–6).
 *
 * Snapshot lifetime: a snapshot's histograms belong to the caller until the caller gives them back
 * with recorder.recycle(snap). They are never reset or reused before that, so a snapshot kept in a
 * queue or merged later stays valid. recycle() resets them and keeps them as the next interval's
 * set, so a caller that recycles (snapshot → summarize/encode → recycle) allocates no histograms
 * per interval; a caller that never recycles gets fresh histograms each time and the garbage
 * collector takes the old ones. After recycle() the snapshot's histogram fields are null, so a
 * late use fails loudly instead of reading another interval's counts.
 */

const { createHistogram, recordNs, RECORD_OK, RECORD_CLAMPED } = require('./histogram');
const { POLICIES, checkPolicy, encodeSnapshot, decodeSnapshot, mergeSnapshots } = require('./snapshot');
const { invalid, plainObject, finite } = require('./validate');

const DEFAULT_CLOCK = Object.freeze({ nowMs: () => Date.now() });

/** @returns {{response: any, service: any, lag: any}} */
function newSet () {
  return { response: createHistogram(), service: createHistogram(), lag: createHistogram() };
}

class Recorder {
  /**
   * @param {object} [options]
   * @param {string} [options.policy] catch-up policy named in every summary: "capped" (default),
   *   "burst", "skip", or "closed" for closed-loop runs (their response time is service time)
   * @param {{nowMs: () => number}} [options.clock] wall clock in epoch ms, for interval start/end
   *   only (latencies come from the caller, measured with process.hrtime.bigint())
   */
  constructor (options = {}) {
    plainObject(options, 'options');
    this._policy = checkPolicy(options.policy === undefined ? 'capped' : options.policy, 'options.policy', false);
    const clock = options.clock === undefined ? DEFAULT_CLOCK : options.clock;
    if (clock === null || typeof clock !== 'object' || typeof clock.nowMs !== 'function') {
      throw invalid('options.clock', clock, 'an object with a nowMs() method returning epoch milliseconds');
    }
    this._clock = clock;
    this._createdMs = this._now();
    this._startMs = this._createdMs;
    this._seq = 0;
    this._set = newSet();
    this._spare = null;
    /** snapshots handed out and not yet recycled → their histogram set */
    this._issued = new WeakMap();
    this._zero();
    this._totals = { count: 0, ok: 0, errors: 0, timeouts: 0, skipped: 0, clamped: 0, invalid: 0 };
  }

  /**
   * Moves the start of the current interval back to `startMs`, so that this interval covers a time
   * nothing else recorded (a worker that died: its successor's first summary starts where the
   * last one ended). Only earlier starts are taken.
   * @param {number} startMs epoch ms
   */
  coverFrom (startMs) {
    finite(startMs, 'startMs');
    if (startMs < this._startMs) this._startMs = startMs;
  }

  /** @returns {string} the catch-up policy named in every snapshot (fixed at construction) */
  get policy () {
    return this._policy;
  }

  /** @returns {number} */
  _now () {
    const ms = this._clock.nowMs();
    if (typeof ms !== 'number' || !Number.isFinite(ms)) throw invalid('clock.nowMs()', ms, 'a finite number of epoch milliseconds');
    return ms;
  }

  _zero () {
    this._ok = 0;
    this._errors = 0;
    this._timeouts = 0;
    this._skipped = 0;
    this._clamped = 0;
    this._invalid = 0;
  }

  /** @param {number} code a recordNs result */
  _tally (code) {
    if (code === RECORD_OK) return;
    if (code === RECORD_CLAMPED) this._clamped++;
    else this._invalid++;
  }

  /**
   * @param {number|bigint} responseNs
   * @param {number|bigint|undefined} serviceNs
   * @param {number|bigint|undefined} lagNs
   * @param {boolean} optional true: undefined service/lag means "not measured" and is skipped
   */
  _sample (responseNs, serviceNs, lagNs, optional) {
    const set = this._set;
    this._tally(recordNs(set.response, responseNs));
    if (serviceNs !== undefined || !optional) this._tally(recordNs(set.service, serviceNs));
    if (lagNs !== undefined || !optional) this._tally(recordNs(set.lag, lagNs));
  }

  /**
   * A good reply. Hot path. Each value is an integer ns >= 0 (number or bigint); a value above
   * 1 h is recorded as 1 h and counted in `clamped`, anything else is dropped and counted in
   * `invalid` (a negative lag means the request went out before its intended time).
   * @param {number|bigint} responseNs reply complete − intended send time (t0 + k/rate)
   * @param {number|bigint} serviceNs reply complete − actual write
   * @param {number|bigint} lagNs actual write − intended send time
   */
  recordOk (responseNs, serviceNs, lagNs) {
    this._ok++;
    this._sample(responseNs, serviceNs, lagNs, false);
  }

  /**
   * An error reply (or a failed request): a sample, not a hole (rule 5).
   * @param {number|bigint} responseNs until the error was known, from the intended send time
   * @param {number|bigint} [serviceNs] from the actual write; undefined if nothing was written
   * @param {number|bigint} [lagNs] undefined if nothing was written
   */
  recordError (responseNs, serviceNs, lagNs) {
    this._errors++;
    this._sample(responseNs, serviceNs, lagNs, true);
  }

  /**
   * A timeout: a sample whose response time (at least the timeout) is a lower bound (rule 5).
   * @param {number|bigint} responseNs from the intended send time until the timeout fired
   * @param {number|bigint} [serviceNs] from the actual write until the timeout fired
   * @param {number|bigint} [lagNs]
   */
  recordTimeout (responseNs, serviceNs, lagNs) {
    this._timeouts++;
    this._sample(responseNs, serviceNs, lagNs, true);
  }

  /**
   * A slot skipped under the "skip" policy: what it would have seen goes into the response
   * histogram (never skip silently, rule 4); service and lag have no sample.
   * @param {number|bigint} responseNs e.g. time from the skipped slot's intended send to the
   *   completion of the reply that blocked it
   */
  recordSkipped (responseNs) {
    this._skipped++;
    this._tally(recordNs(this._set.response, responseNs));
  }

  /**
   * Starts the current interval afresh from now, discarding what it recorded (a warm-up), in the
   * same histograms: new ones would be new objects for the code that records into them, which V8
   * then compiles again while the next requests wait (issue 11). Nothing is handed over, and the
   * totals and seq do not count it.
   */
  discard () {
    const set = this._set;
    set.response.reset();
    set.service.reset();
    set.lag.reset();
    this._zero();
    this._startMs = Math.max(this._now(), this._startMs);
  }

  /**
   * Ends the interval: hands over its histograms and counts and starts the next interval at this
   * interval's end. See the module comment for how long the snapshot stays valid.
   * @returns {import('./snapshot').Snapshot} seq from 0, +1 per call; endMs is the clock reading,
   *   held at startMs if the wall clock stepped back
   */
  snapshot () {
    const startMs = this._startMs;
    const endMs = Math.max(this._now(), startMs);
    const set = this._set;
    for (const name of ['response', 'service', 'lag']) {
      set[name].startTimeStampMsec = startMs;
      set[name].endTimeStampMsec = endMs;
      set[name].tag = name;
    }
    const count = this._ok + this._errors + this._timeouts + this._skipped;
    const snap = {
      seq: this._seq,
      startMs,
      endMs,
      count,
      ok: this._ok,
      errors: this._errors,
      timeouts: this._timeouts,
      skipped: this._skipped,
      clamped: this._clamped,
      invalid: this._invalid,
      policy: this.policy,
      response: set.response,
      service: set.service,
      lag: set.lag
    };
    this._issued.set(snap, set);
    for (const name of Object.keys(this._totals)) this._totals[name] += snap[name];
    this._set = this._spare || newSet();
    this._spare = null;
    this._zero();
    this._seq++;
    this._startMs = endMs;
    return snap;
  }

  /**
   * Gives a snapshot's histograms back for reuse. After this, the snapshot's response, service
   * and lag are null; its counts stay.
   * @param {import('./snapshot').Snapshot} snap a snapshot this recorder's snapshot() returned
   * @throws {NinesError} NINES_ERR_INVALID_ARG for a foreign, merged, decoded or already recycled snapshot
   */
  recycle (snap) {
    const set = this._issued.get(snap);
    if (set === undefined) {
      throw invalid('snapshot', snap, "a snapshot from this recorder's snapshot(), not yet recycled");
    }
    this._issued.delete(snap);
    snap.response = null;
    snap.service = null;
    snap.lag = null;
    if (this._spare === null) {
      set.response.reset();
      set.service.reset();
      set.lag.reset();
      this._spare = set;
    }
  }

  /**
   * Counts since the recorder was created, the open interval included.
   * @returns {{startMs: number, snapshots: number, policy: string, count: number, ok: number,
   *   errors: number, timeouts: number, skipped: number, clamped: number, invalid: number}}
   */
  totals () {
    const t = this._totals;
    return {
      startMs: this._createdMs,
      snapshots: this._seq,
      policy: this.policy,
      count: t.count + this._ok + this._errors + this._timeouts + this._skipped,
      ok: t.ok + this._ok,
      errors: t.errors + this._errors,
      timeouts: t.timeouts + this._timeouts,
      skipped: t.skipped + this._skipped,
      clamped: t.clamped + this._clamped,
      invalid: t.invalid + this._invalid
    };
  }
}

module.exports = { Recorder, POLICIES, encodeSnapshot, decodeSnapshot, mergeSnapshots };
