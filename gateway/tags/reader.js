'use strict';

/**
 * TagReader: one poll of a tag list is every read of its plan (plan.js), sent at once through the
 * device's connections, so a device that carries several requests (connections, or maxInflight on
 * Modbus TCP) serves them side by side; the device's own queue keeps the order and the fairness.
 *
 * A poll is one sample of the job's latency: response time from the intended time to the last
 * reply, service time from the first write. Its outcome:
 * - every read answered (exceptions included) → the poll resolves; a tag whose read the device
 *   refused carries that error's code as its quality;
 * - a read timed out → the poll rejects with that timeout (it counts as a timeout), and a read that
 *   failed otherwise (connection lost, device down, a bad reply) → with that error; either way the
 *   error carries the poll's result in `err.poll`, so the tags that were read still arrive and the
 *   others say why they did not.
 *
 * Holes: a device answers a merged read that covers an address it does not have with exception 2
 * (illegal data address) or 3 (illegal data value). The reader then splits that read in two and reads
 * both halves in the same poll, down to single tags; the split is kept for later polls, so a hole
 * costs one refused read of its own tag per poll, and the tags around it are read as before.
 * Exceptions that say nothing of the map (busy, device failure) do not split anything.
 */

const { NinesError, toNinesError } = require('../base/errors');
const { decodeBlock, applyScaleFrom, scaleLinks } = require('./decode');
const { splitBlock } = require('./plan');

const TIMEOUT = 'NINES_ERR_REPLY_TIMEOUT';
const EXCEPTION = 'NINES_ERR_MODBUS_EXCEPTION';
/** Exceptions that mean "the read covers something the device does not have": split and retry */
const MAP_EXCEPTIONS = Object.freeze([2, 3]);

/**
 * @typedef {object} PollResult
 * @property {Record<string, unknown>} values by tag name; null where quality is not ok
 * @property {Record<string, string>} quality by tag name: 'ok' or the error code (a read's, or one of
 *   values/quality.js for a register that holds no value)
 * @property {number} ts epoch ms when the last reply of the poll arrived (the values' read time)
 * @property {bigint|undefined} sentNs hrtime of the first write (undefined: nothing was sent)
 * @property {bigint} doneNs hrtime of the last reply
 * @property {number} requests reads sent in this poll
 */

class TagReader {
  /**
   * @param {object} opts
   * @param {import('./spec').Tag[]} opts.tags
   * @param {import('./plan').Block[]} opts.blocks the plan; copied (the reader splits its copy)
   * @param {(op: any, opts?: object) => Promise<object>} opts.request sends one op (a device user's)
   * @param {number} [opts.unitId] Modbus unit of every read (undefined: the target's)
   * @param {(err: NinesError, tags: string[]) => void} [opts.onTagError] a read the device refused,
   *   with the tags it held (called per refused read and poll; the job coalesces reports)
   */
  constructor ({ tags, blocks, request, unitId, onTagError }) {
    this.tags = tags;
    this.names = tags.map((t) => t.name);
    this.request = request;
    this.unitId = unitId;
    this.onTagError = onTagError || null;
    this.blocks = blocks.map((b) => this._prepare(b));
    /** [tag, its scale tag] for tags scaled from another register: applied once a poll is in */
    this.scaled = scaleLinks(tags);
    /** reads split after an exception, over this reader's life */
    this.splits = 0;
  }

  /** @returns {number} reads per poll in the current plan */
  get readsPerPoll () {
    return this.blocks.length;
  }

  /**
   * Runs one poll.
   * @param {{timeoutMs?: number}} [opts] per read
   * @returns {Promise<PollResult>} rejects with a NinesError carrying `poll` (and `sentNs` when a read was sent)
   */
  poll (opts) {
    const n = this.tags.length;
    const state = {
      values: new Array(n).fill(null),
      codes: new Array(n).fill(null),
      pending: 0,
      requests: 0,
      sentNs: undefined,
      doneNs: 0n,
      failure: null,
      opts,
      resolve: null,
      reject: null
    };
    const promise = new Promise((resolve, reject) => { state.resolve = resolve; state.reject = reject; });
    // a copy: a split during this poll changes this.blocks
    for (const b of this.blocks.slice()) this._read(b, state);
    return promise;
  }

