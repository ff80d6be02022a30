'use strict';

const { Backoff } = require('../../base/backoff');
const { connectOnce, until, destroyClient } = require('./connect');

/**
 * The publisher's connection to its broker, and only that: what is sent over it is its owner's
 * business, told through hooks.
 *
 * MQTT.js's own retry (a fixed reconnectPeriod) is off; this reconnects with capped exponential
 * backoff and jitter (Backoff), so a fleet does not retry in lockstep after a broker restart. Each
 * attempt is a fresh mqtt.js client (connect.js) with an empty outgoing store and its own last will,
 * asked of the owner just before the attempt, so the will is never older than its connection. Events
 * of a client that is no longer the current one are ignored.
 */
class Connection {
  /**
   * @param {object} opts
   * @param {string} opts.url the broker's URL
   * @param {object} opts.options checked publisher options (publisher-options.js): login, TLS,
   *   keepalive and connect timeout, reconnect delays, jitter source
   * @param {() => {topic: string, payload: Buffer, qos: 0|1|2, retain: boolean}} opts.will the last
   *   will of the attempt about to be made
   * @param {object} opts.on
   * @param {(client: import('mqtt').MqttClient) => void} opts.on.up the connection is up
   * @param {(wasConnected: boolean) => void} opts.on.down a connection, or an attempt, closed; the
   *   next attempt is scheduled after this returns
   * @param {(topic: string, payload: Buffer) => void} opts.on.message
   * @param {(message: string, details: object) => void} opts.on.error a failed attempt or a client error
   * @param {(next: {delayMs: number, attempt: number}) => void} opts.on.reconnecting
   */
  constructor ({ url, options, will, on }) {
    this.url = url;
    this._o = options;
    this._will = will;
    this._on = on;
    this._backoff = new Backoff({ initialMs: options.reconnectInitialMs, maxMs: options.reconnectMaxMs, random: options.random });
    /** @type {import('mqtt').MqttClient|null} the current attempt's client */
    this.client = null;
    this.connected = false;
    this.everConnected = false;
    /** Successful connections after the first */
    this.reconnects = 0;
    /** @type {string|null} ISO time the current connection came up */
    this.connectedAt = null;
    this._timer = null;
    this._stopping = false;
    this._firstAttempt = null;
  }

  /**
   * Starts connecting in the background.
   * @returns {Promise<void>} settles once the first attempt has connected or failed
   */
  start () {
    return new Promise((resolve) => {
      this._firstAttempt = resolve;
      this._connect();
    });
  }

  /** No further attempt: called when the owner begins to stop. */
  stop () {
    this._stopping = true;
    clearTimeout(this._timer);
    this._timer = null;
  }

  /**
   * Ends the connection by the deadline, whatever the broker does: sends `farewell` (if connected)
   * and a clean DISCONNECT (so the broker discards the will), then destroys the client.
   * @param {number} deadline epoch ms
   * @param {() => {topic: string, payload: Buffer, qos: 0|1|2, retain: boolean}} [farewell] built when sent
   * @returns {Promise<void>}
   */
  async end (deadline, farewell) {
    const client = this.client;
    if (client && this.connected && farewell) {
      const m = farewell();
      await until(deadline, (done) => client.publish(m.topic, m.payload, { qos: m.qos, retain: m.retain }, () => done()));
    }
    if (client && this.connected) await until(deadline, (done) => client.end(false, {}, () => done()));
    // Whatever the broker does, the connection ends here, at the deadline (connect.js)
    const last = this.client;
    this.client = null;
    this.connected = false;
    if (last) destroyClient(last);
    this._settleFirstAttempt();
  }

  _connect () {
    this._timer = null;
    if (this._stopping) return;
    const client = connectOnce(this.url, this._o, this._will());
    this.client = client;
    client.on('connect', () => { if (client === this.client) this._onConnect(); });
    client.on('message', (topic, payload) => { if (client === this.client) this._on.message(topic, payload); });
    client.on('close', () => this._onClose(client));
    client.on('error', (err) => {
      if (client !== this.client) return;
      this._on.error(`MQTT ${this.url}: ${err.message}`, { url: this.url, cause: err.code });
    });
  }

  _onConnect () {
    this.connected = true;
    this._backoff.reset();
    if (this.everConnected) this.reconnects++;
    this.everConnected = true;
    this.connectedAt = new Date().toISOString();
    this._on.up(this.client);
    this._settleFirstAttempt();
  }

  _onClose (client) {
    if (client !== this.client) return;
    const wasConnected = this.connected;
    this.connected = false;
    this.client = null;
    client.end(true);
    this._on.down(wasConnected);
    this._settleFirstAttempt();
    if (!this._stopping) {
      const delayMs = this._backoff.next();
      this._on.reconnecting({ delayMs, attempt: this._backoff.attempt });
      this._timer = setTimeout(() => this._connect(), delayMs);
    }
  }

  _settleFirstAttempt () {
    if (this._firstAttempt) {
      const resolve = this._firstAttempt;
      this._firstAttempt = null;
      resolve();
    }
  }
}

module.exports = { Connection };
