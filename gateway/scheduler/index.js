'use strict';

const { setTimeout: sleep } = require('node:timers/promises');
const { NinesError } = require('../base/errors');
const { waitUntil, inflight, releaseDue } = require('./wait');

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
 *   time, the moment its connection became free and, for `capped`, the catch-up cap). This is the
 *   engine's own overhead (timer lateness, event-loop delay), not the device's queueing, which the
 *   response time already shows.
 * A timeout is a sample (its response time is recorded, a lower bound) and counts as a timeout; an
 * error reply or a failed send counts as an error with its response time. A request its device did
 * not send by design (its unit on a shared line is down and left alone: NINES_ERR_UNIT_DOWN) counts
 * as skipped, with what it waited. Nothing is dropped.
 */

const POLICIES = ['burst', 'capped', 'skip'];
const TIMEOUT = 'NINES_ERR_REPLY_TIMEOUT';
const UNIT_DOWN = 'NINES_ERR_UNIT_DOWN';

/**
 * @typedef {object} ScheduleOptions
 * @property {Array<{request: Function}>} clients one driver client per connection
 * @property {(seq: number) => any} nextOp the operation for the seq-th request (0-based, across connections)
 * @property {number} [ratePerSec=Infinity] requests per second over all connections; Infinity = closed loop
 * @property {number} [count] total planned requests (sent + skipped); omitted = unbounded
 * @property {number} [durationMs] stop planning requests intended after t0 + durationMs
 * @property {'burst'|'capped'|'skip'} [policy='capped']
 * @property {number} [timeoutMs] per-request timeout passed to the client
 * @property {object} recorder a latency Recorder (recordOk/recordError/recordTimeout/recordSkipped)
 * @property {(reply: object, connection: number) => void} [onReply] called after each reply is recorded
 * @property {(err: Error, connection: number) => void} [onError] called after each failure is recorded
 * @property {AbortSignal} [signal] aborting stops planning; in-flight requests complete and are recorded
 * @property {number} [startDelayMs=0] t0 = now + startDelayMs
 */

/**
 * Starts a schedule.
 * @param {ScheduleOptions} opts
 * @returns {{done: Promise<{planned: number, sent: number, skipped: number, startNs: bigint, endNs: bigint}>,
 *   stop: () => void, readonly planned: number, readonly completed: number}}
 */
