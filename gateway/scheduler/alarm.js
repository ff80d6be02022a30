'use strict';

/**
 * A sub-millisecond wake-up for a worker thread that must keep reading its sockets meanwhile.
 *
 * Why. A thread with replies pending cannot block (Atomics.wait) until its next deadline: a reply
 * that came meanwhile would be read late, and its response time recorded long. libuv's timers are
 * whole milliseconds, so the deadline was left to a 1 ms timer, which woke it 1-2 ms late, unless a
 * reply happened to complete first. One stalled device kept a request pending for its whole
 * timeout, and every other job of its thread then sent up to 2 ms late: one of five devices
 * stalling doubled the other four's p99 (bench question 9, issue 20).
 *
 * How. A small thread of its own (one per thread that uses it, started on first use) sleeps on
 * Atomics.wait until the deadline it is given, then posts a message. The message wakes the owning
 * thread's event loop, which was waiting in epoll on its sockets and this port alike, and replies
 * are read as they come all the while. Measured on the 2-core VM (Node 20, 300 alarms 0.5 ms out,
 * twice): 69-80 us late at p50, 140-243 us at p99, in a thread given 1 us of timer slack
 * (timer-slack.js; the alarm thread inherits its owner's); 113-123 us and 208-244 us with Linux's
 * default 50 us (Atomics.wait's own slack, then the message).
 * The first alarm waits for the thread to start (24-30 ms): the caller's 1 ms timer covers it.
 *
 * Protocol, over shared memory: the owner stores the deadline (process.hrtime ns, 0 for none) and
 * bumps a generation with Atomics.notify; the alarm thread waits on the generation with the
 * remaining time as its timeout, and at the deadline posts the generation it fired for, so a
 * message for a deadline since replaced is recognized and ignored.
 */

const { Worker, MessageChannel } = require('node:worker_threads');

/** The alarm thread's whole program (its own isolate: a few MB, asleep nearly always) */
const SOURCE = `
const { workerData } = require('node:worker_threads');
const { gen, at, port } = workerData;
for (;;) {
  const g = Atomics.load(gen, 0);
  const t = Atomics.load(at, 0);
  if (t > 0n) {
    const rem = Number(t - process.hrtime.bigint());
    if (rem > 0) { Atomics.wait(gen, 0, g, rem / 1e6); continue; }
    port.postMessage(g);
  }
  Atomics.wait(gen, 0, g);
}
`;

/** What the alarms did in this thread, for tests and diagnostics (never read on the hot path). */
const alarmStats = { set: 0, fired: 0, stale: 0 };

let gen = null;
let at = null;
let port = null;
let failed = false;
/** the deadline armed (process.hrtime ns as a Number), 0 when none */
let armedAt = 0;
let onFire = null;

function start () {
  try {
    gen = new Int32Array(new SharedArrayBuffer(4));
    at = new BigInt64Array(new SharedArrayBuffer(8));
    const channel = new MessageChannel();
    port = channel.port1;
    const worker = new Worker(SOURCE, { eval: true, workerData: { gen, at, port: channel.port2 }, transferList: [channel.port2] });
    // neither keeps the thread alive: the owner's own work does
    worker.unref();
    worker.on('error', () => { failed = true; });
    port.on('message', (g) => {
      if (g !== Atomics.load(gen, 0)) { alarmStats.stale++; return; }
      alarmStats.fired++;
      armedAt = 0;
      onFire();
    });
    port.unref();
  } catch {
    failed = true;
  }
}

/**
 * Asks for `fire` to be called at `atHr` or soon after (never before), unless an earlier alarm is
 * already armed. One alarm per thread: the latest earlier deadline replaces the armed one.
 * @param {number} atHr the deadline, process.hrtime ns as a Number
 * @param {() => void} fire called when it fires (the latest given: one owner per thread)
 * @returns {boolean} false when no alarm thread could be started (the caller falls back to a timer)
 */
function setAlarm (atHr, fire) {
  if (failed) return false;
  if (gen === null) { start(); if (failed) return false; }
  onFire = fire;
  if (armedAt !== 0 && armedAt <= atHr) return true;
  armedAt = atHr;
  alarmStats.set++;
  Atomics.store(at, 0, BigInt(Math.ceil(atHr)));
  Atomics.add(gen, 0, 1);
  Atomics.notify(gen, 0);
  return true;
}

module.exports = { setAlarm, alarmStats };
