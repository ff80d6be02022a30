'use strict';

/**
 * The waiting side of a Device: per-user FIFOs, the round-robin that picks whose request a free
 * connection takes, and the one timer that expires queued deadlines. Plain functions over the
 * device's own fields: every piece of this state belongs to one device, none is module-wide, so
 * one device's backlog or timer never touches another's.
 *
 * Round-robin: `ring` lists users with waiting requests, in turn order. The user served last is not
 * put back in the ring at once but at the next turn (`lastServed`), so a user that joins meanwhile
 * goes before it: a user flooding the device delays another user's request by at most the requests
 * already on the wire (one per connection, or maxInflight per connection on a pipelining device: a
 * free slot is taken in turn exactly like a free connection). A request that goes straight to a free
 * slot (the hot path) counts as that user's turn too.
 *
 * Deadlines: one timer per device, armed for the earliest queued deadline and re-armed only when a
 * request with an earlier one arrives. With one timeout per user (the usual case) a user's deadlines
 * only grow, so the expired requests are a prefix of its FIFO and each firing costs what expired.
 */

const { queuedTimeout, expiredError } = require('./errors');

const now = () => performance.now();

/**
 * A request waiting in a user's FIFO; a class so every instance has the same shape. It settles
 * through its promise's functions (request()) or its handler (submit()).
 */
class Pending {
  constructor (user, op, timeoutMs, deadline, handler, startBy, timeoutAt) {
    this.user = user;
    this.op = op;
    this.timeoutMs = timeoutMs;
    this.deadline = deadline; // performance.now() ms: the earlier of its timeout and startBy
    /** performance.now() ms its timeout ends at (its time on the wire is never cut by startBy) */
    this.timeoutAt = timeoutAt;
    /** performance.now() ms after which it may not start (a write's maximum age); Infinity: none */
    this.startBy = startBy;
    this.resolve = null;
    this.reject = null;
    /** @type {{onReply: Function, onError: Function}|null} */
    this.handler = handler;
  }
}

/** @param {object} d the device */
function init (d) {
  d._ring = [];
  d._lastServed = null;
  d._queued = 0;
  d._timer = null;
  d._timerAt = 0;
  d._onTimer = () => expire(d);
}

/**
 * Queues a request for its user's turn.
 * @param {object} [handler] submit()'s: the request settles through it, and nothing is returned
 * @param {number} [startBy] performance.now() ms after which it may not start (then it fails unsent
 *   with NINES_ERR_WRITE_EXPIRED); its deadline is the earlier of the two
 * @returns {Promise<object>|undefined}
 */
function enqueue (d, user, op, timeoutMs, deadline, handler = null, startBy = Infinity) {
  // deadline below is the earlier of the two: the queue's timer fails it unsent at either
  const p = new Pending(user, op, timeoutMs, startBy < deadline ? startBy : deadline, handler, startBy, deadline);
  const promise = handler === null ? new Promise((resolve, reject) => { p.resolve = resolve; p.reject = reject; }) : undefined;
  if (p.deadline < user._lastDeadline) user._sorted = false;
  user._lastDeadline = p.deadline;
  user._q.push(p);
  d._queued++;
  if (user._ring === 0) { user._ring = 1; d._ring.push(user); }
  if (d._timer === null || p.deadline < d._timerAt) arm(d, p.deadline);
  return promise;
}

/** Records that `user` just had its turn (a request sent straight to a free connection). */
function markServed (d, user) {
  if (d._lastServed === user) return;
  if (d._lastServed !== null) requeueLast(d);
  if (user._ring === 0) { user._ring = 2; d._lastServed = user; }
}

/** The user served last re-enters the ring behind those that joined since. */
function requeueLast (d) {
  const last = d._lastServed;
  d._lastServed = null;
  if (last._ring !== 2) return;
  if (last._q.length !== 0 && !last._closed) { last._ring = 1; d._ring.push(last); } else last._ring = 0;
}

/** @returns {Pending|null} the next request in round-robin order, taken out of its FIFO */
function next (d) {
  if (d._lastServed !== null) requeueLast(d);
  const ring = d._ring;
  while (ring.length !== 0) {
    const user = ring.shift();
    user._ring = 0;
    const p = user._q.shift();
    if (p === undefined) continue; // its requests expired meanwhile
    d._queued--;
    if (user._q.length === 0) resetOrder(user);
    user._ring = 2;
    d._lastServed = user;
    return p;
  }
  return null;
}

