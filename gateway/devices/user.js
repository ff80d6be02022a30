'use strict';

const { Fifo } = require('../base/fifo');

/**
 * One user of a device: a job, a Node-RED node. It has its own bounded FIFO on the device, so a
 * user that floods the device fills its own queue and nobody else's; the device serves users
 * round-robin. Create with Device#user(name).
 */
class DeviceUser {
  /**
   * @param {import('./device').Device} device
   * @param {string} name
   * @param {number} queueMax requests that may wait in this user's FIFO
   */
  constructor (device, name, queueMax) {
    /** @type {string} */
    this.name = name;
    /** @type {number} */
    this.queueMax = queueMax;
    this._device = device;
    this._q = new Fifo();
    /** Place in the device's round-robin: 0 out, 1 in the ring, 2 served last (re-enters at the next turn) */
    this._ring = 0;
    /** While deadlines in _q only grow (one timeout per user, the usual case) the expired ones are a prefix */
    this._sorted = true;
    this._lastDeadline = 0;
    this._closed = false;
    this._inFlight = 0;
    this._stats = { requests: 0, ok: 0, errors: 0, timeouts: 0, dropped: 0, skipped: 0 };
  }

  /**
   * Sends one operation through the device's connections, when this user's turn comes.
   * @param {any} op an ASCII command or a Modbus op, as the device's driver takes it
   * @param {{timeoutMs?: number|string, notAfter?: number}} [opts] timeoutMs overrides the device's (ms, or a
   *   duration such as "500ms", as the device's own is read); counts from this call. notAfter: the latest time it may be handed to a connection (epoch ms as
   *   performance.timeOrigin + performance.now() count); past it, it fails unsent (NINES_ERR_WRITE_EXPIRED)
   * @returns {Promise<object>} the driver's reply (sentNs, doneNs), or its error unchanged; the device's
   *   own rejections: NINES_ERR_QUEUE_FULL, NINES_ERR_REPLY_TIMEOUT (details.queued), NINES_ERR_NOT_CONNECTED
   *   (the device is down), NINES_ERR_CLOSED, NINES_ERR_INVALID_ARG, NINES_ERR_WRITE_EXPIRED (details.queued)
   */
  request (op, opts) {
    return this._device._request(this, op, opts);
  }

  /**
   * request() without a promise, for loops that send one request after another (the scheduler,
   * issue 11): the outcome goes to handler.onReply(reply) or handler.onError(err), later, never
   * from within this call. The reply may be the client's own, valid only until onReply returns
   * (drivers/modbus/client.js submit()); `data` is the handler's to keep, and not decoded at all
   * when handler.wantsData is false.
   * @param {any} op as request()
   * @param {number|string|undefined} timeoutMs as request()'s opts.timeoutMs
   * @param {{onReply: (reply: object) => void, onError: (err: Error) => void, wantsData?: boolean}} handler
   */
  submit (op, timeoutMs, handler) {
    this._device._submit(this, op, timeoutMs, handler);
  }

  /**
   * Leaves the device: the requests this user has waiting reject with NINES_ERR_CLOSED (those in
   * flight complete), and the device forgets the user. Idempotent.
   */
  close () {
    if (this._closed) return;
    this._closed = true;
    this._device._forget(this);
  }

  /** @returns {boolean} */
  get closed () {
    return this._closed;
  }

  /**
   * Counters (a copy): requests = ok + errors + timeouts + dropped + skipped + queued + inFlight;
   * dropped counts NINES_ERR_QUEUE_FULL, skipped NINES_ERR_UNIT_DOWN (not sent: its unit is down),
   * errors every other rejection but timeouts.
   * @returns {{requests: number, ok: number, errors: number, timeouts: number, dropped: number, skipped: number, queued: number, inFlight: number}}
   */
  get stats () {
    const s = this._stats;
    return { requests: s.requests, ok: s.ok, errors: s.errors, timeouts: s.timeouts, dropped: s.dropped, skipped: s.skipped, queued: this._q.length, inFlight: this._inFlight };
  }
}

module.exports = { DeviceUser };
