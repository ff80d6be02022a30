'use strict';

/**
 * What a device config node owns: its device in the process's shared worker pool
 * (gateway/workers/shared.js). The device, with its connections (at most maxConnections), lives in a
 * worker thread; it is added to the pool when the first node uses it and removed, with the pool
 * released, when the last one leaves or the config node closes. Every node of the device (read,
 * write, ASCII, device status, and the poll nodes' jobs, which join the same device in the pool)
 * shares those connections, served fairly, each node with its own bounded queue.
 *
 * The device's health ('connecting', 'up', 'down' with the last error, 'closed', and a warning when it
 * works but not as configured, such as a pipelining fallback) comes from the pool as it changes and
 * goes to every user node at once, so all of them show the same state and code. On a line of units
 * (the config node's "Units on this line") each node shows its own unit's health on top of that: the
 * nodes of a unit that stopped answering turn red ("unit 3 down") while those of its neighbours stay
 * green, and turn green again when it answers (follow()).
 *
 * What the device has to say in the log (it went down, its settings are invalid, settings.js is not
 * usable) is said by a user node, never by the config node: a config node's warnings reach the
 * editor's debug sidebar with the path "global" and no flow, which the sidebar cannot filter or
 * reveal, and which has made it throw (TypeError reading 'label' in handleDebugMessage, issue 10).
 * The first user node still deployed speaks for the device, once per change of error code, not
 * once per retry.
 *
 * Unlike node-red-contrib-modbus, a user node leaving never closes the connection under the feet
 * of the others (its #487), and a dead device never needs a redeploy: the device reconnects by
 * itself with its backoff and the status turns green again.
 */

const { sharedPool } = require('../../gateway/workers/shared');
const status = require('./status');
const { nodeError, isMsgError } = require('./errors');
const { fromJSON } = require('../../gateway/base/errors');

/** How long close() waits for the pool to let go before giving up (Node-RED allows 15 s in all) */
const CLOSE_TIMEOUT_MS = 10000;

class DeviceHub {
  /**
   * @param {object} opts
   * @param {object|null} opts.spec the device spec (devices/spec.js), named by the config node's id;
   *   null when the settings failed validation
   * @param {{workers: number|'auto', gateway: string}} [opts.pool] settings of the shared pool
   * @param {(err: Error) => string} [opts.describe] the log text for the device going down (logged
   *   as a warning through a user node, once per error code)
   * @param {(warning: Error) => string} [opts.describeWarning] the log text for a warning in the health
   *   (logged through a user node, once per warning code)
   * @param {Error|null} [opts.configError] a setting that failed validation: every request fails with it
   * @param {string} [opts.configText] the log text for configError (logged as an error through the
   *   first user node)
   */
  constructor ({ spec, pool = { workers: 'auto', gateway: 'node-red' }, describe, describeWarning, configError = null, configText }) {
    this.spec = spec;
    this.name = spec ? spec.name : null;
    this._poolSettings = pool;
    this._describe = describe || ((err) => `${err.code}: ${err.message}`);
    this._describeWarning = describeWarning || this._describe;
    this.configError = configError ? nodeError(configError, 'NINES_ERR_INVALID_ARG') : null;
    /** log lines waiting for a user node to say them: [level, text] */
    this._pending = [];
    if (this.configError) this._pending.push(['error', configText || this.configError.message]);
    /** @type {Map<object, ((health: object) => void)|null>} user node → its own health handler, if any */
    this._users = new Map();
    /** @type {WeakMap<object, number>} user node → the unit id it talks to (a line's nodes: whose health it shows) */
    this._unitOf = new WeakMap();
    /** @type {WeakMap<object, object>} user node → the status of its last msg, refused before it was sent (until its next request ends) */
    this._refused = new WeakMap();
    this._handle = null;
    this._listeners = null;
    /** the device's last health, null until the pool reports it */
    this.health = null;
    this._loggedCode = null;
    this._loggedWarning = null;
  }

