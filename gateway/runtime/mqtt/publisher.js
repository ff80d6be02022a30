'use strict';

const { EventEmitter } = require('node:events');
const { NinesError } = require('../../base/errors');
const { Backoff } = require('../../base/backoff');
const { topicsFor, checkName } = require('./topics');
const { checkPublisherOptions, checkMs } = require('./publisher-options');
const { BoundedQueue } = require('./bounded-queue');
const { WindowLimiter } = require('./window-limiter');
const { statusPayload, errorDigest, mergeDigests, errorPayload, encode } = require('./payloads');

/**
 * Publishes the gateway's status, latency summaries, values and errors over MQTT (mqtt.js).
 *
 * Delivery while the broker comes and goes:
 * - MQTT.js's own retry (a fixed reconnectPeriod) is off; we reconnect with capped exponential
 *   backoff and jitter (Backoff), so a fleet does not retry in lockstep after a broker restart.
 *   Each attempt is a fresh mqtt.js client with an empty outgoing store: MQTT.js's offline queue
 *   and QoS 1 store are unbounded, so we never hand it a message while disconnected, and at most
 *   `maxInflight` while connected.
 * - Latency messages wait in our bounded FIFO (bufferMax messages, bufferMaxBytes bytes); when it
 *   is full the oldest is dropped and counted per job. Messages in flight when a connection drops
 *   go back to the head of the FIFO and are sent again (QoS 1 is at-least-once: a subscriber may
 *   see a `seq` twice, never out of order).
 * - Values and errors are rate-limited per job (latest wins / counts merge); while offline only
 *   the newest one per job waits.
 * - The retained status (`online` with `dropped` counts) goes first on every connection; the last
 *   will is the retained `offline`.
 *
 * Events: 'connect' (connected, status sent), 'offline' (a connection was lost), 'reconnecting'
 * ({delayMs, attempt}: the next attempt is scheduled), 'error' (a NinesError NINES_ERR_MQTT for a
 * failed attempt or a rejected publish; emitted only when someone listens, never thrown).
 */
class Publisher extends EventEmitter {
  /**
   * @param {import('./publisher-options').PublisherOptions} opts
   * @throws {NinesError} NINES_ERR_INVALID_ARG naming the option, the value and the rule
   */
  constructor (opts) {
    super();
    const o = checkPublisherOptions(opts);
    this._broker = o.broker;
    this.gatewayId = o.gatewayId;
    this.prefix = o.prefix;
    this._topics = topicsFor(o.prefix, o.gatewayId);
    this._o = o;
    this._backoff = new Backoff({ initialMs: o.reconnectInitialMs, maxMs: o.reconnectMaxMs, random: o.random });

    this._queue = new BoundedQueue({ maxItems: o.bufferMax, maxBytes: o.bufferMaxBytes });
    /** Values and error digests ready to go, newest per topic (insertion order = send order) */
    this._slots = new Map();
    this._values = new WindowLimiter({ minIntervalMs: o.valuesMinIntervalMs, emit: (job, payload) => this._toSlot('value', job, payload) });
    this._errors = new WindowLimiter({ minIntervalMs: o.errorsMinIntervalMs, merge: mergeDigests, emit: (job, d) => this._toSlot('error', job, d) });

    /** @type {Map<number, object>} messages handed to the current mqtt.js client, not yet acked */
    this._inflight = new Map();
    this._nextId = 1;
    this._client = null;
    this._connected = false;
    this._everConnected = false;
    this._statusPending = false;
    /** @type {Map<string, object>} device name → health, for the status */
    this._devices = new Map();
    this._reconnectTimer = null;
    this._started = null;
    this._stopping = false;
    this._stopPromise = null;
    this._firstAttempt = null;
    this._idleWaiter = null;
    this._jobs = [];
    /** @type {Map<string, number>} job → value window, ms */
    this._jobValueMs = new Map();
    this._droppedByJob = new Map();
    this._counts = { published: 0, dropped: 0, reconnects: 0, unsentAtStop: 0 };
    /** Values replaced and error digests merged while waiting in a slot (each saves one message) */
    this._slotCoalesced = { value: 0, error: 0 };
    this._lastError = null;
  }

