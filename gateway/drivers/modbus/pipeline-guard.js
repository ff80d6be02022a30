'use strict';

/**
 * Does this device really serve pipelined requests? The evidence one Modbus TCP client gathers while it
 * writes requests before the earlier ones are answered (maxInflight > 1), and the rule that makes it
 * fall back to one request in flight.
 *
 * Many devices take one request at a time and silently drop what arrives while they are busy (or,
 * some, close the connection). Nothing in the protocol says which kind a device is, and a user may
 * set maxInflight on one that is not: every overlapping request would then time out, forever.
 *
 * Evidence (a request is "overlapped" when it was written while another request was in flight on the
 * same connection):
 * - SKIPPED (against): an overlapped request timed out although the device answered some other
 *   request after it was written, and its reply has not come even late, a further timeout period
 *   after its timeout. The device was alive and answering while this one waited, and never answered
 *   it: a one-at-a-time device does this to every request it dropped. A device that serves pipelined
 *   requests but answered this one late (its transaction id stays owed, tcp-transport.js) clears the
 *   suspicion when the late reply comes.
 * - PEER CLOSE (against): the peer closed the connection while more than one request was in flight.
 * - OVERLAP ANSWERED (for): an overlapped request was answered, and some other reply arrived between
 *   its write and its reply: two requests were outstanding at once and both were answered.
 *
 * The rule: every piece of evidence against adds one strike (STRIKE points), every overlap answered
 * takes away one point, never below zero; at FALL_BACK_AT points (three strikes with fewer than
 * STRIKE answered overlaps between them) the client falls back to one request in flight, for good
 * (until it is built again: a redeploy or restart), and warns with NINES_ERR_PIPELINE_UNSUPPORTED.
 * A suspect becomes a strike when the next request times out after its grace period (its own
 * timeout again): while nothing times out any more, pipelining works and there is nothing to judge.
 *
 * Why weighed, and why wait for late replies: a pipelining device that loses one request in a
 * thousand answers thousands of overlaps between two losses, so its score stays at zero; one that
 * is slow now and then may leave every request in flight waiting on slow ones at once, so they time
 * out together, but their replies do come. A one-at-a-time device at N in flight skips N − 1 requests
 * per timeout period, answers no overlap and never answers the skipped ones: it falls back about two
 * timeout periods after the first write (at maxInflight 2: within a few periods).
 *
 * Limits, stated:
 * - Detection needs timeouts: until then, the requests the device dropped wait their whole timeout.
 * - A reply more than twice its timeout late is taken for a dropped request.
 * - A one-at-a-time device that is much faster than the round trip may answer an overlapped request
 *   because it arrived just after the device finished the previous one; such answers count for
 *   pipelining. If it also drops often enough for three strikes to outweigh them, it still falls back;
 *   if not, it mostly works and the losses show as timeouts.
 * - A device that closes the connection for reasons of its own while several requests are in flight
 *   (a reboot) counts a strike per close.
 * - Out-of-order answers (a gateway in front of several units) are not evidence either way.
 */

/** Points one piece of evidence against pipelining weighs; one overlap answered takes one away */
const STRIKE = 32;
/** Points at which the client falls back to one request in flight: three strikes */
const FALL_BACK_AT = 3 * STRIKE;
/** Suspects kept at most (as many as the transaction ids a connection keeps owed); the oldest is judged first */
const MAX_SUSPECTS = 4096;
const NS_PER_MS = 1000000n;

class PipelineGuard {
  constructor () {
    // Replies taken on this client so far: a request remembers the count at its write
    this._answers = 0;
    this._score = 0;
    /** @type {Map<number, bigint>} transaction id of a suspect → hrtime ns from which it counts as skipped */
    this._suspects = new Map();
    /** Requests skipped (see the file header): counted, for the stats and the warning */
    this.skipped = 0;
    /** Suspects whose late reply came after all */
    this.lateAnswered = 0;
    /** Connections the peer closed with more than one request in flight */
    this.peerCloses = 0;
    /** Overlapped requests answered while another reply came between their write and theirs */
    this.overlapsAnswered = 0;
  }

  /**
   * A request is being written.
   * @param {{overlap: number}} p
   * @param {number} inFlight requests already on the wire, not counting p
   */
  sent (p, inFlight) {
    p.overlap = inFlight > 0 ? this._answers : -1;
  }

  /**
   * A reply to p was taken (a reply or an exception: the device answered it).
   * @param {{overlap: number}} p
   */
  answered (p) {
    if (p.overlap >= 0 && this._answers > p.overlap) {
      this.overlapsAnswered++;
      if (this._score > 0) this._score--;
    }
    this._answers++;
  }

  /**
   * The late reply to a timed-out request came (its transaction id was owed): the device answers
   * overlapped requests, if slowly.
   * @param {number} tid
   */
  lateReply (tid) {
    if (this._suspects.delete(tid)) this.lateAnswered++;
  }

  /**
   * p timed out: it may be a suspect; suspects whose grace has run out become strikes now.
   * @param {{overlap: number, tid: number, timeoutMs: number}} p
   * @param {bigint} nowNs hrtime ns
   * @returns {boolean} true when the evidence now says: fall back to one request in flight
   */
  timedOut (p, nowNs) {
    const fall = this._judge(nowNs);
    if (p.overlap >= 0 && this._answers > p.overlap) {
      const suspects = this._suspects;
      suspects.set(p.tid, nowNs + BigInt(p.timeoutMs) * NS_PER_MS);
      if (suspects.size > MAX_SUSPECTS) suspects.delete(/** @type {number} */ (suspects.keys().next().value));
    }
    return fall;
  }

  /**
   * The peer closed the connection (or the network failed it) with requests in flight.
   * @param {number} inFlight
   * @returns {boolean} true when the evidence now says: fall back to one request in flight
   */
  peerClosed (inFlight) {
    if (inFlight < 2) return false;
    this.peerCloses++;
    return this._strike();
  }

  /** @returns {number} suspects waiting for their late reply or their grace to run out */
  get suspects () {
    return this._suspects.size;
  }

  /** Suspects past their grace become strikes. @param {bigint} nowNs @returns {boolean} */
  _judge (nowNs) {
    let fall = false;
    for (const [tid, ripeNs] of this._suspects) {
      if (ripeNs > nowNs) continue;
      this._suspects.delete(tid);
      this.skipped++;
      if (this._strike()) fall = true;
    }
    return fall;
  }

  /** @returns {boolean} */
  _strike () {
    this._score += STRIKE;
    return this._score >= FALL_BACK_AT;
  }
}

module.exports = { PipelineGuard, STRIKE, FALL_BACK_AT };
