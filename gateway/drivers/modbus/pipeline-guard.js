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
 * Evidence, per connection's requests (a request is "overlapped" when it was written while another
 * request was in flight on the same connection):
 * - SKIPPED (against): an overlapped request timed out although the device answered some other
 *   request after it was written. The device was alive and answering while this one waited; a device
 *   that serves pipelined requests in order would have answered it too. A one-at-a-time device
 *   produces this for every request it dropped.
 * - PEER CLOSE (against): the peer closed the connection while more than one request was in flight.
 * - OVERLAP ANSWERED (for): an overlapped request was answered, and some other reply arrived between
 *   its write and its reply: two requests were outstanding at once and both were answered.
 *
 * The rule: every piece of evidence against adds one strike (STRIKE points), every overlap answered
 * takes away one point, never below zero; at FALL_BACK_AT points (three strikes with fewer than
 * STRIKE answered overlaps between them) the client falls back to one request in flight, for good
 * (until it is built again: a redeploy or restart), and warns with NINES_ERR_PIPELINE_UNSUPPORTED.
 *
 * Why weighed and not "first timeout": a pipelining device that loses one request in a thousand (a
 * 'drop' fault, a device busy with something else) answers thousands of overlaps between two losses,
 * so its score stays at zero; a one-at-a-time device at N in flight skips N − 1 requests per
 * timeout period and answers no overlap, so it falls back at the first timeouts (at maxInflight 2:
 * within three timeout periods).
 *
 * Limits, stated:
 * - Detection needs timeouts: until then, the requests the device dropped wait their whole timeout.
 * - A one-at-a-time device that is much faster than the round trip may answer an overlapped request
 *   because it arrived just after the device finished the previous one; such answers count for
 *   pipelining. If it also drops often enough for three strikes to outweigh them, it still falls back;
 *   if not, it mostly works and the losses show as timeouts.
 * - A pipelining device that is merely slow (a request answered after its timeout, the one before it
 *   in time) counts a strike too; answered overlaps cancel it again.
 * - A device that closes the connection for reasons of its own while several requests are in flight
 *   (a reboot) counts a strike per close.
 * - Out-of-order answers (a gateway in front of several units) are not evidence either way.
 */

/** Points one piece of evidence against pipelining weighs; one overlap answered takes one away */
const STRIKE = 32;
/** Points at which the client falls back to one request in flight: three strikes */
const FALL_BACK_AT = 3 * STRIKE;

class PipelineGuard {
  constructor () {
    // Replies taken on this client so far: a request remembers the count at its write
    this._answers = 0;
    this._score = 0;
    /** Requests skipped (see the file header): counted, for the stats and the warning */
    this.skipped = 0;
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
   * p timed out.
   * @param {{overlap: number}} p
   * @returns {boolean} true when the evidence now says: fall back to one request in flight
   */
  timedOut (p) {
    if (p.overlap < 0 || this._answers <= p.overlap) return false;
    this.skipped++;
    return this._strike();
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

  /** @returns {boolean} */
  _strike () {
    this._score += STRIKE;
    return this._score >= FALL_BACK_AT;
  }
}

module.exports = { PipelineGuard, STRIKE, FALL_BACK_AT };
