'use strict';

/**
 * The health of the units of a line (devices/line.js): many unit ids behind one serial port, one
 * RTU-over-TCP socket or one Modbus TCP gateway, all sharing the line. A unit that stops answering
 * must not take its neighbours down with it: on a shared line every request to a silent unit holds
 * the line for a whole timeout, so at its rate it alone could use up the line.
 *
 * So each unit has its own health:
 * - a request to it that times out on the wire puts it `down` at once (it is reported within one
 *   timeout), and the requests it has waiting are failed, not sent;
 * - while down, its requests fail at once with NINES_ERR_UNIT_DOWN (a job counts them as skipped,
 *   with that reason): they never reach the line;
 * - once its backoff has passed (the unit's own, growing with jitter up to its maximum), the next
 *   request to it goes through as a probe, one at a time; an answer (an exception included: the
 *   unit is there) puts it `up` again, another timeout keeps it down for a longer backoff. So it
 *   comes back by itself within its backoff maximum plus one poll period.
 * - A probe waits less than a whole timeout: twice the slowest of the unit's last answers, at least
 *   PROBE_FLOOR_MS, at most the timeout. A silent unit's probe holds the line its neighbours share,
 *   and every millisecond of it is taken from their polls; a unit that is back answers as fast as it
 *   did before it fell silent. A unit that never answered is probed with the whole timeout.
 * Failures of the line itself (no connection, a reply that does not parse) are the device's, not
 * the unit's: they change nothing here.
 *
 * A device without units has none of this: its unit is its health.
 */

const { NinesError } = require('../base/errors');
const { Backoff } = require('../base/backoff');

const TIMEOUT = 'NINES_ERR_REPLY_TIMEOUT';
/** The shortest wait of a probe (ms), whatever the unit's answers took */
const PROBE_FLOOR_MS = 50;
/** Answers remembered per unit for its probe's wait */
const ANSWERS_KEPT = 32;
const EXCEPTION = 'NINES_ERR_MODBUS_EXCEPTION';
const now = () => performance.now();

class UnitState {
  /** @param {import('./spec').UnitSpec} spec @param {() => number} wallClock */
  constructor (spec, wallClock) {
    this.spec = spec;
    /** @type {'unknown'|'up'|'down'} unknown until it first answers or fails */
    this.state = 'unknown';
    this.since = wallClock();
    /** @type {{code: string, message: string}|null} */
    this.lastError = null;
    this.backoff = new Backoff({ initialMs: spec.backoff.initialMs, maxMs: spec.backoff.maxMs });
    /** performance.now() ms from which a probe may go */
    this.retryAt = 0;
    this.probing = false;
    /** the service times (ms) of its last answers, a ring */
    this.answers = new Float64Array(ANSWERS_KEPT);
    this.answered = 0;
  }

  /** @param {number} ms how long an answer took on the wire */
  noteAnswer (ms) {
    this.answers[this.answered % ANSWERS_KEPT] = ms;
    this.answered++;
  }

  /**
   * How long its probe waits: twice the slowest recent answer, within [PROBE_FLOOR_MS, timeoutMs].
   * @param {number} timeoutMs the request's own timeout
   * @returns {number} ms
   */
  probeTimeout (timeoutMs) {
    if (this.answered === 0) return timeoutMs;
    let slowest = 0;
    for (let i = 0; i < Math.min(this.answered, ANSWERS_KEPT); i++) if (this.answers[i] > slowest) slowest = this.answers[i];
    return Math.min(timeoutMs, Math.max(PROBE_FLOOR_MS, Math.ceil(2 * slowest)));
  }
}

/**
 * Per-unit health of one device.
 */
class Units {
  /**
   * @param {import('./spec').UnitSpec[]} specs
   * @param {{name: string, label: string, unitId: number|undefined, now: () => number, onChange: () => void}} device the
   *   device's name and what messages call it, its target's unit id (ops that name none), its wall clock, and what to call when a
   *   unit's health changes
   */
  constructor (specs, device) {
    this.device = device;
    /** @type {Map<number, UnitState>} */
    this.byId = new Map(specs.map((s) => [s.unitId, new UnitState(s, device.now)]));
  }

  /**
   * The unit an op goes to (ops of units that are not on the line pass ungated).
   * @param {any} op
   * @returns {UnitState|undefined}
   */
  of (op) {
    const id = op !== null && typeof op === 'object' && op.unitId !== undefined ? op.unitId : this.device.unitId;
    return this.byId.get(id);
  }

  /**
   * Whether a request to the unit may go now. A down unit's request goes only as its probe, once its
   * backoff has passed and no other probe is on its way.
   * @param {UnitState} u
   * @returns {NinesError|null} NINES_ERR_UNIT_DOWN when it may not
   */
  refuse (u) {
    if (u.state !== 'down') return null;
    const t = now();
    if (!u.probing && t >= u.retryAt) {
      u.probing = true;
      return null;
    }
    return this.downError(u, Math.max(0, Math.round(u.retryAt - t)));
  }

  /**
   * A request to the unit settled.
   * @param {UnitState} u
   * @param {Error|null} err null: answered
   * @param {object} [reply] the answer (sentNs, doneNs), to learn how long the unit takes
   * @returns {boolean} the unit went down now (its waiting requests should be failed)
   */
  settled (u, err, reply) {
    const wasProbe = u.probing;
    u.probing = false;
    const code = err === null ? null : err.code;
    const timed = err === null ? reply : err;
    if (timed && typeof timed.sentNs === 'bigint' && typeof timed.doneNs === 'bigint' && timed.sentNs !== 0n && (code === null || code === EXCEPTION)) {
      u.noteAnswer(Number(timed.doneNs - timed.sentNs) / 1e6);
    }
    if (code === null || code === EXCEPTION) {
      // it answered: it is there
      u.backoff.reset();
      if (u.state !== 'up') this.set(u, 'up', null);
      return false;
    }
    // a timeout on the wire is the unit's silence; one that never left the queue says nothing of it
    if (code !== TIMEOUT || (err.details && err.details.queued)) return false;
    u.lastError = { code, message: err.message };
    u.retryAt = now() + u.backoff.next();
    if (u.state !== 'down') {
      this.set(u, 'down', u.lastError);
      return true;
    }
    if (wasProbe) this.device.onChange();
    return false;
  }

  /** @param {UnitState} u */
  set (u, state, lastError) {
    u.state = state;
    u.since = this.device.now();
    if (lastError !== null) u.lastError = lastError;
    this.device.onChange();
  }

  /** @returns {NinesError} */
  downError (u, retryInMs) {
    const why = u.lastError === null ? 'no answer' : u.lastError.message;
    return new NinesError('NINES_ERR_UNIT_DOWN',
      `request not sent: unit "${u.spec.name}" (unit id ${u.spec.unitId}) of device "${this.device.label}" is down since ${new Date(u.since).toISOString()}; next probe in ${retryInMs} ms (${why})`,
      { device: this.device.name, unit: u.spec.name, unitId: u.spec.unitId, since: u.since, retryInMs, cause: u.lastError ? u.lastError.code : undefined });
  }

  /**
   * @returns {Record<string, {unitId: number, state: string, since: number, lastError: object|null, retryInMs?: number}>}
   *   by unit name, for the device's health
   */
  health () {
    const out = {};
    const t = now();
    for (const u of this.byId.values()) {
      const h = { unitId: u.spec.unitId, state: u.state, since: u.since, lastError: u.lastError };
      if (u.state === 'down') h.retryInMs = Math.max(0, Math.round(u.retryAt - t));
      out[u.spec.name] = h;
    }
    return out;
  }
}

module.exports = { Units };
