'use strict';

const { NinesError } = require('../base/errors');
const { wait, inflight, releaseDue, requestFailed } = require('./wait');
const { nowNs, fromHrtime, toHrtime } = require('./clock');

/**
 * The scheduler: runs an operation against a device on N connections, at a fixed rate or closed loop,
 * and records every outcome without coordinated omission (latency-method.md rules 3-5, 9).
 *
 * Fixed rate (wrk2's plan): connection c of N sends its k-th request at the intended time
 *   t(k, c) = t0 + (k·N + c) / rate
 * so the N connections interleave into one schedule of `rate` requests per second, each connection
 * strictly one request at a time (the devices' discipline). When a connection is still busy at its
 * next intended time, the request goes when it is free, and its latency still counts from the
 * intended time. The catch-up policy bounds what happens after a stall:
 * - `burst`: send as soon as the connection is free;
 * - `capped` (default): catch up at no more than twice the connection's nominal rate (wrk2);
 * - `skip`: a slot whose successor is also already due is skipped, counted as skipped, and recorded
 *   with what it had already waited (a lower bound of what it would have seen).
 * Closed loop (`rate: Infinity`, "max"): each connection sends again as soon as its reply is in; the
 * results are service times and are labelled `closed-loop`.
 *
 * Recorded per request (integer ns):
 * - response time = reply complete − intended time (closed loop: − actual send);
 * - service time  = reply complete − actual send;
 * - dispatch lag  = actual send − the moment the request was allowed to go (the later of its intended
 *   time, the moment its connection became free — its previous reply complete — and, for `capped`,
 *   the catch-up cap). This is the engine's own overhead (timer lateness, event-loop delay, and the
 *   recording and value handling between a reply and the next write), not the device's queueing,
 *   which the response time already shows.
 * Times are taken from the driver's stamps (sentNs, doneNs) where it has them; the scheduler reads
 * the clock itself only to wait and for failures without a stamp.
 * A timeout is a sample (its response time is recorded, a lower bound) and counts as a timeout; an
 * error reply or a failed send counts as an error with its response time. A request its device did
 * not send by design (its unit on a shared line is down and left alone: NINES_ERR_UNIT_DOWN) counts
 * as skipped, with what it waited. Nothing is dropped.
 */

const POLICIES = ['burst', 'capped', 'skip'];
const PRECISIONS = ['spin', 'sleep'];
const TIMEOUT = 'NINES_ERR_REPLY_TIMEOUT';
const UNIT_DOWN = 'NINES_ERR_UNIT_DOWN';

/**
 * @typedef {object} ScheduleOptions
 * @property {Array<{request: Function, submit?: Function}>} clients one driver client per connection
 *   (a DeviceUser per lane, for jobs); one with submit() (drivers/modbus/client.js) is driven through
 *   it, without a promise per request
 * @property {(seq: number) => any} nextOp the operation for the seq-th request (0-based, across connections)
 * @property {number} [ratePerSec=Infinity] requests per second over all connections; Infinity = closed loop
 * @property {number} [count] total planned requests (sent + skipped); omitted = unbounded
 * @property {number} [durationMs] stop planning requests intended after t0 + durationMs
 * @property {'burst'|'capped'|'skip'} [policy='capped']
 * @property {'spin'|'sleep'} [precision='sleep'] how a lane waits for its intended time (wait.js):
 *   `spin` sleeps through most of the gap and spins the last stretch (tens of µs late at most, at the
 *   cost of CPU); `sleep` sleeps to the deadline (Atomics.wait's slack: 20-67 µs at p50 in a worker made
 *   with timer-slack.js, 86-110 µs with Linux's default; or a timer's ms)
 * @property {number} [timeoutMs] per-request timeout passed to the client
 * @property {object} recorder a latency Recorder (recordOk/recordError/recordTimeout/recordSkipped)
 * @property {(reply: object, connection: number) => void} [onReply] called after each reply is recorded;
 *   the reply may be the client's own, valid only until onReply returns (drivers/modbus/client.js
 *   submit()), its `data` the caller's to keep. Without onReply, replies' values are not decoded
 * @property {(err: Error, connection: number) => void} [onError] called after each failure is recorded
 * @property {AbortSignal} [signal] aborting stops planning; in-flight requests complete and are recorded
 * @property {number} [startDelayMs=0] t0 = now + startDelayMs
 * @property {number} [warmup=0] requests that run first, as part of the same schedule (the same lanes,
 *   the same code: a run of its own leaves the measured run's objects to be compiled while it is
 *   measured, issue 11); once that many have completed, onWarm() is called (the caller starts its
 *   recorder's interval afresh) and count, durationMs and the returned figures count from there
 * @property {(final: boolean) => void} [onWarm] called twice: halfway through the warm-up (final
 *   false, a rehearsal: the caller may start its interval afresh then too) and when its requests
 *   have completed (final true)
 */