  /**
   * Logs a line about the device through a user node (on a flow, so the debug sidebar can show where
   * it comes from): the first with a name, else the first; held until a node registers when none has yet.
   * @param {'warn'|'error'} level
   * @param {string} text
   */
  report (level, text) {
    // a named node if the device has one: Node-RED's log names the speaker, and "[nines-poll:3f2a…]"
    // says nothing about the device (issue 21); the text itself names the device
    let speaker = null;
    for (const node of this._users.keys()) {
      if (speaker === null) speaker = node;
      if (typeof node.name === 'string' && node.name.trim() !== '') { speaker = node; break; }
    }
    if (speaker !== null) speaker[level](text);
    else if (this._pending.length < 10) this._pending.push([level, text]);
  }

  /** The status every user node shows now. */
  get status () {
    if (this.configError) return status.errorStatus(this.configError);
    return status.fromHealth(this.health);
  }

  /**
   * The status one user node shows now: the device's, and on a line of units its unit's while the
   * device is up (a red ring "unit 3 down" while its unit is left alone). While the device (and its
   * unit) is up, a node whose last msg was refused shows the refusal (a yellow ring) instead of the
   * green dot; a device problem shows over it.
   * @param {object} node
   * @returns {object}
   */
  statusOf (node) {
    if (this.configError) return status.errorStatus(this.configError);
    const refused = this._refused.get(node);
    if (refused && this.health && this.health.state === 'up' && !this.unitDown(node)) return refused;
    return status.fromUnitHealth(this.health, this._unitOf.get(node));
  }

  /**
   * Whether the unit a node talks to is down now (its requests are not sent: NINES_ERR_UNIT_DOWN).
   * @param {object} node
   * @returns {boolean}
   */
  unitDown (node) {
    const u = status.unitHealth(this.health, this._unitOf.get(node));
    return u !== null && u.state === 'down';
  }

  /**
   * Shows a failed request on the node that sent it: a unit left alone (or gone down with this
   * request) and a lost connection through the health, as every node of that unit or device shows
   * them; the request's own failure (a timeout, an exception, a "?" reply) on this node until its next
   * reply; a msg refused before it was sent (isMsgError) as a yellow ring "refused: …" until the
   * node's next request ends (showSuccess, or a failure of its own), the device's health untouched.
   * @param {object} node
   * @param {{code: string, details?: object}} err the request's error (nodeError)
   */
  showFailure (node, err) {
    if (isMsgError(err)) {
      this._refused.set(node, status.refusedStatus(err));
      status.showStatus(node, this.statusOf(node));
      return;
    }
    this._refused.delete(node);
    if (err.code === 'NINES_ERR_UNIT_DOWN' && err.details && Number.isInteger(err.details.unitId)) status.showStatus(node, status.unitDownStatus(err.details.unitId));
    else if (status.isConnectionError(err) || this.unitDown(node)) status.showStatus(node, this.statusOf(node));
    else status.showStatus(node, status.errorStatus(err));
  }

  /**
   * Shows a request that went through on the node that sent it: a refusal it showed is over, and it
   * shows its device's (or unit's) health again.
   * @param {object} node
   */
  showSuccess (node) {
    this._refused.delete(node);
    status.showStatus(node, this.statusOf(node));
  }

  /**
   * Sets the unit a node talks to (a read or write node: the unit of its last request, its configured
   * one before the first), whose health its status shows on a line of units; shows the status when it
   * changes. A node that names none follows the device's unit id.
   * @param {object} node
   * @param {number|undefined} unitId
   */
  follow (node, unitId) {
    const id = unitId === undefined && this.spec ? this.spec.target.unitId : unitId;
    if (this._unitOf.get(node) === id) return;
    this._unitOf.set(node, id);
    if (this._users.has(node) && this._users.get(node) === null) status.showStatus(node, this.statusOf(node));
  }

  /**
   * Adds a user node: it gets the status (or its handler the health) now and on every change; the
   * device joins the pool with the first user.
   * @param {{status: (s: object) => void}} node
   * @param {(health: object|null) => void} [onHealth] instead of the status, the health as it changes
   */
  register (node, onHealth) {
    this._users.set(node, onHealth || null);
    if (!this._unitOf.has(node) && this.spec) this._unitOf.set(node, this.spec.target.unitId);
    for (const [level, text] of this._pending.splice(0)) node[level](text);
    if (!this.configError) this._ensure();
    if (onHealth) onHealth(this.health);
    else status.showStatus(node, this.statusOf(node));
  }

