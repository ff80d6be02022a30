'use strict';

const { isMainThread } = require('node:worker_threads');
const { setAlarm } = require('./alarm');
const { DeadlineQueue } = require('./deadline-queue');
const { nowNs, toHrtimeNumber } = require('./clock');

/**
 * Waiting until an absolute deadline, for the scheduler's lanes.
 *
 * Time here is the scheduler's clock (clock.js `nowNs()`: a Number of ns on the process.hrtime
 * clock, whole numbers).
 *
 * A waiter is an object with `at` (ns, this scale), `wake()` and optionally `spin` (true: a precise
 * wait); wake() is called once, at or after `at`, never before. Callbacks, not promises: a lane
 * waits without allocating anything.
 *
 * Two precisions (issue 20), chosen per waiter:
 * - `sleep` (spin false): sleep to the deadline itself. Cheap, and late by the sleep's own slack:
 *   Atomics.wait wakes 20-67 us late at p50 in a worker thread given 1 us of timer slack, 86-110 us
 *   with Linux's default 50 us (timer-slack.js has the measurement), a libuv timer up to a
 *   millisecond or more.
 * - `spin` (spin true): sleep through most of the gap, wake a little early (the spin window: how
 *   late this thread's sleeps have lately ended, plus a margin, at most SPIN_WINDOW_NS), and spin
 *   the last stretch on the clock, as the C reference client does with clock_nanosleep and a short
 *   spin. With nothing of the thread in flight the spin is a plain loop (nothing is there to read); with
 *   replies pending, and on the main thread, it is turns of the event loop (setImmediate), so
 *   sockets are read as replies come and the caller's loop is never blocked. It costs CPU: at most
 *   the window (≤ SPIN_WINDOW_NS) of spinning per wait with nothing in flight, PRECISE_NS while
 *   replies are pending or on the main thread, where only timers can sleep.
 *
 * libuv keeps loop time in whole milliseconds, so a timer may fire up to 1 ms early
 * (nodejs/node#26578); the scheduler must never send before the intended time, so after a timer
 * fires we look at the clock again. For the last stretch below two milliseconds:
 * - on the main thread (Node-RED's loop, or `inline` mode): a 1 ms timer (sleep), or turns of the
 *   loop (spin). Blocking that loop is not ours to do;
 * - in a worker thread: one driver per thread serves every waiting lane of every job in that thread:
 *   - nothing of this thread in flight: `Atomics.wait` until the earliest deadline, or until the
 *     earliest spinning waiter's window opens (sub-millisecond precision: about 0.1 ms late, never
 *     early). Nothing else of this thread can be delayed by it;
 *   - replies pending: never block (a blocked thread reads its replies late, which at thousands of
 *     requests per second caps the thread's throughput). Due deadlines are released each time a
 *     reply completes (`releaseDue`, called by the scheduler), which at high rates happens every few
 *     tens of microseconds. When replies are slow: for a sleeping waiter under 2 ms away, the
 *     alarm thread (alarm.js: another thread's Atomics.wait, then a message that wakes this loop
 *     while it reads its sockets), with a 1 ms timer behind it as the safety net; for a spinning
 *     one, turns of the loop.
 * Every deadline that has come is released at once, in deadline order, whichever job it is of.
 * The lateness that remains is measured and published as dispatch lag.
 */

const SAB = new Int32Array(new SharedArrayBuffer(4));
const NS_PER_MS = 1e6;
/** Below this, a deadline is waited for precisely (not with a timer) */
const PRECISE_NS = 2 * NS_PER_MS;
/** The most a spinning waiter's sleep ends before its deadline: Atomics.wait's slack (40-90 us,
 * measured on Linux: the kernel's default 50 us timer slack plus the wake-up) with a margin, so the
 * sleep is over before the deadline nearly always */
const SPIN_WINDOW_NS = 200000;
/** The least spin window: the C reference client's (it sleeps to 100 us before the intended time).
 * At 50 us, sleeps of a few tens of us ended 50-90 us later (the kernel's timer slack), past the
 * deadline: on one core at 10,000/s nines' dispatch lag p99 was 27-41 us, at 100 us 10-17 us
 * (interleaved runs, bench/README.md), for about 4 % more of a core at 5,000/s. The margin over the
 * recent slack widens it on a machine whose sleeps end later still; SPIN_WINDOW_NS bounds it */