/**
 * Starts a schedule.
 * @param {ScheduleOptions} opts
 * @returns {{done: Promise<{planned: number, sent: number, skipped: number, startNs: bigint, endNs: bigint}>,
 *   stop: () => void, readonly planned: number, readonly completed: number}}
 */
function startSchedule (opts) {
  const s = new Schedule(checkOptions(opts));
  return {
    done: s.done,
    stop: s.stop,
    get planned () { return s.planned - s.base.planned; },
    get completed () { return s.completed - s.base.completed; }
  };
}

/**
 * One schedule: its plan and counts, shared by its lanes (one per connection). A lane is a small
 * state machine driven by its client's and its waits' callbacks, not an async loop: nothing is
 * allocated per request by the scheduler itself, and V8 compiles small functions early, where a
 * long-running async function is compiled late or not at all (issue 11).
 */
class Schedule {
  /** @param {ScheduleOptions & {policy: string, ratePerSec: number, startDelayMs: number}} o checked */
  constructor (o) {
    this.o = o;
    this.n = o.clients.length;
    this.closedLoop = o.ratePerSec === Infinity;
    this.rec = o.recorder;
    this.t0 = nowNs() + Math.round(o.startDelayMs * 1e6);
    // a warm-up's duration is its count: durationMs counts from its end
    this.endNs = -1;
    this.endNs = o.durationMs === undefined || o.warmup > 0 ? Infinity : this.t0 + Math.round(o.durationMs * 1e6);
    this.measuredNs = -1;
    this.measuredNs = this.t0;
    this.slotNs = this.closedLoop ? 0 : 1e9 / o.ratePerSec; // per-schedule slot, ns (float)
    this.capGapNs = Math.round(this.slotNs * this.n / 2); // half of one connection's period
    this.requestOpts = o.timeoutMs === undefined ? undefined : { timeoutMs: o.timeoutMs };
    this.stopped = false;
    this.planned = 0; // slots taken from the count (sent + skipped)
    this.sent = 0;
    this.skipped = 0;
    this.completed = 0;
    this.seq = 0;
    // the warm-up: requests left to complete, and the counts at its end (subtracted from the figures)
    this.warmLeft = o.warmup || 0;
    this.warmHalf = this.warmLeft >= 2 ? Math.floor(this.warmLeft / 2) : -1;
    // (the fields the warm-up's end sets again are set twice here, so V8 never takes them for
    // constants: code compiled on that belief is thrown away when they change, issue 11. Checked
    // with --trace-deopt on Node 20: set once, the warm-up's end marks step, send, quotaLeft and
    // onReply for deoptimization, "code dependencies"; set twice, none of them)
    this.base = null;
    this.base = { planned: 0, sent: 0, skipped: 0, completed: 0 };
    // slots planned at most: the count, after the warm-up's own requests (set again as the warm-up ends)
    this.limit = -1;
    this.limit = o.count === undefined ? Infinity : (o.warmup || 0) + o.count;
    this.running = this.n;
    this.stop = () => { this.stopped = true; };
    /** @type {(out: object) => void} */
    this._resolve = null;
    this.done = new Promise((resolve) => { this._resolve = resolve; });
    if (o.signal) {
      if (o.signal.aborted) this.stopped = true;
      else o.signal.addEventListener('abort', this.stop, { once: true });
    }
    this.lanes = o.clients.map((client, c) => new Lane(this, client, c));
    for (const lane of this.lanes) lane.start();
  }

