'use strict';

const { EventEmitter } = require('node:events');
const { NinesError } = require('../../base/errors');
const { Connection } = require('../mqtt/connection');
const D = require('../mqtt/defaults');

/**
 * The edge node's own MQTT session (mqtt.js), apart from the gateway's publisher: Sparkplug needs
 * its will to be the NDEATH with this connection's bdSeq, and the publisher's will is the
 * retained nines status. One session per connection, in the order Sparkplug 3.0 asks:
 * 1. CONNECT, clean session, will = NDEATH {bdSeq} at QoS 1, not retained. bdSeq goes up by one
 *    with every CONNECT sent, from 0 at start, and wraps after 255.
 * 2. SUBSCRIBE NCMD and DCMD (QoS 1), so no command is missed once the node is announced; with a
 *    primary host, its STATE too (both the 3.0 and the 2.2 topic).
 * 3. NBIRTH and the DBIRTHs (edge-node.js), then data; with a primary host, only once its STATE
 *    (retained, so it follows the SUBACK) says online.
 * Lost connection: every birth is void (the broker publishes the will); reconnect with capped
 * exponential backoff and jitter (the publisher's Connection, one mqtt.js client per attempt, the
 * will asked for just before each), then a new bdSeq and new births. Without a primary host, data
 * published while down is not kept: the births after the reconnect carry the current values.
 * With one, data is held (hold.js) and published as historical after the next births.
 * The primary host going offline ends the session as Sparkplug 3.0 asks: NDEATH, a clean
 * DISCONNECT, then a new connection (the next bdSeq) that waits for the host's STATE.
 * stop(): NDEATH published explicitly with the session's bdSeq (a clean DISCONNECT discards the
 * will), then DISCONNECT, all within stopTimeoutMs.
 *
 * Events: 'online' ({bdSeq}), 'offline', 'error' (NinesError NINES_ERR_MQTT; only when listened to).
 */
class SparkplugSession extends EventEmitter {
  /**
   * @param {object} opts
   * @param {string} opts.url broker URL
   * @param {string} opts.clientId
   * @param {import('./edge-node').EdgeNode} opts.edge
   * @param {string} [opts.username]
   * @param {string} [opts.password]
   * @param {object} [opts.tls] tls.connect options (ca, cert, key, rejectUnauthorized)
   * @param {4|5} [opts.protocolVersion=4]
   * @param {number} [opts.keepaliveMs=30000]
   * @param {number} [opts.connectTimeoutMs=10000]
   * @param {number} [opts.reconnectInitialMs=500]
   * @param {number} [opts.reconnectMaxMs=30000]
   * @param {number} [opts.stopTimeoutMs=2000]
   * @param {number} [opts.firstBdSeq=0]
   * @param {() => number} [opts.random=Math.random] jitter source
   */
  constructor (opts) {
    super();
    // the publisher's defaults (mqtt/defaults.js): one broker, one set of timings
    this._o = {
      protocolVersion: D.MQTT_PROTOCOL_VERSION,
      keepaliveMs: D.MQTT_KEEPALIVE_MS,
      connectTimeoutMs: D.MQTT_CONNECT_TIMEOUT_MS,
      reconnectInitialMs: D.MQTT_RECONNECT_INITIAL_MS,
      reconnectMaxMs: D.MQTT_RECONNECT_MAX_MS,
      stopTimeoutMs: D.MQTT_STOP_TIMEOUT_MS,
      ...opts
    };
    this.edge = opts.edge;
    this._nextBdSeq = Number.isInteger(opts.firstBdSeq) ? opts.firstBdSeq % 256 : 0;
    /** The bdSeq of the current attempt's will, until its births make it this.bdSeq */
    this._attemptBdSeq = 0;
    this.bdSeq = null;
    this._stopping = false;
    this._first = null;
    this.counts = { connects: 0, attempts: 0, hostOffline: 0 };
    this._conn = new Connection({
      url: this._o.url,
      options: this._o,
      will: () => this._will(),
      on: {
        up: (client) => this._onUp(client),
        down: (wasConnected) => this._onDown(wasConnected),
        message: (topic, payload) => this.edge.onMessage(topic, payload),
        error: (message, details) => this._error(`Sparkplug ${message}`, details),
        // nothing to report per attempt: counts.attempts counts them
        reconnecting: () => {}
      }
    });
    this._onHostOffline = () => this._hostOffline();
    this.edge.on('host-offline', this._onHostOffline);
  }

