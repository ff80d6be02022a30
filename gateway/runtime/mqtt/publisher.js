'use strict';

const { EventEmitter } = require('node:events');
const { NinesError } = require('../../base/errors');
const { Backoff } = require('../../base/backoff');
const { topicsFor, checkName, filterMatches } = require('./topics');
const { checkPublisherOptions, checkMs } = require('./publisher-options');
const { MemoryStore, SpoolStore } = require('./message-store');
const { DropCounts } = require('./drop-counts');
const { WindowReporter } = require('../../base/window-reporter');
const D = require('./defaults');
const { connectOnce, until, destroyClient } = require('./connect');
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
 * - Latency summaries and values wait in bounded FIFOs (message-store.js: bufferMax messages and
 *   bufferMaxBytes bytes each, so values never crowd out summaries); when one is full its oldest is
 *   dropped and counted per job. Messages in flight when a connection drops go back to the head of
 *   their FIFO and are sent again (QoS 1 is at-least-once: a subscriber may see a `seq` twice,
 *   never out of order).
 * - With `spool` (a folder), both FIFOs live on disk (spool.js) and survive a restart or a power
 *   loss; the memory FIFOs then hold only what the disk refused (full, failing). Each job's last
 *   spooled `seq` is kept (resumePoints()) so that numbering goes on after a restart, and the drop
 *   counts are kept with it, so every gap in a stream stays explained.
 * - Values are rate-limited per job (latest wins inside a window, each value keeps its read time
 *   `ts`); what leaves the window waits in order, so an outage delays values but does not thin
 *   them further. Errors are rate-limited per job and merged (counts); while offline only the
 *   newest digest per job waits.
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

    /** @type {Record<'latency'|'value', MemoryStore|SpoolStore>} ordered messages waiting for the broker */
    this._stores = { latency: this._memoryStore(), value: this._memoryStore() };
    /** Error digests ready to go, newest per topic (insertion order = send order) */
    this._slots = new Map();
    this._values = new WindowReporter({ windowMs: o.valuesMinIntervalMs, emit: (job, payload) => this._pushValue(job, payload) });
    this._errors = new WindowReporter({ windowMs: o.errorsMinIntervalMs, merge: mergeDigests, emit: (job, d) => this._toSlot('error', job, d) });

    /** @type {Map<number, object>} messages handed to the current mqtt.js client, not yet acked */
    this._inflight = new Map();
    this._nextId = 1;
    this._client = null;
    this._connected = false;
    this._everConnected = false;
    this._statusPending = false;
    /** @type {object|null} the write commands' counters, for the status (setWrites) */
    this._writes = null;
    /** @type {Map<string, object>} device name → health, for the status */
    this._devices = new Map();
    this._reconnectTimer = null;
    this._started = null;
    this._stopping = false;
    this._stopPromise = null;
    this._firstAttempt = null;
    this._idleWaiter = null;
    /** @type {Map<string, (topic: string, payload: Buffer) => void>} topic filter → handler (subscribe()) */
    this._subscriptions = new Map();
    this._jobs = [];
    /** @type {Map<string, number>} job → value window, ms */
    this._jobValueMs = new Map();
    /** what never went out, per kind and job: counted since the stream began (kept in the spool) */
    this._dropped = new DropCounts();
    this._counts = { published: 0, reconnects: 0, unsentAtStop: 0, repliesDropped: 0 };
    /** Error digests merged while waiting in a slot (each saves one message) */
    this._slotCoalesced = { error: 0 };
    this._lastError = null;
    /** file errors: one report per window per kind of failure, the rest counted into the report at its end */
    this._ioReports = new WindowReporter({ windowMs: D.MQTT_REPORT_WINDOW_MS, emit: (_kind, err, held) => this._emitIo(err, held) });
    this._spoolInfo = null;
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
    if (this._o.spool) this._openSpool(this._o.spool);
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
   * Where each job's stream stands in the spool: its last spooled summary's seq and end. A
   * restarted gateway numbers on from seq + 1 and starts its first interval at end, so the stream
   * stays contiguous across the restart (the slots of the downtime are counted as skipped). Empty
   * without a spool (then a restart begins new streams at seq 0; the status's `started` tells).
   * Known once start() has been called.
   * @returns {Map<string, {seq: number, end: number}>}
   */
  resumePoints () {
    const s = this._stores.latency;
    return s instanceof SpoolStore ? new Map(s.spool.jobs) : new Map();
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
   * Sets the write commands' counters shown in the retained status (runtime/mqtt/write-commands.js,
   * which calls this at most once per MQTT_WRITES_STATUS_MIN_INTERVAL_MS while they change) and
   * republishes the status when connected.
   * @param {object|null} counts
   */
  setWrites (counts) {
    this._writes = counts;
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
    const p = /** @type {any} */ (payload);
    const isObj = p !== null && typeof p === 'object' && !Buffer.isBuffer(p);
    const msg = { kind: 'latency', job, topic, payload: body, bytes: body.length, seq: isObj ? p.seq : undefined, time: isObj ? p.end : undefined };
    if (this._stopPromise) {
      this._counts.unsentAtStop++;
      return this._drop('latency', job, 1);
    }
    this._stores.latency.push(msg);
    this._pump();
  }

  /**
   * Publishes a job's polled value to `<prefix>/<gateway>/<job>/value`, at most once per the
   * job's window: the first at once, then the latest one at the end of the window. What leaves the
   * window waits in order while the broker is away (and in the spool when there is one).
   * @param {string} job
   * @param {object|string|Buffer} payload opaque to the publisher; an object's `ts` (epoch ms) should
   *   be when the value was read, so a subscriber can tell a late delivery from fresh data
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
   *   errorsSuppressed: number, valuesCoalesced: number, unsentAtStop: number, repliesDropped: number,
   *   lastError: string|null}}
   */
  get stats () {
    const { latency, value } = this._stores;
    return {
      connected: this._connected,
      published: this._counts.published,
      buffered: latency.length,
      bufferedBytes: latency.bytes,
      valuesBuffered: value.length,
      inflight: this._inflight.size,
      dropped: this._dropped.total('latency'),
      droppedByJob: this._dropped.jobs('latency'),
      valuesDropped: this._dropped.total('value'),
      valuesDroppedByJob: this._dropped.jobs('value'),
      reconnects: this._counts.reconnects,
      errorsSuppressed: this._errors.coalesced + this._slotCoalesced.error,
      valuesCoalesced: this._values.coalesced,
      unsentAtStop: this._counts.unsentAtStop,
      repliesDropped: this._counts.repliesDropped,
      spool: this._spoolStats(),
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
      dropped: this._dropped.toJSON('latency'),
      droppedValues: this._dropped.toJSON('value'),
      ...(this._writes ? { writes: this._writes } : {}),
      // the folder stays out of what subscribers see
      ...(this._spoolInfo ? { spool: { ...this._spoolStats(), dir: undefined } } : {})
    };
  }

  _memoryStore () {
    return new MemoryStore({ maxItems: this._o.bufferMax, maxBytes: this._o.bufferMaxBytes, onDrop: (kind, job, n) => this._drop(kind, job, n) });
  }

  /**
   * Opens the disk spool: one log per kind (latency, values), each with half the cap, so values
   * never push summaries out. A spool that cannot be opened is reported and memory serves instead.
   */
  _openSpool ({ dir, maxBytes, syncIntervalMs }) {
    for (const kind of ['latency', 'value']) {
      let store;
      try {
        store = SpoolStore.open({
          dir: require('node:path').join(dir, kind === 'latency' ? 'latency' : 'values'),
          maxBytes: Math.floor(maxBytes / 2),
          syncIntervalMs,
          memory: this._stores[kind],
          topic: (k, job) => this._topics.job(job, k),
          onDrop: (k, job, n) => this._dropped.add(k, job, n),
          onIoError: (err) => this._reportIo(err),
          onDurable: () => this._pump(),
          extra: () => ({ dropped: this._dropped.jobs(kind) })
        });
      } catch (err) {
        this._reportIo(err);
        continue;
      }
      // drops are counted per stream, and the stream goes on across restarts
      this._dropped.seed(kind, store.spool.savedExtra.dropped);
      this._stores[kind] = store;
    }
    this._spoolInfo = { dir, maxBytes };
  }

  _spoolStats () {
    if (!this._spoolInfo) return null;
    const out = { dir: this._spoolInfo.dir, maxBytes: this._spoolInfo.maxBytes };
    for (const kind of ['latency', 'value']) out[kind] = this._stores[kind] instanceof SpoolStore ? this._stores[kind].stats() : null;
    return out;
  }

  /** A file error of the spool: reported (NINES_ERR_IO), at most once per window per kind of failure. */
  _reportIo (err) {
    this._ioReports.offer(`${(err.details && err.details.cause) || ''} ${err.message.split(' ')[1] || ''}`, err);
  }

  _emitIo (err, held) {
    // details.repeated: how many failures this report stands for (payloads.js errorDigest), itself included
    if (held > 0) err.details = { ...err.details, repeated: held };
    this._lastError = err.message;
    if (this.listenerCount('error') > 0) this.emit('error', err);
  }

  _drop (kind, job, n) {
    this._dropped.add(kind, job, n);
  }

  /** A value leaves its rate limiter: it waits in order, with its read time, until sent. */
  _pushValue (job, data) {
    const payload = encode(data);
    const ts = data !== null && typeof data === 'object' && !Buffer.isBuffer(data) ? data.ts : undefined;
    this._stores.value.push({ kind: 'value', job, topic: this._topics.job(job, 'value'), payload, bytes: payload.length, time: ts });
    this._pump();
  }

  /** An error digest leaves its rate limiter: it waits in its topic's slot until sent. */
  _toSlot (kind, job, data) {
    const topic = this._topics.job(job, kind);
    const prev = this._slots.get(topic);
    if (prev) {
      this._slotCoalesced.error++;
      data = mergeDigests(prev.data, data);
    }
    this._slots.set(topic, { kind, job, topic, data });
    this._pump();
  }

  _emitError (message, details) {
    this._lastError = message;
    if (this.listenerCount('error') > 0) this.emit('error', new NinesError('NINES_ERR_MQTT', message, details));
  }

  _connect () {
    this._reconnectTimer = null;
    if (this._stopping) return;
    // Built per attempt (each attempt is a fresh client), so the will is never older than the
    // connection it belongs to: counts as of this attempt, and the reconnect count this
    // connection will have once it is up (the broker keeps the will for the whole connection;
    // MQTT has no way to update it without reconnecting)
    const will = { topic: this._topics.status, payload: this._willPayload(), qos: 1, retain: true };
    const client = connectOnce(this._broker.url, this._o, will);
    this._client = client;
    client.on('connect', () => { if (client === this._client) this._onConnect(); });
    client.on('message', (topic, payload) => { if (client === this._client) this._onMessage(topic, payload); });
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

  /**
   * Takes messages on a topic filter (the gateway's command topics), subscribed on every connection:
   * a clean session forgets subscriptions, so each new connection subscribes again.
   * @param {string} filter an MQTT topic filter
   * @param {(topic: string, payload: Buffer) => void} onMessage
   */
  subscribe (filter, onMessage) {
    this._subscriptions.set(filter, onMessage);
    if (this._connected && this._client) this._client.subscribe(filter, { qos: 1 });
  }

  /**
   * Answers a command at once (QoS 1, not retained): an answer that cannot go now is not kept, as its
   * asker has stopped waiting by the time the broker is back. Counted in stats.repliesDropped.
   * @param {string} topic
   * @param {object} payload sent as JSON
   * @returns {boolean} whether it went out
   */
  reply (topic, payload) {
    if (!this._connected || !this._client) {
      this._counts.repliesDropped++;
      return false;
    }
    this._client.publish(topic, encode(payload), { qos: 1, retain: false });
    return true;
  }

  _onMessage (topic, payload) {
    for (const [filter, fn] of this._subscriptions) if (filterMatches(filter, topic)) fn(topic, payload);
  }

  _onConnect () {
    this._connected = true;
    for (const filter of this._subscriptions.keys()) this._client.subscribe(filter, { qos: 1 });
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
    // Requeue what the broker did not acknowledge: summaries and values at the head of their
    // FIFOs (in the order sent), errors into their slots, merged with a newer one waiting there
    const inflight = [...this._inflight.values()];
    this._inflight.clear();
    for (const kind of ['latency', 'value']) this._stores[kind].rewind(inflight.filter((m) => m.kind === kind));
    for (const m of inflight) {
      if (m.kind !== 'error') continue;
      const newer = this._slots.get(m.topic);
      if (!newer) this._slots.set(m.topic, m);
      else { newer.data = mergeDigests(m.data, newer.data); this._slotCoalesced.error++; }
    }
    // the cursor as of now: a crash during the outage then resends nothing already delivered
    // (a failed attempt acknowledged nothing: no checkpoint for it)
    if (wasConnected) this._checkpoint();
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

  /** Hands messages to mqtt.js while connected and under the in-flight bound: status, then errors, then latency in order, then values in order. */
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
        } else {
          msg = this._stores.latency.next() || this._stores.value.next();
          if (!msg) break;
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
    const payload = msg.kind === 'error' ? errorPayload(this.gatewayId, msg.job, msg.data) : msg.payload;
    this._inflight.set(id, msg);
    const status = msg.kind === 'status';
    client.publish(msg.topic, payload, { qos: status ? 1 : this._o.qos, retain: status }, (err) => this._onAck(client, id, err));
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
    const msg = this._inflight.get(id);
    this._inflight.delete(id);
    if (msg.kind === 'latency' || msg.kind === 'value') this._stores[msg.kind].ack(msg);
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
    if (msg.kind === 'latency' || msg.kind === 'value') {
      // let go: off the spool too, so it is not sent again after a restart
      this._stores[msg.kind].ack(msg);
      this._drop(msg.kind, msg.job, 1);
    }
    this._emitError(`MQTT publish to ${msg.topic} failed: ${err.message}`, { topic: msg.topic, cause: err.code });
    this._pump();
  }

  _checkIdle () {
    if (this._idleWaiter && (!this._connected || (!this._inflight.size && !this._slots.size && !this._stores.latency.length && !this._stores.value.length && !this._statusPending))) {
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
      await until(flushDeadline, (resolve) => { this._idleWaiter = resolve; this._checkIdle(); });
      this._idleWaiter = null;
      if (this._connected) {
        const offline = statusPayload('offline', this._statusInfo(), { reason: 'stopped', stopped: new Date().toISOString() });
        await until(deadline, (resolve) => client.publish(this._topics.status, offline, { qos: 1, retain: true }, () => resolve()));
      }
      if (this._connected) {
        // A clean DISCONNECT: the broker then discards the will
        await until(deadline, (resolve) => client.end(false, {}, () => resolve()));
      }
    }
    // Whatever the broker does, the connection ends here, at the deadline (connect.js)
    const last = this._client;
    this._client = null;
    this._connected = false;
    if (last) destroyClient(last);
    this._settleFirstAttempt();
    // Count what never went out; a spool keeps its records for the next start (not dropped)
    const inflight = [...this._inflight.values()];
    let left = 0;
    for (const kind of ['latency', 'value']) left += this._stores[kind].close(inflight.filter((m) => m.kind === kind));
    this._counts.unsentAtStop += left + this._slots.size + inflight.filter((m) => m.kind === 'error').length;
    this._inflight.clear();
    this._slots.clear();
    this._values.clear();
    this._errors.clear();
    // file errors held in their window are reported now
    this._ioReports.flush();
    this._ioReports.clear();
  }

  _checkpoint () {
    for (const kind of ['latency', 'value']) {
      const s = this._stores[kind];
      if (!(s instanceof SpoolStore)) continue;
      try { s.spool.checkpoint(); } catch (err) { this._reportIo(err); }
    }
  }
}

module.exports = { Publisher };