  /** @returns {boolean} whether the count leaves a slot to plan */
  quotaLeft () {
    return this.planned < this.limit;
  }

  /** A request completed: halfway through the warm-up it rehearses the warm-up's end, the last ends it. */
  settled () {
    this.completed++;
    if (this.warmLeft === 0) return;
    this.warmLeft--;
    if (this.warmLeft === 0 || this.warmLeft === this.warmHalf) this.warmed(this.warmLeft === 0);
  }

  /**
   * The warm-up ends (final), or rehearses its end halfway: the same code runs both times, so V8
   * has compiled it before it counts (a branch first taken in a compiled loop throws the loop's
   * code away, and compiling it again stalls one core for milliseconds: issue 11).
   * @param {boolean} final
   */
  warmed (final) {
    this.base = { planned: this.planned, sent: this.sent, skipped: this.skipped, completed: this.completed };
    // a rehearsal's limit and end are set again at the end (the warm-up's own requests still go first)
    if (this.o.count !== undefined) this.limit = this.planned + this.o.count + this.warmLeft;
    if (this.o.durationMs !== undefined && final) this.endNs = nowNs() + Math.round(this.o.durationMs * 1e6);
    this.measuredNs = nowNs();
    if (this.o.onWarm) this.o.onWarm(final);
  }

  /** @param {number} k @param {number} c @returns {number} intended time of connection c's k-th slot (ns, nowNs scale) */
  intendedAt (k, c) {
    return this.t0 + Math.round((k * this.n + c) * this.slotNs);
  }

  laneEnded () {
    if (--this.running !== 0) return;
    if (this.o.signal) this.o.signal.removeEventListener('abort', this.stop);
    const b = this.base;
    this._resolve({ planned: this.planned - b.planned, sent: this.sent - b.sent, skipped: this.skipped - b.skipped, startNs: toHrtime(this.measuredNs), endNs: process.hrtime.bigint() });
  }
}

/** What a lane's wake() continues */
const START = 0;
const SEND = 1;

/**
 * One connection of a schedule, strictly one request at a time. Its times are Numbers of ns
 * (clock.js nowNs scale), kept in its own fields.
 */
class Lane {
  /**
   * @param {Schedule} s
   * @param {{request: Function, submit?: Function}} client
   * @param {number} c the lane's index
   */
  constructor (s, client, c) {
    this.s = s;
    this.client = client;
    this.c = c;
    this.viaSubmit = typeof client.submit === 'function';
    // the client decodes reply values only when someone reads them
    this.wantsData = s.o.onReply !== undefined;
    this.k = 0;
    this.freeNs = s.t0; // when this connection last became free: its last reply complete
    this.lastSendNs = -1; // none yet
    this.intended = 0;
    this.earliest = 0;
    this.allowed = 0;
    /** @type {number} the deadline wait() wakes the lane at */
    this.at = 0;
    /** wait.js: spin the last stretch before `at` */
    this.spin = s.o.precision === 'spin';
    this.phase = START;
    // bound once: the promise path's callbacks and the closed loop's pause after a refusal
    this.onOk = (reply) => this.onReply(reply);
    this.onFail = (err) => this.onError(err);
    this.resume = () => { this.freeNs = nowNs(); this.step(); };
  }

  start () {
    if (this.s.closedLoop) {
      this.at = this.s.t0;
      this.phase = START;
      if (wait(this)) return;
    }
    this.step();
  }

