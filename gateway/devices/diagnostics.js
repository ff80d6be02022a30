'use strict';

/**
 * FC8 diagnostics counters in a device's health (spec.diagnosticsMs, opt-in): every period, each
 * unit of the device (its one unit, or each unit of a line) is asked its counters, one FC8 request
 * per counter, through the device's own queue as the user DIAGNOSTICS_USER. They go at low priority:
 * a counter request waits while any other request of the device is queued, and a round that cannot
 * finish within its period is left for the next (counted in `deferred`), so diagnostics never delay
 * a poll by more than the one request on the wire.
 *
 * The health shows per unit the counters as last read, when, and how much each grew since the read
 * before (null when it went back: a 16-bit counter wrapped at 65535, or the device restarted and
 * cleared it; which one cannot be told apart, and a guess could be false). A unit that lacks FC8
 * (NINES_ERR_FC_UNSUPPORTED: exception 1) shows that once and is not asked again until the device
 * is built again.
 */

const { validateOp } = require('../drivers/modbus/op');

/** The counters read (FC8 sub-function → name in the health); Modbus over Serial Line §6.1 */
const COUNTERS = Object.freeze({
  11: 'busMessages',
  12: 'busCommunicationErrors',
  13: 'busExceptions',
  14: 'serverMessages',
  15: 'serverNoResponses',
  16: 'serverNaks',
  17: 'serverBusy',
  18: 'characterOverruns'
});
const SUB_FUNCTIONS = Object.freeze(Object.keys(COUNTERS).map(Number));
/** The device user the counter requests go as (its stats show what diagnostics cost) */
const DIAGNOSTICS_USER = 'nines:diagnostics';
/** How long a counter request waits for the device's queue to empty before it looks again (ms) */
const YIELD_MS = 20;

/** Per-unit state: the last read, the code that ended a round, whether the unit lacks FC8 */
class UnitDiagnostics {
  constructor (name, unitId) {
    this.name = name;
    this.unitId = unitId;
    /** @type {Record<string, number>|null} */
    this.counters = null;
    /** @type {Record<string, number|null>|null} */
    this.deltas = null;
    this.at = null;
    this.lastError = null;
    this.unsupported = false;
    this.rounds = 0;
    this.deferred = 0;
  }

  /** @returns {object} the unit's part of the health (plain JSON) */
  health () {
    const out = { ...(this.name === null ? {} : { unit: this.name }), unitId: this.unitId, at: this.at, counters: this.counters, deltas: this.deltas, rounds: this.rounds, deferred: this.deferred, lastError: this.lastError };
    if (this.unsupported) out.unsupported = true;
    return out;
  }
}

class Diagnostics {
  /**
   * @param {object} device devices/device.js Device (its spec, user(), stats and _emitHealth)
   * @param {{now?: () => number}} [deps] now: the wall clock (epoch ms) of `at`
   */
  constructor (device, { now = Date.now } = {}) {
    this._device = device;
    this._now = now;
    this.periodMs = device.spec.diagnosticsMs;
    const units = device.spec.units === null ? [{ name: null, unitId: device.spec.target.unitId }] : device.spec.units;
    this._units = units.map((u) => new UnitDiagnostics(u.name, u.unitId));
    this._timer = null;
    this._stopped = false;
    this._running = false;
  }

  /** Starts the rounds: the first one period after open, as the connections come up meanwhile */
  start () {
    if (this._stopped || this._timer !== null) return;
    this._timer = setTimeout(() => this._round(), this.periodMs);
    this._timer.unref();
  }

  /** Stops asking; a round under way ends at its next request */
  stop () {
    this._stopped = true;
    if (this._timer !== null) clearTimeout(this._timer);
    this._timer = null;
  }

  /** @returns {{periodMs: number, units: object[]}} the health's `diagnostics` */
  health () {
    return { periodMs: this.periodMs, units: this._units.map((u) => u.health()) };
  }

  async _round () {
    this._timer = null;
    if (this._stopped) return;
    const endBy = performance.now() + this.periodMs;
    for (const u of this._units) {
      if (this._stopped) return;
      if (!u.unsupported) await this._readUnit(u, endBy);
    }
    this._device._emitHealth();
    // every unit lacks FC8: nothing left to ask
    if (this._units.every((u) => u.unsupported)) return;
    if (!this._stopped) {
      this._timer = setTimeout(() => this._round(), Math.max(0, endBy - performance.now()));
      this._timer.unref();
    }
  }

  /** Reads one unit's counters, yielding to every other request of the device */
  async _readUnit (u, endBy) {
    const user = this._device.user(DIAGNOSTICS_USER, { queueMax: 1 });
    const read = {};
    for (const sub of SUB_FUNCTIONS) {
      while (this._device.stats.queued > 0) {
        if (this._stopped) return;
        if (performance.now() + YIELD_MS > endBy) { u.deferred++; return; }
        await new Promise((resolve) => setTimeout(resolve, YIELD_MS));
      }
      if (this._stopped) return;
      try {
        const reply = await user.request(validateOp({ fc: 8, subFunction: sub, unitId: u.unitId }));
        read[COUNTERS[sub]] = reply.data;
      } catch (err) {
        u.lastError = { code: err.code, message: err.message };
        if (err.code === 'NINES_ERR_FC_UNSUPPORTED') u.unsupported = true;
        return;
      }
    }
    const before = u.counters;
    u.deltas = before === null ? null : Object.fromEntries(Object.entries(read).map(([k, v]) => [k, v >= before[k] ? v - before[k] : null]));
    u.counters = read;
    u.at = this._now();
    u.rounds++;
    u.lastError = null;
  }
}

module.exports = { Diagnostics };