const SPIN_WINDOW_MIN_NS = 100000;
const SPIN_MARGIN_NS = 50000;
/** Before a spin window, a sleep shorter than this is not worth a system call: it is spun too */
const SPIN_SLEEP_MIN_NS = 10000;
/** Each sleep's slack counts in full; what is recorded fades by 1/64 per sleep after, so one
 * descheduled wake-up widens the window for a few hundred sleeps, not for good */
const SLACK_FADE = 63 / 64;

/**
 * How late this thread's sleeps (Atomics.wait) have lately ended: the highest recent slack, fading.
 * It sets the spin window, so the window follows the machine.
 */
const slack = {
  /** until a sleep says otherwise: the middle of Atomics.wait's usual 40-90 us */
  ns: 60000,
  /** @param {number} lateNs how long after its timeout a sleep ended (0: a wait spun without sleeping, which only fades what is recorded) */
  observe (lateNs) {
    const faded = this.ns * SLACK_FADE;
    this.ns = lateNs > faded ? lateNs : faded;
  },
  /** @returns {number} the spin window, ns */
  window () {
    const w = this.ns + SPIN_MARGIN_NS;
    return w < SPIN_WINDOW_MIN_NS ? SPIN_WINDOW_MIN_NS : w > SPIN_WINDOW_NS ? SPIN_WINDOW_NS : w;
  }
};

/** Requests of this thread currently on the wire (kept by the scheduler). */
const inflight = { count: 0 };

/**
 * What the spinning did in this thread, for tests and diagnostics: the number of spins (a stretch
 * of spinning that ends at a deadline) and how long before its deadline a spin started at most
 * (ns): the bound of a spin, whatever the machine does to the thread while it spins. Counters
 * only, never read on the hot path.
 */
const spinStats = { spins: 0, maxLeadNs: 0, startNs: -1 };

/**
 * @typedef {object} Waiter
 * @property {number} at the deadline, ns as nowNs() counts
 * @property {() => void} wake called once, at or after `at`
 * @property {boolean} [spin] true: spin the last stretch (precision spin); otherwise sleep to `at`
 */

/**
 * Wakes `waiter` at its deadline.
 * @param {Waiter} waiter
 * @param {boolean} [canBlock] defaults to "not the main thread"
 * @returns {boolean} false when the deadline has already passed (wake() is not called: go on now),
 *   true when wake() will be (it may be called before wait() returns)
 */
function wait (waiter, canBlock = !isMainThread) {
  if (waiter.at - nowNs() <= 0) return false;
  if (canBlock) driver.add(waiter);
  else timerWait(waiter);
  return true;
}

/** Main-thread wait: timers, re-checking the clock because timers fire early; a spinning waiter turns the loop for the last 2 ms. @param {Waiter} w */
function timerWait (w) {
  const now = nowNs();
  const rem = w.at - now;
  if (rem <= 0) {
    if (w.spin === true) spinEnded();
    w.wake();
    return;
  }
  if (rem >= PRECISE_NS) setTimeout(timerWait, Math.floor(rem / NS_PER_MS) - 1, w);
  else if (w.spin === true) { spinning(now, w.at); setImmediate(timerWait, w); } else setTimeout(timerWait, 1, w);
}

/**
 * A spin is under way at `now` for the deadline `at` (its first turn starts it).
 * @param {number} now
 * @param {number} at
 */
function spinning (now, at) {
  if (spinStats.startNs >= 0) return;
  spinStats.startNs = now;
  if (at - now > spinStats.maxLeadNs) spinStats.maxLeadNs = at - now;
}

/** A spin reached its deadline. */
function spinEnded () {
  if (spinStats.startNs < 0) return;
  spinStats.spins++;
  spinStats.startNs = -1;
}