  /** wait.js: the deadline has come */
  wake () {
    if (this.phase === START) this.step();
    else this.afterWait();
  }

  /** Plans the lane's next request. */
  step () {
    const s = this.s;
    if (s.stopped || !s.quotaLeft()) { this.end(); return; }
    if (s.closedLoop) {
      // the next request is allowed as soon as the connection is free
      const intended = this.freeNs;
      if (intended >= s.endNs) { this.end(); return; }
      this.intended = intended;
      this.allowed = intended;
      this.send();
      return;
    }
    let intended = s.intendedAt(this.k, this.c);
    if (intended >= s.endNs) { this.end(); return; }
    if (s.o.policy === 'skip') {
      // skip every slot whose successor is already due: the request goes for the latest due slot
      let now = nowNs();
      while (s.quotaLeft() && !s.stopped) {
        const next = s.intendedAt(this.k + 1, this.c);
        if (next > now || next >= s.endNs) break;
        s.rec.recordSkipped(now - intended);
        s.planned++; s.skipped++; this.k++;
        intended = next;
        now = nowNs();
      }
      if (!s.quotaLeft() || s.stopped) { this.end(); return; }
    }
    let earliest = intended;
    if (s.o.policy === 'capped' && this.lastSendNs >= 0 && this.lastSendNs + s.capGapNs > earliest) earliest = this.lastSendNs + s.capGapNs;
    this.intended = intended;
    this.earliest = earliest;
    this.at = earliest;
    this.phase = SEND;
    if (wait(this)) return;
    this.afterWait();
  }

  afterWait () {
    this.allowed = this.earliest > this.freeNs ? this.earliest : this.freeNs;
    this.send();
  }

  send () {
    const s = this.s;
    // another lane may have taken the last slot while this one waited
    if (s.stopped || !s.quotaLeft()) { this.end(); return; }
    s.planned++;
    const op = s.o.nextOp(s.seq++);
    inflight.count++;
    if (this.viaSubmit) {
      this.client.submit(op, s.o.timeoutMs, this);
      return;
    }
    let p;
    try {
      p = this.client.request(op, s.requestOpts);
    } catch (err) {
      p = Promise.reject(err);
    }
    p.then(this.onOk, this.onFail);
  }

  /** @param {object} reply */
  onReply (reply) {
    const s = this.s;
    inflight.count--;
    releaseDue();
    const done = reply.doneNs;
    const doneNs = typeof done === 'bigint' && done !== 0n ? fromHrtime(done) : nowNs();
    const sent = reply.sentNs;
    if (typeof sent === 'bigint') {
      const sentNs = fromHrtime(sent);
      s.sent++;
      this.lastSendNs = sentNs;
      s.rec.recordOk(doneNs - (s.closedLoop ? sentNs : this.intended), doneNs - sentNs, Math.max(0, sentNs - this.allowed));
    } else {
      s.rec.recordOk(doneNs - this.intended, undefined, undefined);
    }
    if (s.o.onReply) s.o.onReply(reply, this.c);
    s.settled();
    // the connection became free when the reply was complete: what the engine spends from there to
    // the next write, recording included, is dispatch lag
    this.freeNs = doneNs;
    this.k++;
    this.step();
  }