  /**
   * Connects in the background. Resolves once the first attempt has connected or failed (within
   * the connect timeout): a broker that is down does not stop the gateway, the publisher keeps
   * trying with backoff and buffers meanwhile.
   * @returns {Promise<void>}
   */
  start () {
    if (this._started || this._stopping) return Promise.resolve();
    this._started = new Date().toISOString();
    return new Promise((resolve) => {
      this._firstAttempt = resolve;
      this._connect();
    });
  }

  /**
   * Flushes pending messages (bounded by stopTimeoutMs), publishes the retained `offline` status,
   * disconnects cleanly (so the broker does not send the last will) and stops reconnecting.
   * Messages still unsent at the end are counted (latency ones as dropped).
   * @returns {Promise<void>}
   */
  stop () {
    if (!this._stopPromise) {
      this._stopping = true;
      clearTimeout(this._reconnectTimer);
      this._reconnectTimer = null;
      this._values.flush();
      this._errors.flush();
      this._stopPromise = this._shutdown(Date.now(), this._o.stopTimeoutMs);
    }
    return this._stopPromise;
  }

  /**
   * Sets the jobs listed in the status; republishes the status when connected.
   * @param {Array<string|{name: string, valuesMinIntervalMs?: number}>} list names, or objects
   *   that may also set the job's value window (e.g. 1000 / values.maxRatePerSec)
   */
  setJobs (list) {
    if (!Array.isArray(list)) throw new NinesError('NINES_ERR_INVALID_ARG', 'setJobs: list must be an array of job names or {name}', { field: 'list' });
    const names = [];
    this._jobValueMs.clear();
    list.forEach((j, i) => {
      const name = checkName(typeof j === 'string' ? j : j && j.name, `jobs[${i}].name`);
      names.push(name);
      if (j && typeof j === 'object' && j.valuesMinIntervalMs !== undefined) this._jobValueMs.set(name, checkMs(j.valuesMinIntervalMs, 0, `jobs[${i}].valuesMinIntervalMs`));
    });
    this._jobs = names;
    if (this._connected) {
      this._statusPending = true;
      this._pump();
    }
  }

  /**
   * Records a device's health for the retained status (devices/device.js health: state up, down,
   * connecting or closed, since when, the last error; the requests per connection and a warning when
   * a pipelining device fell back to one) and republishes the status when connected, so a subscriber
   * sees a device go down and come back at once.
   * @param {string} name
   * @param {{state: string, since: number, lastError: {code: string, message: string}|null,
   *   inflight?: {max: number, effective: number}, warning?: {code: string, message: string}|null}|null} health
   *   null: the device is gone (removed by a reload)
   */
  setDeviceHealth (name, health) {
    if (health === null) {
      // a device taken out by a config reload leaves the status
      this._devices.delete(name);
    } else {
      const h = { state: health.state, since: new Date(health.since).toISOString(), lastError: health.lastError || null };
      if (health.connections) h.connections = health.connections;
      // a line's units, each with its own state (devices/units.js)
      if (health.units) {
        h.units = {};
        for (const [name, u] of Object.entries(health.units)) {
          h.units[name] = { unitId: u.unitId, state: u.state, since: new Date(u.since).toISOString(), lastError: u.lastError || null };
        }
      }
      if (health.inflight) h.inflight = health.inflight;
      if (health.warning) h.warning = health.warning;
      this._devices.set(name, h);
    }
    if (this._connected) {
      this._statusPending = true;
      this._pump();
    }
  }

  /**
   * Publishes one latency summary (QoS `qos`) to `<prefix>/<gateway>/<job>/latency`, in order.
   * While the broker is away it waits in the bounded FIFO; when that is full the oldest goes.
   * @param {string} job
   * @param {object|string|Buffer} payload built by the runtime (objects are sent as JSON)
   */
  publishLatency (job, payload) {
    const topic = this._topics.job(job, 'latency');
    const body = encode(payload);
    const msg = { kind: 'latency', job, topic, payload: body, bytes: body.length, qos: this._o.qos, retain: false };
    if (this._stopPromise) {
      this._counts.unsentAtStop++;
      return this._drop([msg]);
    }
    this._drop(this._queue.push(msg));
    this._pump();
  }