  /**
   * Removes a user node; the last one out removes the device from the pool (it comes back on the
   * next register).
   * @param {object} node
   * @returns {Promise<void>}
   */
  deregister (node) {
    this._users.delete(node);
    if (this._users.size === 0) return this._stop();
    return Promise.resolve();
  }

  /**
   * One request on the device's connections, in the user's own fair queue.
   * @param {string|object} op an ASCII command or a Modbus op (validated by the caller)
   * @param {string} user who asks: the node's id
   * @returns {Promise<object>} the reply, plain data with its Buffers restored; rejects with a NinesError
   */
  request (op, user) {
    if (this.configError) return Promise.reject(this.configError);
    this._ensure();
    return this._handle.pool.request(this.name, op, { user });
  }

  /**
   * One poll of a tag list on the device's connections, read and decoded in the device's thread,
   * in the user's own fair queue.
   * @param {{tags: object[], plan: object[]}} read checked tags and their coalesced reads
   * @param {string} user who asks: the node's id
   * @param {string} key the reader's key beside the device: a read split around a hole in the
   *   device's map stays split for the same key
   * @returns {Promise<import('../../gateway/tags/reader').PollResult>} rejects with a NinesError whose
   *   `poll` holds the tags that were read and the quality of the others
   */
  readTags (read, user, key) {
    if (this.configError) return Promise.reject(this.configError);
    this._ensure();
    return this._handle.pool.readTags(this.name, read, { user, key });
  }

  /**
   * Removes the device from the pool whoever still uses it; resolves within CLOSE_TIMEOUT_MS.
   * @returns {Promise<void>}
   */
  close () {
    this._users.clear();
    return this._stop();
  }

  _ensure () {
    if (this._handle) return;
    const handle = sharedPool({ workers: this._poolSettings.workers, gateway: this._poolSettings.gateway, mode: 'worker' });
    const pool = handle.pool;
    this._handle = handle;
    this._listeners = {
      health: (device, health) => { if (device === this.name) this._setHealth(health); },
      // the pool restarts a dead worker with its devices; until then the device is unreachable
      'worker-exit': (info) => {
        if (!info.devices.includes(this.name)) return;
        this._setHealth({
          device: this.name,
          state: 'down',
          since: Date.now(),
          lastError: { code: 'NINES_ERR_WORKER', message: `the worker thread serving this device exited (code ${info.code}); restarting in ${info.restartInMs} ms` },
          connections: { open: 0, max: this.spec.maxConnections }
        });
      }
    };
    for (const [event, fn] of Object.entries(this._listeners)) pool.on(event, fn);
    pool.addDevice(this.spec);
    const h = pool.health(this.name);
    if (h) this._setHealth(h);
  }

  _setHealth (health) {
    this.health = health;
    if (health.state === 'down' && health.lastError) {
      // a dead device fails on every retry: log a change of code, not each attempt
      if (health.lastError.code !== this._loggedCode) {
        this._loggedCode = health.lastError.code;
        this.report('warn', this._describe(nodeError(fromJSON(health.lastError))));
      }
    } else if (health.state === 'up') {
      this._loggedCode = null;
    }
    // a warning stays in the health until the device is built again: say it once
    const w = health.warning;
    if (w && w.code !== this._loggedWarning) {
      this._loggedWarning = w.code;
      this.report('warn', this._describeWarning(nodeError(fromJSON(w))));
    }
    for (const [node, onHealth] of this._users) {
      if (onHealth) onHealth(health);
      else status.showStatus(node, this.statusOf(node));
    }
  }

  _stop () {
    const handle = this._handle;
    if (!handle) return Promise.resolve();
    this._handle = null;
    this.health = null;
    this._loggedCode = null;
    this._loggedWarning = null;
    const pool = handle.pool;
    for (const [event, fn] of Object.entries(this._listeners)) pool.removeListener(event, fn);
    this._listeners = null;
    pool.removeDevice(this.name);
    let timer;
    const limit = new Promise((resolve) => { timer = setTimeout(resolve, CLOSE_TIMEOUT_MS); });
    return Promise.race([handle.release().catch(() => {}), limit]).then(() => clearTimeout(timer));
  }
}

module.exports = { DeviceHub, CLOSE_TIMEOUT_MS };
