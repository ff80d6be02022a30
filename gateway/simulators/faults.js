'use strict';

/**
 * The fault engine shared by the simulators (ASCII and Modbus): what to do with each request,
 * how long to wait before answering, and when the whole device freezes.
 *
 * Spec text: comma-separated items (whitespace around items is ignored):
 *   latency=2ms          fixed added delay per reply
 *   latency=1ms-5ms      uniform added delay in [1 ms, 5 ms]
 *   spike=1/10000:35ms   with probability 1/10000 add 35 ms (repeatable: several spike= items
 *                        mimic the long tails of the Brainboxes tables)
 *   drop=0.001           probability of no reply (the connection stays usable)
 *   garbage=0.001        probability of a junk line instead of the reply
 *   close=0.0001         probability of closing the connection instead of answering
 *   refuse | refuse=on   refuse new connections (accept, then destroy at once)
 *   stall=2s@5s          freeze the device for 2 s, 5 s after start(); replies due meanwhile are
 *   stall=2s@5s/20s      held and go out when it ends; /20s repeats it every 20 s (repeatable)
 *   seed=42              draw from mulberry32(42) instead of Math.random: reproducible runs
 * Probabilities: decimals (0.001, 1e-4) or fractions (1/10000); drop+garbage+close ≤ 1.
 * Durations: quantities.parseDuration ("10us", "2ms", "1.5s"; bare numbers are ms).
 *
 * Object form: { latency: '2ms' | 2 | {min, max}, spikes: [{p, ms}], drop, garbage, close,
 *   refuse, stalls: [{ms, atMs, everyMs}], seed }. Unknown keys are errors.
 *
 * Scheduled stalls are computed from the clock since start() (no timers): holdMs() tells a
 * simulator how long to hold a reply, and a simulator re-checks it when a held reply falls due,
 * so a stall that starts while a reply is waiting holds that reply too.
 */

const { NinesError } = require('../base/errors');
const { parseDuration } = require('../base/quantities');
const { ASCII_MAX_LINE_BYTES } = require('../base/constants');
const { mulberry32 } = require('./prng');
const { parseFaultSpec, formatFaultSpec, faultSpecToObject, emptyConfig } = require('./fault-spec');

/** The decision when nothing is configured: one shared frozen object, so the fast path allocates nothing. */
const NO_FAULT = Object.freeze({ action: 'reply', delayMs: 0 });

/** Default junk length range of garbage() (bytes), short enough to look like a reply. */
const GARBAGE_MIN_BYTES = 4;
const GARBAGE_MAX_BYTES = 16;
/** Printable ASCII range of junk bytes (space to tilde): never CR or LF. */
const PRINTABLE_FIRST = 0x20;
const PRINTABLE_LAST = 0x7E;
/** Reply lead characters that junk never starts with, so a client cannot take it for a reply. */
const LEADS = new Set([0x3E, 0x21, 0x3F]); // > ! ?

const FAULTS_HELP = `Faults (--faults "item,item,..."):
  latency=2ms           add a fixed delay to every reply
  latency=1ms-5ms       add a uniform random delay
  spike=1/10000:35ms    rarely add a spike (repeat the item for several tails)
  drop=0.001            probability of no reply (connection stays usable)
  garbage=0.001         probability of a junk line instead of the reply
  close=0.0001          probability of closing the connection instead of answering
  refuse                refuse new connections (accept, then close at once)
  stall=2s@5s           freeze the device 2 s, 5 s after start; replies are held, not lost
  stall=2s@5s/20s       ... and again every 20 s
  seed=42               reproducible random draws
Probabilities: 0.001, 1e-4 or 1/10000 (drop+garbage+close <= 1). Durations: 10us, 2ms, 1.5s.
Example: --faults "latency=1ms-3ms,spike=1/1000:20ms,drop=0.0001,seed=7"`;

/** Per-request fault decisions and device stalls for one simulator. */
class FaultPlan {
  /**
   * Use FaultPlan.parse(); the constructor takes a normalised config.
   * @param {object} cfg normalised config from fault-spec.js
   * @param {{random?: () => number, now?: () => number}} [opts] random in [0,1) (wins over seed=);
   *   now() in ms (default performance.now)
   */
  constructor (cfg, opts = {}) {
    if (opts === null || typeof opts !== 'object') {
      throw new NinesError('NINES_ERR_INVALID_ARG', `FaultPlan options must be an object; got ${JSON.stringify(opts)}`, { field: 'opts', value: opts });
    }
    for (const k of ['random', 'now']) {
      if (opts[k] !== undefined && typeof opts[k] !== 'function') {
        throw new NinesError('NINES_ERR_INVALID_ARG', `FaultPlan option ${k} must be a function; got ${typeof opts[k]}`, { field: k, value: String(opts[k]) });
      }
    }
    this._injectedRandom = opts.random;
    this._now = opts.now || (() => performance.now());
    this._stallUntil = 0;
    this._armed = false;
    this._t0 = 0;
    this._apply(cfg);
  }

  /**
   * Builds a plan from a spec.
   * @param {string|object|undefined|null|FaultPlan} spec text, object form, nothing, or a plan (returned as is)
   * @param {{random?: () => number, now?: () => number}} [opts]
   * @returns {FaultPlan}
   * @throws {NinesError} NINES_ERR_INVALID_ARG naming the bad item
   */
  static parse (spec, opts) {
    if (spec instanceof FaultPlan) return spec;
    return new FaultPlan(parseFaultSpec(spec), opts);
  }