  /**
   * Publishes a job's polled value to `<prefix>/<gateway>/<job>/value`, at most once per the
   * job's window: the first at once, then the latest one at the end of the window.
   * @param {string} job
   * @param {object|string|Buffer} payload (objects are sent as JSON, serialized when sent)
   */
  publishValue (job, payload) {
    checkName(job, 'job');
    if (this._stopPromise) { this._counts.unsentAtStop++; return; }
    this._values.offer(job, payload, this._jobValueMs.get(job));
  }

  /**
   * Publishes a job's error to `<prefix>/<gateway>/<job>/error`, at most once per window; errors
   * inside the window are counted into the next message (`count`, `suppressed`, `codes`).
   * @param {string} job
   * @param {Error|{code?: string, message: string, details?: object}|string} err
   */
  publishError (job, err) {
    checkName(job, 'job');
    if (this._stopPromise) { this._counts.unsentAtStop++; return; }
    this._errors.offer(job, errorDigest(err));
  }

  /**
   * @returns {{connected: boolean, published: number, buffered: number, bufferedBytes: number,
   *   inflight: number, dropped: number, droppedByJob: Record<string, number>, reconnects: number,
   *   errorsSuppressed: number, valuesCoalesced: number, unsentAtStop: number, lastError: string|null}}
   */
  get stats () {
    return {
      connected: this._connected,
      published: this._counts.published,
      buffered: this._queue.length,
      bufferedBytes: this._queue.bytes,
      inflight: this._inflight.size,
      dropped: this._counts.dropped,
      droppedByJob: Object.fromEntries(this._droppedByJob),
      reconnects: this._counts.reconnects,
      errorsSuppressed: this._errors.coalesced + this._slotCoalesced.error,
      valuesCoalesced: this._values.coalesced + this._slotCoalesced.value,
      unsentAtStop: this._counts.unsentAtStop,
      lastError: this._lastError
    };
  }

  // ---- internals ----

  _statusInfo () {
    return {
      gateway: this.gatewayId,
      version: this._o.version,
      started: this._started,
      jobs: this._jobs.slice(),
      devices: Object.fromEntries(this._devices),
      reconnects: this._counts.reconnects,
      dropped: { total: this._counts.dropped, jobs: Object.fromEntries(this._droppedByJob) }
    };
  }

  _drop (msgs) {
    for (const m of msgs) {
      this._counts.dropped++;
      this._droppedByJob.set(m.job, (this._droppedByJob.get(m.job) || 0) + 1);
    }
  }

  /** A value or error digest leaves its rate limiter: it waits in its topic's slot until sent. */
  _toSlot (kind, job, data) {
    const topic = this._topics.job(job, kind);
    const prev = this._slots.get(topic);
    if (prev) {
      this._slotCoalesced[kind]++;
      data = kind === 'error' ? mergeDigests(prev.data, data) : data;
    }
    this._slots.set(topic, { kind, job, topic, data, qos: this._o.qos, retain: false });
    this._pump();
  }

  _emitError (message, details) {
    this._lastError = message;
    if (this.listenerCount('error') > 0) this.emit('error', new NinesError('NINES_ERR_MQTT', message, details));
  }

