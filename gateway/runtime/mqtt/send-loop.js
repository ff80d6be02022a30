'use strict';

const { until } = require('./connect');

/**
 * Hands the outbox's messages to mqtt.js while connected, at most `maxInflight` unacknowledged at a
 * time (MQTT.js's QoS 1 store is unbounded, so it is never handed more), and settles each by its
 * acknowledgement: acked, refused on a live connection (dropped, reported), or still in flight when
 * the connection dropped (put back in order: QoS 1 is at-least-once, a subscriber may see a `seq`
 * twice, never out of order).
 */
class SendLoop {
  /**
   * @param {object} opts
   * @param {import('./connection').Connection} opts.conn
   * @param {import('./outbox').Outbox} opts.outbox
   * @param {number} opts.maxInflight
   * @param {0|1|2} opts.qos of everything but the status (QoS 1, retained)
   * @param {(msg: import('./outbox').Message) => Buffer} opts.payload the bytes of a message
   * @param {(msg: import('./outbox').Message, err: Error) => void} opts.onRefused the broker refused a
   *   message on a live connection; it is let go
   */
  constructor ({ conn, outbox, maxInflight, qos, payload, onRefused }) {
    this._conn = conn;
    this._outbox = outbox;
    this._maxInflight = maxInflight;
    this._qos = qos;
    this._payload = payload;
    this._onRefused = onRefused;
    /** @type {Map<number, import('./outbox').Message>} handed to the current mqtt.js client, not yet acked */
    this.inflight = new Map();
    this._nextId = 1;
    this._pumping = false;
    this._idleWaiter = null;
    /** Messages the broker acknowledged */
    this.published = 0;
  }

  /** Sends what waits, as far as the in-flight bound allows. */
  pump () {
    if (this._pumping) return;
    this._pumping = true;
    try {
      while (this._conn.connected && this.inflight.size < this._maxInflight) {
        const msg = this._outbox.next();
        if (!msg) break;
        this._send(msg);
      }
    } finally {
      this._pumping = false;
    }
    this._checkIdle();
  }

  /**
   * The connection dropped: what it did not acknowledge goes back to the outbox, in the order sent.
   * @returns {import('./outbox').Message[]} those messages
   */
  connectionLost () {
    const msgs = [...this.inflight.values()];
    this.inflight.clear();
    this._outbox.putBack(msgs);
    this._checkIdle();
    return msgs;
  }

  /**
   * @param {number} deadline epoch ms
   * @returns {Promise<void>} settles when nothing waits or is in flight, the connection is down, or at the deadline
   */
  idle (deadline) {
    return until(deadline, (resolve) => { this._idleWaiter = resolve; this._checkIdle(); }).then(() => { this._idleWaiter = null; });
  }

  /**
   * At stop: forgets what is in flight.
   * @returns {import('./outbox').Message[]} those messages, to be counted
   */
  takeInflight () {
    const msgs = [...this.inflight.values()];
    this.inflight.clear();
    return msgs;
  }

  _send (msg) {
    const id = this._nextId++;
    const client = this._conn.client;
    this.inflight.set(id, msg);
    const status = msg.kind === 'status';
    client.publish(msg.topic, this._payload(msg), { qos: status ? 1 : this._qos, retain: status }, (err) => this._onAck(client, id, err));
  }

  _onAck (client, id, err) {
    if (client !== this._conn.client || !this.inflight.has(id)) return;
    if (err) {
      // MQTT.js tears a connection down (keepalive timeout on a half-open broker, end(true)) in
      // _cleanUp(true), which fails every outstanding publish with "Connection closed" through
      // _flush() *before* it destroys the stream: client.connected is still true at this point.
      // So decide once the current call stack has finished (the stream is destroyed by then).
      queueMicrotask(() => this._onPublishFailed(client, id, err));
      return;
    }
    const msg = this.inflight.get(id);
    this.inflight.delete(id);
    this._outbox.done(msg);
    this.published++;
    this.pump();
  }

  /**
   * A publish callback reported an error. If the connection is going down, the message stays in
   * flight and connectionLost() puts it back, in order (it was not acknowledged, so it may or may
   * not have reached the broker). Otherwise the broker (or MQTT.js) refused this message on a live
   * connection: sending it again would fail again, so it is let go (off the spool too, so it is not
   * sent again after a restart), and the owner counts and reports it.
   */
  _onPublishFailed (client, id, err) {
    if (client !== this._conn.client || !this.inflight.has(id)) return;
    if (!client.connected || client.disconnecting || !client.stream || client.stream.destroyed) return;
    const msg = this.inflight.get(id);
    this.inflight.delete(id);
    this._outbox.done(msg);
    this._onRefused(msg, err);
    this.pump();
  }

  _checkIdle () {
    if (this._idleWaiter && (!this._conn.connected || (!this.inflight.size && this._outbox.empty))) {
      const resolve = this._idleWaiter;
      this._idleWaiter = null;
      resolve();
    }
  }
}

module.exports = { SendLoop };
