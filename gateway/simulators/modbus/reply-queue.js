'use strict';

/**
 * Delayed replies of one connection (TCP) or one serial line (RTU), sent in request order.
 *
 * The simulated device works like a real one: it serves one request at a time, so a reply is due at
 * max(arrival + stall remaining, previous reply's due time) + its own delay. A reply that falls due while the
 * fault plan says the device is stalled (^Z) is held until the stall ends; `plan.holdMs()` is checked again when
 * each reply falls due, so a stall that starts after a reply was queued holds it too.
 *
 * One timer per queue, for the head only. The queue is bounded: `push` refuses past `maxPending` and the caller
 * counts the drop. Only the slow path (faults, or replies waiting ahead) goes through here; a simulator answers
 * synchronously when the queue is empty and nothing delays the reply.
 */

/**
 * @typedef {object} QueuedReply
 * @property {number} dueAt performance.now() ms at which the reply may go out
 * @property {any} item what the owner queued; handed back to `onDue`
 */

class ReplyQueue {
  /**
   * @param {object} o
   * @param {{holdMs: () => number}} o.plan the fault plan (only holdMs is used here)
   * @param {number} o.maxPending replies that may wait; push() refuses more
   * @param {(item: any) => void} o.onDue called once per item, in push order, when its reply is due
   * @param {() => number} [o.now] clock in ms (default performance.now)
   */
  constructor ({ plan, maxPending, onDue, now }) {
    this._plan = plan;
    this._max = maxPending;
    this._onDue = onDue;
    this._now = now || (() => performance.now());
    /** @type {QueuedReply[]} */
    this._items = [];
    this._head = 0;
    this._lastDue = 0;
    this._timer = null;
    this._fire = () => this._run();
  }

  /** @returns {number} replies waiting */
  get length () {
    return this._items.length - this._head;
  }

  /**
   * Queues a reply behind the ones already waiting.
   * @param {any} item handed to onDue when due
   * @param {number} delayMs the request's own processing delay (fault latency and spikes), ms
   * @param {number} [holdMs=0] stall time remaining when the request arrived, ms
   * @returns {boolean} false when the queue is full (the reply is not queued)
   */
  push (item, delayMs, holdMs = 0) {
    if (this.length >= this._max) return false;
    const now = this._now();
    const start = Math.max(now + holdMs, this.length > 0 ? this._lastDue : 0);
    const dueAt = start + delayMs;
    this._lastDue = dueAt;
    this._items.push({ dueAt, item });
    if (this.length === 1) this._schedule(dueAt - now);
    return true;
  }

  /** Drops every waiting reply and stops the timer (connection closed, device reset, simulator closed). */
  clear () {
    if (this._timer) clearTimeout(this._timer);
    this._timer = null;
    this._items = [];
    this._head = 0;
  }

  _schedule (ms) {
    if (this._timer) clearTimeout(this._timer);
    // libuv timers have 1 ms resolution and may fire early by a fraction of it: round up, re-check in _run.
    this._timer = setTimeout(this._fire, Math.max(0, Math.ceil(ms)));
  }

  _run () {
    this._timer = null;
    while (this.length > 0) {
      const head = this._items[this._head];
      const now = this._now();
      if (head.dueAt > now) {
        this._schedule(head.dueAt - now);
        return;
      }
      const hold = this._plan.holdMs();
      if (hold > 0) {
        // The device froze while this reply was waiting: it (and everything behind it) goes out after the stall.
        const shift = now + hold - head.dueAt;
        for (let i = this._head; i < this._items.length; i++) this._items[i].dueAt += shift;
        this._lastDue += shift;
        this._schedule(hold);
        return;
      }
      this._items[this._head++] = undefined;
      if (this._head > 64 && this._head * 2 > this._items.length) {
        this._items = this._items.slice(this._head);
        this._head = 0;
      }
      this._onDue(head.item);
      if (this._items.length === 0) return; // onDue cleared the queue (e.g. a 'close' fault)
    }
    this._items = [];
    this._head = 0;
  }
}

module.exports = { ReplyQueue };