  _connect () {
    this._reconnectTimer = null;
    if (this._stopping) return;
    const mqtt = require('mqtt');
    const o = this._o;
    const client = mqtt.connect(this._broker.url, {
      clientId: o.clientId,
      username: o.username,
      password: o.password,
      protocolVersion: o.protocolVersion,
      keepalive: Math.ceil(o.keepaliveMs / 1000),
      connectTimeout: o.connectTimeoutMs,
      reconnectPeriod: 0,
      clean: true,
      queueQoSZero: false,
      resubscribe: false,
      // Built per attempt (each attempt is a fresh client), so the will is never older than the
      // connection it belongs to: counts as of this attempt, and the reconnect count this
      // connection will have once it is up (the broker keeps the will for the whole connection;
      // MQTT has no way to update it without reconnecting)
      will: { topic: this._topics.status, payload: this._willPayload(), qos: 1, retain: true },
      ...o.tls
    });
    this._client = client;
    client.on('connect', () => { if (client === this._client) this._onConnect(); });
    client.on('close', () => this._onClose(client));
    client.on('error', (err) => {
      if (client !== this._client) return;
      this._emitError(`MQTT ${this._broker.url}: ${err.message}`, { url: this._broker.url, cause: err.code });
    });
  }

  /** @returns {Buffer} the last will of the connection about to be attempted: retained `offline`, "connection lost" */
  _willPayload () {
    const info = this._statusInfo();
    // _onConnect counts a reconnect when this attempt succeeds; the will speaks for that connection
    if (this._everConnected) info.reconnects = this._counts.reconnects + 1;
    return statusPayload('offline', info, { reason: 'connection lost' });
  }

  _onConnect () {
    this._connected = true;
    this._backoff.reset();
    if (this._everConnected) this._counts.reconnects++;
    this._everConnected = true;
    this._connectedAt = new Date().toISOString();
    this._statusPending = true;
    this._pump();
    this.emit('connect');
    this._settleFirstAttempt();
  }

  _onClose (client) {
    if (client !== this._client) return;
    const wasConnected = this._connected;
    this._connected = false;
    this._client = null;
    // Requeue what the broker did not acknowledge: latency at the head of the FIFO, values and
    // errors into their slots unless a newer one already waits there
    const inflight = [...this._inflight.values()];
    this._inflight.clear();
    this._drop(this._queue.requeue(inflight.filter((m) => m.kind === 'latency')));
    for (const m of inflight) {
      if (m.kind !== 'value' && m.kind !== 'error') continue;
      const newer = this._slots.get(m.topic);
      if (!newer) this._slots.set(m.topic, m);
      else if (m.kind === 'error') { newer.data = mergeDigests(m.data, newer.data); this._slotCoalesced.error++; }
    }
    client.end(true);
    if (wasConnected) this.emit('offline');
    this._settleFirstAttempt();
    this._checkIdle();
    if (!this._stopping) {
      const delayMs = this._backoff.next();
      this.emit('reconnecting', { delayMs, attempt: this._backoff.attempt });
      this._reconnectTimer = setTimeout(() => this._connect(), delayMs);
    }
  }

  _settleFirstAttempt () {
    if (this._firstAttempt) {
      const resolve = this._firstAttempt;
      this._firstAttempt = null;
      resolve();
    }
  }

  /** Hands messages to mqtt.js while connected and under the in-flight bound: status, then values and errors, then latency in order. */
  _pump () {
    if (this._pumping) return;
    this._pumping = true;
    try {
      while (this._connected && this._inflight.size < this._o.maxInflight) {
        let msg;
        if (this._statusPending) {
          this._statusPending = false;
          msg = { kind: 'status', topic: this._topics.status, payload: statusPayload('online', this._statusInfo(), { connected: this._connectedAt }), qos: 1, retain: true };
        } else if (this._slots.size) {
          const [topic, slot] = this._slots.entries().next().value;
          this._slots.delete(topic);
          msg = slot;
        } else if (this._queue.length) {
          msg = this._queue.shift();
        } else {
          break;
        }
        this._send(msg);
      }
    } finally {
      this._pumping = false;
    }
    this._checkIdle();
  }

  _send (msg) {
    const id = this._nextId++;
    const client = this._client;
    let payload = msg.payload;
    if (msg.kind === 'value') payload = encode(msg.data);
    else if (msg.kind === 'error') payload = errorPayload(this.gatewayId, msg.job, msg.data);
    this._inflight.set(id, msg);
    client.publish(msg.topic, payload, { qos: msg.qos, retain: msg.retain }, (err) => this._onAck(client, id, err));
  }