  /** Sends one block's read and settles it into the poll's state. */
  _read (block, state) {
    state.pending++;
    state.requests++;
    let p;
    try {
      p = this.request(block.op, state.opts);
    } catch (err) {
      p = Promise.reject(err);
    }
    p.then((reply) => this._onReply(block, state, reply), (err) => this._onError(block, state, err));
  }

  _onReply (block, state, reply) {
    this._sent(state, reply.sentNs, reply.doneNs);
    try {
      decodeBlock(block, this.tags, reply, state.values, state.codes);
    } catch (err) {
      const e = err instanceof NinesError ? err : new NinesError('NINES_ERR_BAD_REPLY', `the reply to ${block.label} does not hold what its tags need: ${err.message}`, { read: block.label });
      this._fail(block, state, e);
    }
    this._settle(state);
  }

  _onError (block, state, err) {
    const e = toNinesError(err);
    this._sent(state, e.sentNs, e.doneNs);
    if (e.code === EXCEPTION) {
      const split = MAP_EXCEPTIONS.includes(e.details && e.details.exceptionCode) ? splitBlock(block, this.tags) : null;
      if (split !== null) {
        this._replace(block, split);
        for (const b of split) this._read(this._find(b), state);
      } else {
        for (const i of block.tags) { state.codes[i] = e.code; state.values[i] = null; }
        if (this.onTagError !== null) this.onTagError(e, block.tags.map((i) => this.names[i]));
      }
    } else {
      this._fail(block, state, e);
    }
    this._settle(state);
  }

  /** A read that failed for the whole poll's reason (timeout, connection, bad reply). */
  _fail (block, state, e) {
    for (const i of block.tags) { state.codes[i] = e.code; state.values[i] = null; }
    // a timeout decides the poll's outcome over other failures: it is what the poll suffered longest
    if (state.failure === null || (e.code === TIMEOUT && state.failure.code !== TIMEOUT)) state.failure = e;
  }

  _sent (state, sentNs, doneNs) {
    if (typeof sentNs === 'bigint' && sentNs !== 0n && (state.sentNs === undefined || sentNs < state.sentNs)) state.sentNs = sentNs;
    const done = typeof doneNs === 'bigint' ? doneNs : process.hrtime.bigint();
    if (done > state.doneNs) state.doneNs = done;
  }

  _settle (state) {
    if (--state.pending !== 0) return;
    if (this.scaled.length !== 0) applyScaleFrom(this.tags, this.scaled, state.values, state.codes);
    const values = {};
    const quality = {};
    for (let i = 0; i < this.names.length; i++) {
      values[this.names[i]] = state.values[i];
      quality[this.names[i]] = state.codes[i] === null ? 'NINES_ERR_BAD_REPLY' : state.codes[i];
    }
    const result = { values, quality, ts: Date.now(), sentNs: state.sentNs, doneNs: state.doneNs, requests: state.requests };
    if (state.failure === null) {
      state.resolve(result);
      return;
    }
    const err = state.failure;
    err.poll = result;
    if (state.sentNs !== undefined) err.sentNs = state.sentNs;
    state.reject(err);
  }

  /** Puts a split's halves in the plan where the refused read was. */
  _replace (block, halves) {
    const at = this.blocks.indexOf(block);
    if (at < 0) return; // another poll split it already
    this.blocks.splice(at, 1, ...halves.map((b) => this._prepare(b)));
    this.splits++;
  }

  /** @returns {object} the prepared block of the plan matching a half (or the half prepared anew) */
  _find (half) {
    return this.blocks.find((b) => b.address === half.address && b.quantity === half.quantity && b.table === half.table) || this._prepare(half);
  }

  /** A block with its op built once (validated and frozen, so the client skips validation). */
  _prepare (b) {
    if (b.op !== undefined) return b;
    const block = { ...b, tags: b.tags.slice() };
    if (b.command !== undefined) {
      block.op = b.command;
      block.label = b.command;
    } else {
      const { validateOp } = require('../drivers/modbus/op');
      block.op = validateOp(this.unitId === undefined ? { fc: b.fc, address: b.address, quantity: b.quantity } : { fc: b.fc, address: b.address, quantity: b.quantity, unitId: this.unitId });
      block.label = `FC${b.fc} ${b.address}+${b.quantity}`;
    }
    return block;
  }
}

module.exports = { TagReader, MAP_EXCEPTIONS };