/** The per-thread deadline driver of worker threads. */
const driver = {
  /** earliest first */
  waiters: new DeadlineQueue(),
  /** @type {Array<Waiter|undefined>} waiters being woken, slots [0, dueTop) (a stack: a wake may
   * release others). Its slots are kept from one release to the next (deadline-queue.js takeDue) */
  due: [],
  dueTop: 0,
  timer: null,
  timerAt: 0,
  /** an immediate (a turn of the loop) is pending */
  precise: false,
  /** the spin window wakeBy() used, ns */
  win: SPIN_WINDOW_NS,
  /** a wait is being run in place (waitInPlace()): what it wakes waits by a turn of the loop */
  inPlace: false,
  /**
   * A request of this thread ended without a reply since the loop last woke the driver: the next
   * wait goes through a turn of the loop, not in place. A request refused at once fails in a
   * microtask, and microtasks run until none is left before the loop goes on: failing, waiting in
   * place, sending and failing again, a lane would chain microtasks for as long as its device was
   * away, and the loop would never get to the reconnect that brings it back (a reply, by contrast,
   * always comes from the loop, through its socket)
   */
  turnFirst: false,

  /** @param {Waiter} w */
  add (w) {
    this.waiters.add(w);
    this.schedule();
  },

  /** Wakes every waiter whose deadline has come, in deadline order, after taking them all out. @returns {number} now */
  release () {
    const now = nowNs();
    const due = this.due;
    const from = this.dueTop;
    const n = this.waiters.takeDue(now, due, from);
    if (n === 0) return now;
    if (spinStats.startNs >= 0) spinEnded();
    // every due waiter is taken out before the first is woken, so all of them go before anything a
    // woken one starts (its send is a write; its reply comes in a later turn). A woken lane may wait
    // again at once, and wake others: they go past `to`
    const to = from + n;
    this.dueTop = to;
    for (let i = from; i < to; i++) {
      const w = due[i];
      due[i] = undefined;
      w.wake();
    }
    this.dueTop = from;
    return now;
  },

  /**
   * When the thread must be awake: the earliest deadline, or earlier, the window of the first
   * spinning waiter (only waiters due within the window of the first can open one sooner).
   * @returns {number}
   */
  wakeBy () {
    const ws = this.waiters;
    const n = ws.length;
    const win = slack.window();
    this.win = win;
    let by = ws.get(0).at;
    for (let i = 0; i < n; i++) {
      const w = ws.get(i);
      if (w.at - win >= by) break;
      if (w.spin === true) { by = w.at - win; break; }
    }
    return by;
  },

  schedule () {
    const now = this.release();
    if (this.waiters.length === 0 || this.precise) return;
    const by = this.wakeBy();
    const rem = by - now;
    // a spinning waiter's window is open, or one is near while replies are pending: turn the loop
    const spin = rem <= 0 || (inflight.count > 0 && rem < PRECISE_NS && by !== this.waiters.get(0).at);
    // (with replies pending and under PRECISE_NS, `spin` is false only for a sleeping waiter first)
    if (!spin && (rem >= PRECISE_NS || inflight.count > 0)) {
      // a timer: long waits, or short ones while replies (which also release deadlines) are pending.
      // A short one while replies are pending: the alarm thread wakes this loop at the deadline
      // (alarm.js), the loop reading the replies meanwhile; the 1 ms timer stays as its safety net.
      // For a sleeping waiter that holds to its last microseconds too: turning the loop there instead
      // was most of what a many-job thread allocated (an Immediate per turn), and with 1,000
      // devices in one worker it brought a scavenge every few hundred ms. Question 7's child, 1
      // worker, 3 interleaved rounds: scavenges 31-39 -> 9-12, GC 66-75 -> 22-24 ms and
      // mark-compacts 2 -> 0 per 15 s, dispatch-lag p99 0.98-1.19 -> 0.47-0.75 ms. The wait is then
      // as late as the alarm (69-80 us at p50), which is what `sleep` asks for; `spin` still turns
      if (rem < PRECISE_NS) setAlarm(toHrtimeNumber(by), onAlarm);
      const at = rem >= PRECISE_NS ? by - NS_PER_MS : now + NS_PER_MS;
      if (this.timer !== null && this.timerAt <= at) return;
      if (this.timer !== null) clearTimeout(this.timer);
      this.timerAt = at;
      this.timer = setTimeout(onTimer, rem >= PRECISE_NS ? Math.floor(rem / NS_PER_MS) - 1 : 1);
      return;
    }
    if (this.timer !== null) { clearTimeout(this.timer); this.timer = null; }
    if (inflight.count === 0 && !this.inPlace && !this.turnFirst && (rem > 0 || this.spinToFirst(now, false))) {
      if (rem > 0) this.waitInPlace(this.preciseTick);
      else this.waitInPlace(this.schedule);
      return;
    }
    if (spin) spinning(now, by + this.win);
    this.precise = true;
    setImmediate(onImmediate);
  },

  /**
   * Nothing of this thread in flight and a deadline (or a spin window) under PRECISE_NS away: wait
   * for it here and now, as a turn of the loop would next. Nothing is there to read meanwhile, and
   * the turn cost an Immediate and the loop's own work, about 330 bytes a wait: a third of what the
   * probe's thread allocated at 32,000/s on one core where the window was already open (the spin
   * then done by the caller, spinToFirst), and at 1,000/s where it was not yet (947 -> 604 bytes a
   * request with `spin`; `sleep` at 10,000/s 849 -> 561; one core beside the C server). Not again
   * inside what it wakes: a send that fails at once would otherwise wait for the next deadline
   * deeper in the same stack, so that wait takes a turn of the loop; nor after a failure
   * (turnFirst).
   * @param {() => void} step preciseTick, where the deadline or window is still ahead (a sleep, then
   *   a spin); schedule, where the spin is done and what came due is to be released. Passed, not
   *   chosen here by a flag: with the choice inside, V8 compiled the two paths together and each
   *   spinning request allocated 50 bytes more (10,000/s, one core: 553 against 505)
   */
  waitInPlace (step) {
    this.inPlace = true;
    try {
      step.call(this);
    } finally {
      this.inPlace = false;
    }
  },

  /**
   * Nothing of this thread in flight and a spinning waiter first, within its window at `now`: spins
   * to its deadline, as the C client does. No reply can be delayed (there is none to read), and
   * turns of the event loop allocate (an Immediate each) enough to bring a scavenge every few
   * milliseconds of spinning, itself 0.1-0.2 ms.
   * @param {number} now
   * @param {boolean} slept a sleep came just before; a wait spun through without one still fades
   *   the window, or a window as wide as the gap between requests would never see a sleep again,
   *   and never narrow
   * @returns {boolean} whether it spun
   */
  spinToFirst (now, slept) {
    const first = this.waiters.get(0);
    if (inflight.count !== 0 || first.spin !== true || first.at <= now || first.at - now > this.win) return false;
    if (!slept) slack.observe(0);
    spinning(now, first.at);
    spinUntil(first.at);
    return true;
  },

  preciseTick () {
    this.precise = false;
    const now = this.release();
    if (this.waiters.length === 0) return;
    const by = this.wakeBy();
    const rem = by - now;
    // A sleeping waiter first (no spin window opens before its deadline) sleeps however short the
    // gap: `sleep` is asked to cost little, and is late by the sleep's slack. Gaps under 100 us
    // used to be spent turning the loop, an Immediate each: at 10,000/s on one connection that was
    // about 60 turns and 24 KB allocated per request, a scavenge every 55 ms, and 88 % of a core,
    // as much as spinning. Sleeping instead (one core beside the C server, 3 s runs): 1.2 KB a
    // request, 3 scavenges in the run, 50 % of a core, dispatch lag p99 66-82 us; near capacity
    // (36,800/s) the rate held as well or better (skip: 1,889-2,610 slots skipped against
    // 3,474-4,475). Before a spinning waiter's window, a sleep under SPIN_SLEEP_MIN_NS is spun.
    const least = by === this.waiters.get(0).at ? 0 : SPIN_SLEEP_MIN_NS;
    if (rem > least && rem < PRECISE_NS && inflight.count === 0) {
      Atomics.wait(SAB, 0, 0, rem / NS_PER_MS);
      // how late the sleep ended sets the next spin windows
      slack.observe(nowNs() - now - rem);
    }
    this.spinToFirst(nowNs(), rem > least);
    // schedule() releases what came due while blocked or spinning, then picks the next way to wait
    this.schedule();
  }
};

