'use strict';

/**
 * What a device config node owns: its client connections (created on first use, shared by every
 * node that uses the device, closed when the last user leaves or the config node closes) and the
 * status of the connection, forwarded to every user node so each shows connecting / connected /
 * the error code while the client retries with backoff.
 *
 * Unlike node-red-contrib-modbus, a user node leaving never closes the connection under the feet
 * of the others (its #487), and a dead device never needs a redeploy: the client reconnects by
 * itself and the status turns green again.
 */

const status = require('./status');
const { nodeError } = require('./errors');

/** How long close() waits for the clients before giving up (Node-RED allows 15 s in all) */
const CLOSE_TIMEOUT_MS = 5000;

class DeviceHub {
  /**
   * @param {object} opts
   * @param {() => object} opts.createClient builds one client (AsciiClient / ModbusClient contract)
   * @param {number} [opts.connections=1] clients to open; requests go round-robin over them
   * @param {(err: Error) => void} [opts.onError] called when the connection error code changes (for the log)
   * @param {Error|null} [opts.configError] a setting that failed validation: every request fails with it
   */
  constructor ({ createClient, connections = 1, onError, configError = null }) {
    this._createClient = createClient;
    this._connections = connections;
    this._onError = onError || (() => {});
    this.configError = configError ? nodeError(configError, 'NINES_ERR_INVALID_ARG') : null;
    /** @type {object[]} */
    this._clients = [];
    this._next = 0;
    this._users = new Set();
    this.lastError = this.configError;
    this.state = 'idle';
  }

  /** The status every user node should show now. */
  get status () {
    if (this.configError) return status.errorStatus(this.configError);
    return status.fromState(this.state, this.lastError);
  }

  /**
   * Adds a user node: it gets the status now and on every change; the clients open on the first.
   * @param {{status: (s: object) => void}} node
   */
  register (node) {
    this._users.add(node);
    if (!this.configError) this._ensureClients();
    node.status(this.status);
  }

  /**
   * Removes a user node; the last one out closes the clients (they reopen on the next register).
   * @param {object} node
   * @returns {Promise<void>}
   */
  deregister (node) {
    this._users.delete(node);
    if (this._users.size === 0) return this._closeClients();
    return Promise.resolve();
  }

  /**
   * Sends one request on the next client (round-robin).
   * @param {string|object} op an ASCII command or a Modbus op
   * @param {object} [opts] per-request options ({timeoutMs})
   * @returns {Promise<object>} the client's reply; rejects with a NinesError
   */
  request (op, opts) {
    if (this.configError) return Promise.reject(this.configError);
    this._ensureClients();
    const client = this._clients[this._next];
    this._next = (this._next + 1) % this._clients.length;
    return client.request(op, opts);
  }

  /**
   * Closes every client; resolves within CLOSE_TIMEOUT_MS whatever the clients do.
   * @returns {Promise<void>}
   */
  close () {
    this._users.clear();
    return this._closeClients();
  }

  _ensureClients () {
    if (this._clients.length > 0) return;
    for (let i = 0; i < this._connections; i++) this._clients.push(this._watch(this._createClient()));
    this._update();
    for (const c of this._clients) {
      // connect() failures also arrive as 'error' events while the client retries; the catch
      // keeps a rejected promise from being unhandled
      Promise.resolve().then(() => c.connect()).catch((err) => {
        if (this._clients.includes(c)) this._setError(err);
      });
    }
  }

  _watch (client) {
    // events of a client already closed and dropped must not touch the status of its successor
    const mine = () => this._clients.includes(client);
    client.on('connect', () => { if (mine()) { this.lastError = null; this._update(); } });
    client.on('reconnecting', () => { if (mine()) this._update(); });
    client.on('close', () => { if (mine()) this._update(); });
    // an EventEmitter without an 'error' listener throws: always listen
    client.on('error', (err) => { if (mine()) this._setError(err); });
    return client;
  }

  _setError (err) {
    const previous = this.lastError;
    this.lastError = nodeError(err, 'NINES_ERR_CONNECT_FAILED');
    // a dead device fails on every retry: report a change of code, not each attempt
    if (!previous || previous.code !== this.lastError.code) this._onError(this.lastError);
    this._update();
  }

  /** The best state over the clients: connected if any is, else connecting, else closed. */
  _update () {
    const states = this._clients.map((c) => c.state);
    let state = 'idle';
    if (states.includes('connected')) state = 'connected';
    else if (states.includes('connecting')) state = 'connecting';
    else if (states.includes('reconnecting')) state = 'reconnecting';
    else if (states.length > 0) state = states.includes('closed') ? 'closed' : 'connecting';
    this.state = state;
    const s = this.status;
    for (const u of this._users) u.status(s);
  }

  _closeClients () {
    const clients = this._clients;
    this._clients = [];
    this._next = 0;
    this.state = 'idle';
    if (clients.length === 0) return Promise.resolve();
    const closing = Promise.all(clients.map((c) => Promise.resolve().then(() => c.close()).catch(() => {})));
    let timer;
    const limit = new Promise((resolve) => { timer = setTimeout(resolve, CLOSE_TIMEOUT_MS); });
    return Promise.race([closing, limit]).then(() => clearTimeout(timer));
  }
}

module.exports = { DeviceHub, CLOSE_TIMEOUT_MS };