/** Hands waiting requests to connections with a free slot, in turn. */
function pump (d) {
  while (d._queued !== 0) {
    const conn = d._takeIdle();
    if (conn === null) return;
    let p = next(d);
    const t = now();
    // Expired before its turn came (the timer has not fired yet): it must not take the device's time
    while (p !== null && p.deadline <= t) {
      fail(d, p, null);
      p = next(d);
    }
    if (p === null) {
      conn.idle = true;
      d._idle.push(conn);
      return;
    }
    // the rest of its time, but never more than its own timeout on the wire (on a line it may have
    // waited behind a silent unit's request with time to spare: Device#_send). On a serial line its
    // whole timeout: the device answers no sooner because the request waited, and a reply cut short
    // costs the line a quiet period and risks being taken for the next read's (issue 18)
    const left = d._serialLine ? p.timeoutMs : Math.min(p.timeoutAt - t, p.timeoutMs);
    const ms = left < 1.5 ? 1 : Math.round(left);
    if (p.handler !== null) {
      d._callSubmit(conn, p.user, p.op, ms, p.handler);
      continue;
    }
    conn.opts.timeoutMs = ms;
    d._call(conn, p.user, p.op).then(p.resolve, p.reject);
  }
}

/** The timer: fails queued requests whose deadline has passed, and re-arms for the earliest left. */
function expire (d) {
  d._timer = null;
  const t = now();
  let earliest = Infinity;
  for (const user of d._users.values()) {
    const q = user._q;
    if (q.length === 0) continue;
    if (user._sorted) {
      while (q.length !== 0 && q.peek().deadline <= t) { d._queued--; fail(d, q.shift(), null); }
      if (q.length !== 0 && q.peek().deadline < earliest) earliest = q.peek().deadline;
    } else {
      const gone = q.removeWhere((p) => {
        if (p.deadline <= t) return true;
        if (p.deadline < earliest) earliest = p.deadline;
        return false;
      });
      d._queued -= gone.length;
      for (const p of gone) fail(d, p, null);
    }
    if (q.length === 0) resetOrder(user);
  }
  if (earliest !== Infinity) arm(d, earliest);
}

/** Rejects every waiting request (the device went down or closed) and stops the timer. */
function rejectAll (d, makeError) {
  if (d._timer !== null) { clearTimeout(d._timer); d._timer = null; }
  for (const user of d._users.values()) rejectUser(d, user, makeError);
  for (const user of d._ring) user._ring = 0;
  d._ring = [];
  if (d._lastServed !== null) { d._lastServed._ring = 0; d._lastServed = null; }
}

/** Rejects the requests one user has waiting. */
function rejectUser (d, user, makeError) {
  const gone = user._q.clear();
  d._queued -= gone.length;
  resetOrder(user);
  for (const p of gone) fail(d, p, makeError(p));
}

/**
 * Rejects the waiting requests that match (those of a unit that went down), whoever's they are.
 * @param {(p: Pending) => boolean} match
 * @param {(p: Pending) => Error} makeError
 * @param {number} outcome what they count as (the device's outcome codes)
 */
function rejectWhere (d, match, makeError, outcome) {
  for (const user of d._users.values()) {
    if (user._q.length === 0) continue;
    const gone = user._q.removeWhere(match);
    d._queued -= gone.length;
    if (user._q.length === 0) resetOrder(user);
    for (const p of gone) fail(d, p, makeError(p), outcome);
  }
}

/**
 * @param {Pending} p @param {Error|null} err null: its deadline passed while it waited
 * @param {number} [outcome] what it counts as; default: a timeout or an error by its code
 */
function fail (d, p, err, outcome) {
  if (err === null) {
    const t = now();
    err = p.startBy <= t ? expiredError(d, p.user, t - p.startBy) : queuedTimeout(d, p.user, p.timeoutMs);
  }
  d._count(p.user, outcome !== undefined ? outcome : err.code === 'NINES_ERR_REPLY_TIMEOUT' ? 2 : 1);
  if (p.handler !== null) p.handler.onError(err);
  else p.reject(err);
}

function resetOrder (user) {
  user._sorted = true;
  user._lastDeadline = 0;
}

function arm (d, deadline) {
  if (d._timer !== null) clearTimeout(d._timer);
  d._timerAt = deadline;
  const ms = Math.ceil(deadline - now());
  d._timer = setTimeout(d._onTimer, ms < 1 ? 1 : ms);
}

module.exports = { init, enqueue, markServed, pump, rejectAll, rejectUser, rejectWhere, Pending };