  /** @param {Error & {code?: string, sentNs?: bigint}} err */
  onError (err) {
    const s = this.s;
    inflight.count--;
    requestFailed();
    releaseDue();
    const doneNs = nowNs();
    const sent = err !== null && err !== undefined ? err.sentNs : undefined;
    const wasSent = typeof sent === 'bigint';
    const sentNs = wasSent ? fromHrtime(sent) : 0;
    if (wasSent) { s.sent++; this.lastSendNs = sentNs; }
    const code = err !== null && err !== undefined ? err.code : undefined;
    // Closed loop measures an answer from its write; a timeout counts from when the request was
    // asked, as its deadline does: a request that waited first (an ASCII client reconnecting after
    // an unanswered command, a serial line held quiet) was given up at its timeout, not 50 ms
    // sooner, and is recorded so (issue 21: a 1 s timeout recorded as 948 ms)
    const responseNs = doneNs - (s.closedLoop && wasSent && code !== TIMEOUT ? sentNs : this.intended);
    const serviceNs = wasSent ? doneNs - sentNs : undefined;
    const lagNs = wasSent ? Math.max(0, sentNs - this.allowed) : undefined;
    if (code === TIMEOUT) s.rec.recordTimeout(responseNs, serviceNs, lagNs);
    else if (code === UNIT_DOWN && !wasSent) s.rec.recordSkipped(responseNs);
    else s.rec.recordError(responseNs, serviceNs, lagNs);
    if (s.o.onError) s.o.onError(err, this.c);
    s.settled();
    this.freeNs = doneNs;
    this.k++;
    // a request that never reached the wire failed at once: in a closed loop, don't spin on a dead device
    if (s.closedLoop && !wasSent && !s.stopped) {
      setTimeout(this.resume, Math.min(s.o.timeoutMs || 100, 100));
      return;
    }
    this.step();
  }

  end () {
    this.s.laneEnded();
  }
}

function checkOptions (opts) {
  const fail = (field, value, rule) => {
    throw new NinesError('NINES_ERR_INVALID_ARG', `schedule ${field} ${rule}; got ${describe(value)}`, { field, value: describe(value) });
  };
  if (!opts || typeof opts !== 'object') fail('options', opts, 'must be an object');
  const o = { policy: 'capped', precision: 'sleep', ratePerSec: Infinity, startDelayMs: 0, ...opts };
  if (!Array.isArray(o.clients) || o.clients.length === 0 || o.clients.some((c) => !c || typeof c.request !== 'function')) {
    fail('clients', o.clients, 'must be a non-empty array of driver clients');
  }
  if (typeof o.nextOp !== 'function') fail('nextOp', o.nextOp, 'must be a function (seq) => op');
  if (!(o.ratePerSec === Infinity || (typeof o.ratePerSec === 'number' && o.ratePerSec > 0 && Number.isFinite(o.ratePerSec)))) {
    fail('ratePerSec', o.ratePerSec, 'must be a positive number or Infinity (closed loop)');
  }
  if (!POLICIES.includes(o.policy)) fail('policy', o.policy, `must be one of ${POLICIES.join(', ')}`);
  if (!PRECISIONS.includes(o.precision)) fail('precision', o.precision, `must be one of ${PRECISIONS.join(', ')}`);
  if (o.count !== undefined && !(Number.isInteger(o.count) && o.count >= 0)) fail('count', o.count, 'must be a whole number ≥ 0');
  if (o.warmup !== undefined && !(Number.isInteger(o.warmup) && o.warmup >= 0)) fail('warmup', o.warmup, 'must be a whole number ≥ 0');
  if (o.onWarm !== undefined && typeof o.onWarm !== 'function') fail('onWarm', o.onWarm, 'must be a function');
  if (o.durationMs !== undefined && !(typeof o.durationMs === 'number' && o.durationMs >= 0)) fail('durationMs', o.durationMs, 'must be a number ≥ 0');
  if (o.timeoutMs !== undefined && !(typeof o.timeoutMs === 'number' && o.timeoutMs > 0)) fail('timeoutMs', o.timeoutMs, 'must be a positive number');
  if (!o.recorder || ['recordOk', 'recordError', 'recordTimeout', 'recordSkipped'].some((m) => typeof o.recorder[m] !== 'function')) {
    fail('recorder', o.recorder, 'must be a latency Recorder');
  }
  return o;
}

function describe (v) {
  if (typeof v === 'function') return 'a function';
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (v && typeof v === 'object') return 'an object';
  return JSON.stringify(v);
}

module.exports = { startSchedule, POLICIES, PRECISIONS };