/**
 * Spins on the clock until `at` (bounded by the caller to SPIN_WINDOW_NS). A reading allocates
 * nothing once compiled (nowNs()), so the loop reads the clock back to back, about every 40 ns.
 * (With bigint readings it did integer work between them, an eighth of what was left, and still
 * allocated some 40 bigints a spin.)
 * @param {number} at ns as nowNs() counts
 */
function spinUntil (at) {
  while (nowNs() < at);
}

function onTimer () {
  driver.timer = null;
  driver.turnFirst = false;
  driver.schedule();
}

function onAlarm () {
  driver.turnFirst = false;
  if (driver.waiters.length !== 0) driver.schedule();
}

function onImmediate () {
  driver.turnFirst = false;
  driver.preciseTick();
}

/** A request of this thread ended without a reply (driver.turnFirst says why); call before releaseDue(). */
function requestFailed () {
  driver.turnFirst = true;
}

/**
 * Releases the deadlines that have come (worker threads). The scheduler calls it whenever a reply
 * completes, so busy threads serve deadlines without blocking or waiting for a timer.
 */
function releaseDue () {
  if (driver.waiters.length !== 0) driver.schedule();
}

module.exports = { wait, inflight, releaseDue, requestFailed, spinStats, slack, SPIN_WINDOW_NS, SPIN_WINDOW_MIN_NS, PRECISE_NS };
