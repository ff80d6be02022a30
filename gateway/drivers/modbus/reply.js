'use strict';

/**
 * The two per-request objects of the client: Pending (a request between request() and its settlement) and
 * Reply (what a successful request resolves with). Plain classes with a fixed shape: one of each per request.
 */

const { describeOp } = require('./op');
const { encodeRequestPdu } = require('./pdu');

/**
 * A request between request() (or submit()) and its settlement (internal to the client and its
 * transports). It settles one of two ways: a promise's functions (request()), or a handler's
 * methods (submit(), issue 11), the handler then never called back from within submit().
 */
class Pending {
  /**
   * @param {object} op normalized op
   * @param {number} unitId effective unit id
   * @param {number} timeoutMs
   * @param {((reply: Reply) => void)|null} resolve the promise's, or null with a handler
   * @param {((err: Error) => void)|null} reject
   * @param {Handler|null} [handler] submit()'s
   */
  constructor (op, unitId, timeoutMs, resolve, reject, handler = null) {
    this._resolve = resolve;
    this._reject = reject;
    /** true while submit() runs: a failure found then reaches the handler on a microtask, not within submit() */
    this.admitting = false;
    this.reuse(op, unitId, timeoutMs, handler);
  }

  /**
   * Makes this Pending a request: a new one (the constructor), or a settled one again, for a handler
   * (the client keeps one spare, issue 11). Every instance gets its fields in the same order.
   * @param {object} op @param {number} unitId @param {number} timeoutMs @param {Handler|null} handler
   */
  reuse (op, unitId, timeoutMs, handler) {
    this.op = op;
    this.unitId = unitId;
    this.pdu = encodeRequestPdu(op);
    this.timeoutMs = timeoutMs;
    /** @type {Handler|null} */
    this.handler = handler;
    /** @type {bigint} when the request times out (hrtime ns) */
    this.deadline = 0n;
    /** @type {bigint} hrtime ns just before the write; 0n until written */
    this.sentNs = 0n;
    this.tid = 0;
    /** Pipelining evidence (pipeline-guard.js): replies taken before this one was written, -1 if none was in flight */
    this.overlap = -1;
  }

  /** @param {Reply} reply a fresh reply (request()) */
  resolve (reply) {
    if (this.handler !== null) this.handler.onReply(reply);
    else this._resolve(reply);
  }

  /** @param {Error} err */
  reject (err) {
    const h = this.handler;
    if (h === null) this._reject(err);
    else if (this.admitting) queueMicrotask(() => h.onError(err));
    else h.onError(err);
  }

  /** @returns {string} "unit 1 FC3 address 0 quantity 10" */
  describe () {
    return describeOp(this.op, this.unitId);
  }
}

/**
 * What submit() calls back, once per request: onReply with the client's reply (see ModbusClient#submit
 * for how long it stays valid), or onError with the failure.
 * @typedef {object} Handler
 * @property {(reply: Reply) => void} onReply
 * @property {(err: Error) => void} onError
 * @property {boolean} [wantsData] false: the reply's values are not decoded into `data` (the check is made all the same)
 */

/**
 * A successful reply.
 * @property {true} ok
 * @property {object} op the normalized op
 * @property {number} fc
 * @property {number} unitId
 * @property {number} address
 * @property {boolean[]|number[]|boolean|number|undefined} data reads: values; FC5/6: echoed value; FC15/16: echoed quantity; RTU broadcast: undefined
 * @property {Buffer|undefined} buffer reads: the raw data bytes (registers big-endian, or packed bits)
 * @property {Buffer} raw the whole response ADU (MBAP + PDU, or address + PDU + CRC); empty for an RTU broadcast
 * @property {bigint} sentNs hrtime ns just before the write
 * @property {bigint} doneNs hrtime ns when the reply frame was complete
 */
class Reply {
  /**
   * @param {Pending} p the request answered
   * @param {Buffer} raw the response ADU
   * @param {bigint} doneNs hrtime ns at frame completion
   */
  constructor (p, raw, doneNs) {
    this.ok = true;
    this.op = p.op;
    this.fc = p.op.fc;
    this.unitId = p.unitId;
    this.address = p.op.address;
    this.data = undefined;
    this.buffer = undefined;
    this.raw = raw;
    this.sentNs = p.sentNs;
    this.doneNs = doneNs;
  }
}

module.exports = { Pending, Reply };