  _onAck (client, id, err) {
    if (client !== this._client || !this._inflight.has(id)) return;
    if (err) {
      // MQTT.js tears a connection down (keepalive timeout on a half-open broker, end(true)) in
      // _cleanUp(true), which fails every outstanding publish with "Connection closed" through
      // _flush() *before* it destroys the stream: client.connected is still true at this point.
      // So decide once the current call stack has finished (the stream is destroyed by then).
      queueMicrotask(() => this._onPublishFailed(client, id, err));
      return;
    }
    this._inflight.delete(id);
    this._counts.published++;
    this._pump();
  }

  /**
   * A publish callback reported an error. If the connection is going down, the message stays in
   * flight and _onClose puts it back in the FIFO, in order (it was not acknowledged, so it may or
   * may not have reached the broker: QoS 1 is at-least-once). Otherwise the broker (or MQTT.js)
   * refused this message on a live connection: sending it again would fail again, so it is
   * dropped, counted and reported.
   */
  _onPublishFailed (client, id, err) {
    if (client !== this._client || !this._inflight.has(id)) return;
    if (!client.connected || client.disconnecting || !client.stream || client.stream.destroyed) return;
    const msg = this._inflight.get(id);
    this._inflight.delete(id);
    if (msg.kind === 'latency') this._drop([msg]);
    this._emitError(`MQTT publish to ${msg.topic} failed: ${err.message}`, { topic: msg.topic, cause: err.code });
    this._pump();
  }

  _checkIdle () {
    if (this._idleWaiter && (!this._connected || (!this._inflight.size && !this._slots.size && !this._queue.length && !this._statusPending))) {
      const resolve = this._idleWaiter;
      this._idleWaiter = null;
      resolve();
    }
  }

  async _shutdown (nowMs, timeoutMs) {
    const client = this._client;
    // Keep part of the time for the offline status and the DISCONNECT, even after a slow flush
    const deadline = nowMs + timeoutMs;
    const flushDeadline = deadline - Math.min(1000, timeoutMs / 2);
    if (client && this._connected) {
      await this._until(flushDeadline, (resolve) => { this._idleWaiter = resolve; this._checkIdle(); });
      this._idleWaiter = null;
      if (this._connected) {
        const offline = statusPayload('offline', this._statusInfo(), { reason: 'stopped', stopped: new Date().toISOString() });
        await this._until(deadline, (resolve) => client.publish(this._topics.status, offline, { qos: 1, retain: true }, () => resolve()));
      }
      if (this._connected) {
        // A clean DISCONNECT: the broker then discards the will
        await this._until(deadline, (resolve) => client.end(false, {}, () => resolve()));
      }
    }
    // Whatever the broker does (frozen, half-open), the connection ends here, at the deadline:
    // MQTT.js's end(true) is a no-op once end(false) is pending (it waits for acks that a frozen
    // broker never sends, and its keepalive would hold the process for 1.5 x keepalive), so the
    // socket is destroyed too. Without a DISCONNECT the broker then sends the last will.
    const last = this._client;
    this._client = null;
    this._connected = false;
    if (last) {
      last.end(true);
      if (last.stream && !last.stream.destroyed) last.stream.destroy();
    }
    this._settleFirstAttempt();
    // Count what never went out
    const leftLatency = this._queue.drain().concat([...this._inflight.values()].filter((m) => m.kind === 'latency'));
    this._drop(leftLatency);
    this._counts.unsentAtStop += leftLatency.length + this._slots.size + [...this._inflight.values()].filter((m) => m.kind !== 'latency' && m.kind !== 'status').length;
    this._inflight.clear();
    this._slots.clear();
    this._values.clear();
    this._errors.clear();
  }

  /** Runs fn(resolve) and waits for it, or for the deadline (epoch ms), whichever is first. */
  _until (deadline, fn) {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
      fn(() => { clearTimeout(timer); resolve(); });
    });
  }
}

module.exports = { Publisher };