  /** @returns {import('mqtt').MqttClient|null} the current attempt's client (a fault drill cuts its socket) */
  get _client () {
    return this._conn.client;
  }

  /** @returns {Promise<void>} once the first attempt has connected (births sent) or failed */
  start () {
    return new Promise((resolve) => {
      this._first = resolve;
      this._conn.start();
    });
  }

  /**
   * Publishes one message of the edge node (QoS 0, not retained, as Sparkplug asks for births and
   * data); dropped while no session is up, since the next births carry the current state.
   * @param {string} topic
   * @param {Buffer} payload
   */
  publish (topic, payload) {
    const c = this._conn;
    if (c.connected && c.client) c.client.publish(topic, payload, { qos: 0, retain: false });
  }

  /** @returns {{topic: string, payload: Buffer, qos: 1, retain: false}} the will of the attempt about to be made: NDEATH with a new bdSeq */
  _will () {
    const bdSeq = this._nextBdSeq;
    this._nextBdSeq = (bdSeq + 1) % 256;
    this._attemptBdSeq = bdSeq;
    this.counts.attempts++;
    return { topic: this.edge.topics.ndeath, payload: this.edge.deathPayload(bdSeq), qos: 1, retain: false };
  }

  /** Connected: subscribe, then the births (edge-node.js) */
  _onUp (client) {
    const o = this._o;
    const bdSeq = this._attemptBdSeq;
    client.subscribe([this.edge.topics.ncmd, this.edge.topics.dcmdFilter, ...this.edge.stateTopics], { qos: 1 }, (err) => {
      if (client !== this._conn.client || !this._conn.connected) return;
      if (err) {
        this._error(`Sparkplug: cannot subscribe to NCMD, DCMD${this.edge.stateTopics.length ? ' and STATE' : ''} on ${o.url}: ${err.message}`, { url: o.url });
        client.end(true);
        return;
      }
      this.bdSeq = bdSeq;
      this.counts.connects++;
      this.edge.born(bdSeq);
      this.emit('online', { bdSeq });
      this._settleFirst();
    });
  }

  /** A connection or an attempt closed: every birth is void; Connection schedules the next attempt */
  _onDown (wasConnected) {
    this.edge.lost();
    if (wasConnected) this.emit('offline');
    this._settleFirst();
  }

  /** The primary host went offline: this session's NDEATH, then DISCONNECT; _onClose connects again */
  _hostOffline () {
    const client = this._conn.client;
    if (!client || !this._conn.connected || this._stopping) return;
    this.counts.hostOffline++;
    client.publish(this.edge.topics.ndeath, this.edge.deathPayload(this.bdSeq), { qos: 1, retain: false }, () => client.end(false));
  }

  _settleFirst () {
    if (this._first) { const f = this._first; this._first = null; f(); }
  }

  _error (message, details) {
    if (this.listenerCount('error') > 0) this.emit('error', new NinesError('NINES_ERR_MQTT', message, details));
  }

  /**
   * The NDEATH, then a clean DISCONNECT; the socket is destroyed at the deadline whatever the broker
   * does (then, without a DISCONNECT, the broker publishes the will: the same NDEATH).
   * @returns {Promise<void>}
   */
  async stop () {
    if (this._stopping) return;
    this._stopping = true;
    this._conn.stop();
    const deadline = Date.now() + this._o.stopTimeoutMs;
    await this._conn.end(deadline, () => {
      const death = this.edge.deathPayload(this.bdSeq);
      this.edge.lost();
      return { topic: this.edge.topics.ndeath, payload: death, qos: 1, retain: false };
    });
    this.edge.close();
    this.edge.off('host-offline', this._onHostOffline);
    this._settleFirst();
  }
}

module.exports = { SparkplugSession };