  /** Installs a normalised config (and a fresh random source when seeded). */
  _apply (cfg) {
    this._cfg = cfg;
    this._random = this._injectedRandom || (cfg.seed !== null ? mulberry32(cfg.seed) : Math.random);
    this._pClose = cfg.close;
    this._pCloseDrop = cfg.close + cfg.drop;
    this._pAny = cfg.close + cfg.drop + cfg.garbage;
    this._spikes = cfg.spikes;
    this._perRequest = cfg.latencyMaxMs > 0 || cfg.spikes.length > 0 || this._pAny > 0;
    /** @type {boolean} refuse new connections */
    this.refuse = cfg.refuse;
  }

  /** @returns {boolean} true when any fault is configured (a simulator may keep its zero-cost path otherwise) */
  get active () {
    return this._perRequest || this.refuse || this._cfg.stalls.length > 0;
  }

  /**
   * Decides the fate of one request. Draw order is fixed (action, latency, spikes in order) so a
   * seeded plan gives the same decisions for the same request sequence.
   * @returns {{action: 'reply'|'drop'|'garbage'|'close', delayMs: number}} NO_FAULT (shared, frozen)
   *   when no per-request fault is configured
   */
  decide () {
    if (!this._perRequest) return NO_FAULT;
    const random = this._random;
    const cfg = this._cfg;
    let action = 'reply';
    if (this._pAny > 0) {
      const x = random();
      if (x < this._pClose) action = 'close';
      else if (x < this._pCloseDrop) action = 'drop';
      else if (x < this._pAny) action = 'garbage';
    }
    let delayMs = 0;
    if (cfg.latencyMaxMs > 0) {
      delayMs = cfg.latencyMinMs === cfg.latencyMaxMs ? cfg.latencyMinMs : cfg.latencyMinMs + random() * (cfg.latencyMaxMs - cfg.latencyMinMs);
    }
    const spikes = this._spikes;
    for (let i = 0; i < spikes.length; i++) if (random() < spikes[i].p) delayMs += spikes[i].ms;
    return { action, delayMs };
  }

  /**
   * Freezes the device for ms from now (a ^Z pause). Overlapping stalls extend, never shorten.
   * @param {number|string} ms duration (number = ms, or "2s")
   */
  stall (ms) {
    const d = parseDuration(ms, 'stall');
    if (d > 0) this._stallUntil = Math.max(this._stallUntil, this._now() + d);
  }

  /**
   * @returns {number} ms remaining of the current stall (manual or scheduled), 0 when not stalled;
   *   a simulator adds it to a reply's delay and re-checks when the reply falls due
   */
  holdMs () {
    const stalls = this._cfg.stalls;
    if (this._stallUntil === 0 && !(this._armed && stalls.length > 0)) return 0;
    const t = this._now();
    let hold = 0;
    if (this._stallUntil !== 0) {
      hold = this._stallUntil - t;
      if (hold <= 0) { this._stallUntil = 0; hold = 0; }
    }
    if (this._armed) {
      const elapsed = t - this._t0;
      for (let i = 0; i < stalls.length; i++) {
        const s = stalls[i];
        if (elapsed < s.atMs) continue;
        const start = s.everyMs > 0 ? s.atMs + Math.floor((elapsed - s.atMs) / s.everyMs) * s.everyMs : s.atMs;
        const left = start + s.ms - elapsed;
        if (left > hold) hold = left;
      }
    }
    return hold;
  }

  /** Arms the scheduled stalls; their start offsets count from now. */
  start () {
    this._t0 = this._now();
    this._armed = true;
  }

  /** Disarms scheduled stalls and ends a manual stall: nothing is held after a simulator closes. */
  stop () {
    this._armed = false;
    this._stallUntil = 0;
  }

  /**
   * Replaces the configuration (a running plan re-arms its stalls from now).
   * @param {string|object|undefined|null} spec
   * @throws {NinesError} NINES_ERR_INVALID_ARG; the plan is unchanged then
   */
  set (spec) {
    const cfg = spec instanceof FaultPlan ? spec._cfg : parseFaultSpec(spec);
    this._apply(cfg);
    if (this._armed) this._t0 = this._now();
  }

  /** Removes every fault, including a manual stall. */
  clear () {
    this._apply(emptyConfig());
    this._stallUntil = 0;
  }

  /** @returns {string} canonical spec text ('' when nothing is configured) */
  toString () {
    return formatFaultSpec(this._cfg);
  }

  /** @returns {object} object form of the spec, accepted by FaultPlan.parse */
  toJSON () {
    return faultSpecToObject(this._cfg);
  }

  /**
   * Random junk a simulator sends instead of a reply: printable ASCII, never CR or LF, never
   * starting with a reply lead (> ! ?). The simulator appends the CR.
   * @param {number} [len] bytes, 1…ASCII_MAX_LINE_BYTES (default: random 4…16)
   * @returns {Buffer}
   */
  garbage (len) {
    const random = this._random;
    if (len === undefined) len = GARBAGE_MIN_BYTES + Math.floor(random() * (GARBAGE_MAX_BYTES - GARBAGE_MIN_BYTES + 1));
    if (!Number.isInteger(len) || len < 1 || len > ASCII_MAX_LINE_BYTES) {
      throw new NinesError('NINES_ERR_INVALID_ARG', `garbage length must be an integer from 1 to ${ASCII_MAX_LINE_BYTES}; got ${JSON.stringify(len)}`, { field: 'len', value: len });
    }
    const span = PRINTABLE_LAST - PRINTABLE_FIRST + 1;
    const buf = Buffer.allocUnsafe(len);
    for (let i = 0; i < len; i++) {
      let c;
      do c = PRINTABLE_FIRST + Math.floor(random() * span); while (i === 0 && LEADS.has(c));
      buf[i] = c;
    }
    return buf;
  }
}

module.exports = { FaultPlan, NO_FAULT, FAULTS_HELP };
