'use strict';

/**
 * The two per-request objects of the client: Pending (a request between request() and its settlement) and
 * Reply (what a successful request resolves with). Plain classes with a fixed shape: one of each per request.
 */

const { describeOp } = require('./op');
const { encodeRequestPdu } = require('./pdu');

/** A request between request() and its settlement (internal to the client and its transports). */
class Pending {
  /**
   * @param {object} op normalized op
   * @param {number} unitId effective unit id
   * @param {number} timeoutMs
   * @param {(reply: Reply) => void} resolve
   * @param {(err: Error) => void} reject
   */
  constructor (op, unitId, timeoutMs, resolve, reject) {
    this.op = op;
    this.unitId = unitId;
    this.pdu = encodeRequestPdu(op);
    this.timeoutMs = timeoutMs;
    this.resolve = resolve;
    this.reject = reject;
    /** @type {bigint} when the request times out (hrtime ns) */
    this.deadline = 0n;
    /** @type {bigint} hrtime ns just before the write; 0n until written */
    this.sentNs = 0n;
    this.tid = 0;
    /** Pipelining evidence (pipeline-guard.js): replies taken before this one was written, -1 if none was in flight */
    this.overlap = -1;
  }

  /** @returns {string} "unit 1 FC3 address 0 quantity 10" */
  describe () {
    return describeOp(this.op, this.unitId);
  }
}

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