function startSchedule (opts) {
  const o = checkOptions(opts);
  const n = o.clients.length;
  const closedLoop = o.ratePerSec === Infinity;
  const t0 = process.hrtime.bigint() + BigInt(Math.round(o.startDelayMs * 1e6));
  const endNs = o.durationMs === undefined ? null : t0 + BigInt(Math.round(o.durationMs * 1e6));
  const slotNs = closedLoop ? 0 : 1e9 / o.ratePerSec; // per-schedule slot, ns (float)
  const connPeriodNs = slotNs * n; // one connection's period
  const capGapNs = BigInt(Math.round(connPeriodNs / 2));
  const rec = o.recorder;

  let stopped = false;
  let planned = 0; // slots taken from the count (sent + skipped)
  let sent = 0;
  let skipped = 0;
  let completed = 0;
  let seq = 0;

  const quotaLeft = () => o.count === undefined || planned < o.count;
  const stop = () => { stopped = true; };
  if (o.signal) {
    if (o.signal.aborted) stopped = true;
    else o.signal.addEventListener('abort', stop, { once: true });
  }

  /** intended time of connection c's k-th slot */
  const intendedAt = (k, c) => t0 + BigInt(Math.round((k * n + c) * slotNs));

  async function loop (c) {
    const client = o.clients[c];
    let k = 0;
    let freeNs = t0; // when this connection last became free
    let lastSendNs = null;
    if (closedLoop) {
      const w = waitUntil(t0);
      if (w) await w;
    }
    while (!stopped && quotaLeft()) {
      let intended;
      let allowed;
      if (closedLoop) {
        intended = process.hrtime.bigint();
        if (endNs !== null && intended >= endNs) break;
        allowed = freeNs > intended ? intended : freeNs;
      } else {
        intended = intendedAt(k, c);
        if (endNs !== null && intended >= endNs) break;
        if (o.policy === 'skip') {
          // skip every slot whose successor is already due: the request goes for the latest due slot
          let now = process.hrtime.bigint();
          while (quotaLeft() && !stopped) {
            const next = intendedAt(k + 1, c);
            if (next > now || (endNs !== null && next >= endNs)) break;
            rec.recordSkipped(Number(now - intended));
            planned++; skipped++; k++;
            intended = next;
            now = process.hrtime.bigint();
          }
          if (!quotaLeft() || stopped) break;
        }
        let earliest = intended;
        if (o.policy === 'capped' && lastSendNs !== null && lastSendNs + capGapNs > earliest) earliest = lastSendNs + capGapNs;
        const w = waitUntil(earliest);
        if (w) await w;
        allowed = earliest > freeNs ? earliest : freeNs;
      }
      // another connection may have taken the last slot while this one waited
      if (stopped || !quotaLeft()) break;
      planned++;
      const op = o.nextOp(seq++);
      inflight.count++;
      let reply = null;
      let error = null;
      try {
        reply = await client.request(op, o.timeoutMs === undefined ? undefined : { timeoutMs: o.timeoutMs });
      } catch (err) {
        error = err;
      }
      inflight.count--;
      releaseDue();
      const sentNs = reply ? reply.sentNs : (error && error.sentNs);
      const doneNs = (reply && reply.doneNs) || process.hrtime.bigint();
      if (sentNs !== undefined) { sent++; lastSendNs = sentNs; }
      const responseNs = Number(doneNs - (closedLoop ? (sentNs === undefined ? intended : sentNs) : intended));
      const serviceNs = sentNs === undefined ? undefined : Number(doneNs - sentNs);
      const lagNs = sentNs === undefined ? undefined : Math.max(0, Number(sentNs - allowed));
      completed++;
      if (reply) {
        rec.recordOk(responseNs, serviceNs, lagNs);
        if (o.onReply) o.onReply(reply, c);
      } else {
        if (error && error.code === TIMEOUT) rec.recordTimeout(responseNs, serviceNs, lagNs);
        else if (error && error.code === UNIT_DOWN && sentNs === undefined) rec.recordSkipped(responseNs);
        else rec.recordError(responseNs, serviceNs, lagNs);
        if (o.onError) o.onError(error, c);
        // a request that never reached the wire failed at once: in a closed loop, don't spin on a dead device
        if (closedLoop && sentNs === undefined && !stopped) await sleep(Math.min(o.timeoutMs || 100, 100));
      }
      freeNs = process.hrtime.bigint();
      k++;
    }
  }

  const done = Promise.all(o.clients.map((_, c) => loop(c))).then(() => {
    if (o.signal) o.signal.removeEventListener('abort', stop);
    return { planned, sent, skipped, startNs: t0, endNs: process.hrtime.bigint() };
  });
  return {
    done,
    stop,
    get planned () { return planned; },
    get completed () { return completed; }
  };
}

function checkOptions (opts) {
  const fail = (field, value, rule) => {
    throw new NinesError('NINES_ERR_INVALID_ARG', `schedule ${field} ${rule}; got ${describe(value)}`, { field, value: describe(value) });
  };
  if (!opts || typeof opts !== 'object') fail('options', opts, 'must be an object');
  const o = { policy: 'capped', ratePerSec: Infinity, startDelayMs: 0, ...opts };
  if (!Array.isArray(o.clients) || o.clients.length === 0 || o.clients.some((c) => !c || typeof c.request !== 'function')) {
    fail('clients', o.clients, 'must be a non-empty array of driver clients');
  }
  if (typeof o.nextOp !== 'function') fail('nextOp', o.nextOp, 'must be a function (seq) => op');
  if (!(o.ratePerSec === Infinity || (typeof o.ratePerSec === 'number' && o.ratePerSec > 0 && Number.isFinite(o.ratePerSec)))) {
    fail('ratePerSec', o.ratePerSec, 'must be a positive number or Infinity (closed loop)');
  }
  if (!POLICIES.includes(o.policy)) fail('policy', o.policy, `must be one of ${POLICIES.join(', ')}`);
  if (o.count !== undefined && !(Number.isInteger(o.count) && o.count >= 0)) fail('count', o.count, 'must be a whole number ≥ 0');
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

module.exports = { startSchedule, POLICIES };
