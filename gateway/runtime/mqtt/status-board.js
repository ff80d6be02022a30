'use strict';

const { statusPayload } = require('./payloads');

/**
 * What the retained status `<prefix>/<gateway>/status` says (payloads.js statusPayload): the jobs,
 * each device's health, the write commands' counters, and the publisher's own counts (reconnects,
 * dropped messages, the spool), read live from their owners when a status is built. `online` goes
 * first on every connection; the last will and the stop say `offline`.
 */
class StatusBoard {
  /**
   * @param {object} opts
   * @param {string} opts.gateway
   * @param {string} opts.version
   * @param {() => {reconnects: number, dropped: object, droppedValues: object, spool: object|null}} opts.counts
   *   the publisher's counts now (spool: its state without the folder, or null)
   */
  constructor ({ gateway, version, counts }) {
    this.gateway = gateway;
    this.version = version;
    this._counts = counts;
    /** @type {string|null} ISO time the publisher started */
    this.started = null;
    /** @type {string[]} */
    this.jobs = [];
    /** @type {Map<string, object>} device name → health */
    this._devices = new Map();
    /** @type {object|null} the write commands' counters */
    this._writes = null;
  }

  /**
   * Records a device's health (devices/device.js health), or forgets the device (null: removed by a
   * reload).
   * @param {string} name
   * @param {object|null} health
   */
  setDevice (name, health) {
    if (health === null) {
      this._devices.delete(name);
      return;
    }
    const h = { state: health.state, since: new Date(health.since).toISOString(), lastError: health.lastError || null };
    if (health.connections) h.connections = health.connections;
    // a line's units, each with its own state (devices/unit-health.js)
    if (health.units) {
      h.units = {};
      for (const [unit, u] of Object.entries(health.units)) {
        h.units[unit] = { unitId: u.unitId, state: u.state, since: new Date(u.since).toISOString(), lastError: u.lastError || null };
      }
    }
    if (health.inflight) h.inflight = health.inflight;
    if (health.warning) h.warning = health.warning;
    // FC8 counters per unit (devices/diagnostics.js), when the device reads them
    if (health.diagnostics) h.diagnostics = diagnosticsOf(health.diagnostics);
    this._devices.set(name, h);
  }

  /** @param {object|null} counts the write commands' counters (write-commands.js) */
  setWrites (counts) {
    this._writes = counts;
  }

  /** @returns {import('./payloads').StatusInfo} */
  info () {
    const c = this._counts();
    return {
      gateway: this.gateway,
      version: this.version,
      started: this.started,
      jobs: this.jobs.slice(),
      devices: Object.fromEntries(this._devices),
      reconnects: c.reconnects,
      dropped: c.dropped,
      droppedValues: c.droppedValues,
      ...(this._writes ? { writes: this._writes } : {}),
      ...(c.spool ? { spool: c.spool } : {})
    };
  }

  /** @param {string} connectedAt ISO time @returns {Buffer} */
  online (connectedAt) {
    return statusPayload('online', this.info(), { connected: connectedAt });
  }

  /**
   * The last will of a connection about to be attempted: "connection lost".
   * @param {number} reconnects the count that connection will have once it is up (MQTT cannot
   *   change a will without reconnecting)
   * @returns {Buffer}
   */
  will (reconnects) {
    return statusPayload('offline', { ...this.info(), reconnects }, { reason: 'connection lost' });
  }

  /** @returns {Buffer} the status a clean stop leaves */
  stopped () {
    return statusPayload('offline', this.info(), { reason: 'stopped', stopped: new Date().toISOString() });
  }
}

/**
 * A device's FC8 counters as the retained status shows them: times as ISO text, like its `since`.
 * @param {{periodMs: number, units: object[]}} d devices/diagnostics.js health
 * @returns {object}
 */
function diagnosticsOf (d) {
  return { periodMs: d.periodMs, units: d.units.map((u) => ({ ...u, at: u.at === null ? null : new Date(u.at).toISOString() })) };
}

module.exports = { StatusBoard };
