'use strict';

/**
 * Which polled values leave the poll loop: never one message per poll at kHz rates.
 * - `off`: none;
 * - `on-change`: when a value differs from the last one emitted (numbers by more than `deadband`);
 * - `every`: every n-th reply.
 * Then a rate cap (`minIntervalMs`): within a window the latest candidate wins and goes out when the
 * window ends, so a change is never lost, only coalesced.
 */

const { exceedsDeadband } = require('./rounding');

/**
 * Extracts the values of a reply: Modbus `data`; ASCII digital `{outputs, inputs}`; otherwise the
 * typed scalar (`value`, `count`, `name`) or the raw text.
 * @param {object} reply
 * @returns {unknown}
 */
function replyValues (reply) {
  if (reply.data !== undefined) return reply.data;
  if (reply.inputs !== undefined || reply.outputs !== undefined) return { outputs: reply.outputs, inputs: reply.inputs };
  if (reply.value !== undefined) return reply.value;
  if (reply.count !== undefined) return reply.count;
  if (reply.name !== undefined) return reply.name;
  if (reply.ack) return true;
  return reply.text !== undefined ? reply.text : reply.raw;
}

/**
 * Deep comparison with a numeric deadband (a step of exactly the deadband is not more than it,
 * whatever float noise its difference carries: rounding.js exceedsDeadband).
 * @param {unknown} a
 * @param {unknown} b
 * @param {number} deadband
 * @returns {boolean} true when b differs from a
 */
function changed (a, b, deadband) {
  if (typeof a === 'number' && typeof b === 'number') return exceedsDeadband(a, b, deadband) || (Number.isNaN(a) !== Number.isNaN(b));
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return true;
    for (let i = 0; i < a.length; i++) if (changed(a[i], b[i], deadband)) return true;
    return false;
  }
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return true;
    for (const k of ka) if (changed(a[k], b[k], deadband)) return true;
    return false;
  }
  return a !== b;
}

class ValueGate {
  /**
   * @param {object} opts
   * @param {'off'|'on-change'|'every'} [opts.mode='off']
   * @param {number} [opts.deadband=0]
   * @param {number} [opts.n=1] for `every`
   * @param {number} [opts.minIntervalMs=0] rate cap between emitted values
   * @param {(values: unknown, info: {ts: number, polls: number}) => void} opts.emit ts: epoch ms the
   *   values were read (offered), not when they leave the gate
   * @param {() => number} [opts.nowMs]
   * @param {(ref: unknown, next: unknown) => boolean} [opts.compare] whether next differs from the
   *   last emitted (or pending) value for `on-change`; default: deep comparison with `deadband`
   *   (tags pass their own, with a deadband per tag: tags/values.js)
   */
  constructor ({ mode = 'off', deadband = 0, n = 1, minIntervalMs = 0, emit, nowMs = Date.now, compare }) {
    this.mode = mode;
    this.deadband = deadband;
    this.compare = compare || ((a, b) => changed(a, b, this.deadband));
    this.n = n;
    this.minIntervalMs = minIntervalMs;
    this.emitFn = emit;
    this.nowMs = nowMs;
    this.last = undefined;
    this.hasLast = false;
    this.pending = undefined;
    this.hasPending = false;
    this.lastEmitMs = -Infinity;
    this.pendingAtMs = 0;
    this.polls = 0;
    this.timer = null;
  }

  /** @param {unknown} values the values of one reply */
  offer (values) {
    if (this.mode === 'off') return;
    this.polls++;
    let candidate;
    if (this.mode === 'every') {
      candidate = this.polls % this.n === 0;
    } else {
      const ref = this.hasPending ? this.pending : this.last;
      candidate = !(this.hasPending || this.hasLast) || this.compare(ref, values);
    }
    if (!candidate) return;
    const now = this.nowMs();
    this.pending = values;
    this.hasPending = true;
    // the time it was read: it may leave the gate later (maxRate), and reach the broker later still
    this.pendingAtMs = now;
    const wait = this.lastEmitMs + this.minIntervalMs - now;
    if (wait <= 0) this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => { this.timer = null; this.flush(); }, wait);
      this.timer.unref?.();
    }
  }

  /** Emits the pending value now, if any. */
  flush () {
    if (!this.hasPending) return;
    const values = this.pending;
    this.pending = undefined;
    this.hasPending = false;
    this.last = values;
    this.hasLast = true;
    this.lastEmitMs = this.nowMs();
    this.emitFn(values, { ts: this.pendingAtMs, polls: this.polls });
  }

  /** Forgets what was emitted, so the next values go out whatever they are (a reset). */
  forget () {
    this.last = undefined;
    this.hasLast = false;
  }

  /** Flushes and stops the timer. */
  close () {
    if (this.timer) { clearTimeout(this.timer); this.timer = null; }
    this.flush();
  }
}

module.exports = { ValueGate, replyValues, changed };
