'use strict';

const { EventEmitter } = require('node:events');
const { NinesError } = require('../../base/errors');
const { topicsFor, checkName } = require('./topics');
const { checkPublisherOptions, checkMs } = require('./publisher-options');
const { MemoryStore } = require('./message-store');
const { DropCounts } = require('./drop-counts');
const { errorDigest, errorPayload, encode } = require('./payloads');
const { Connection } = require('./connection');
const { Outbox } = require('./outbox');
const { SendLoop } = require('./send-loop');
const { StatusBoard } = require('./status-board');
const { RateLimits } = require('./rate-limits');
const { SpoolStores } = require('./spool-stores');
const { Subscriptions } = require('./subscriptions');

/**
 * Publishes the gateway's status, latency summaries, values and errors over MQTT (mqtt.js). This
 * class wires its parts together and keeps the counts; each part has one job:
 * - connection.js: one mqtt.js client per attempt, reconnecting with capped exponential backoff and
 *   jitter, each attempt with its own last will (the retained `offline`);
 * - outbox.js and send-loop.js: what waits, in the order it goes (the retained status first on every
 *   connection, then error digests, summaries, values), handed to mqtt.js at most `maxInflight` at a
 *   time and settled by its acknowledgement. MQTT.js's offline queue and QoS 1 store are unbounded,
 *   so it is never handed a message while disconnected. Summaries and values wait in bounded FIFOs
 *   (message-store.js: bufferMax messages and bufferMaxBytes bytes each, so values never crowd out
 *   summaries); when one is full its oldest is dropped and counted per job. Messages in flight when a
 *   connection drops go back to the head of their FIFO (QoS 1 is at-least-once: a subscriber may see
 *   a `seq` twice, never out of order);
 * - status-board.js: what the retained status says (jobs, devices, writes, dropped counts);
 * - rate-limits.js: values and errors at most once per window per job (values: the latest wins;
 *   errors: merged, their counts add up); while offline only the newest digest per job waits;
 * - spool-stores.js: with `spool` (a folder), both FIFOs live on disk and survive a restart or a
 *   power loss; each job's last spooled `seq` is kept (resumePoints()) so that numbering goes on;
 * - subscriptions.js: the command topics, subscribed on every connection.
 *
 * Events: 'connect' (connected, status sent), 'offline' (a connection was lost), 'reconnecting'
 * ({delayMs, attempt}: the next attempt is scheduled), 'error' (a NinesError: NINES_ERR_MQTT for a
 * failed attempt or a rejected publish, NINES_ERR_IO for the spool's files; emitted only when
 * someone listens, never thrown).
 */
class Publisher extends EventEmitter {
  /**
   * @param {import('./publisher-options').PublisherOptions} opts
   * @throws {NinesError} NINES_ERR_INVALID_ARG naming the option, the value and the rule
   */
  constructor (opts) {
    super();
    const o = checkPublisherOptions(opts);
    this.gatewayId = o.gatewayId;
    this.prefix = o.prefix;
    this._topics = topicsFor(o.prefix, o.gatewayId);
    this._o = o;
    /** what never went out, per kind and job: counted since the stream began (kept in the spool) */
    this._dropped = new DropCounts();
    this._counts = { unsentAtStop: 0, repliesDropped: 0 };
    this._lastError = null;
    /** @type {SpoolStores|null} */
    this._spool = null;
    this._started = null;
    this._stopPromise = null;

    this._status = new StatusBoard({
      gateway: o.gatewayId,
      version: o.version,
      counts: () => ({
        reconnects: this._conn.reconnects,
        dropped: this._dropped.toJSON('latency'),
        droppedValues: this._dropped.toJSON('value'),
        // the folder stays out of what subscribers see
        spool: this._spool ? { ...this._spool.stats(), dir: undefined } : null
      })
    });
    this._conn = new Connection({
      url: o.broker.url,
      options: o,
      will: () => ({ topic: this._topics.status, payload: this._willPayload(), qos: 1, retain: true }),
      on: {
        up: (client) => this._onUp(client),
        down: (wasConnected) => this._onDown(wasConnected),
        message: (topic, payload) => this._subscriptions.dispatch(topic, payload),
        error: (message, details) => this._emitError(message, details),
        reconnecting: (next) => this.emit('reconnecting', next)
      }
    });
    /** @type {Record<'latency'|'value', MemoryStore|import('./message-store').SpoolStore>} */
    this._stores = { latency: this._memoryStore(), value: this._memoryStore() };
    this._outbox = new Outbox({
      stores: this._stores,
      status: () => ({ kind: 'status', topic: this._topics.status, payload: this._status.online(this._conn.connectedAt), qos: 1, retain: true })
    });
    this._loop = new SendLoop({
      conn: this._conn,
      outbox: this._outbox,
      maxInflight: o.maxInflight,
      qos: o.qos,
      payload: (msg) => (msg.kind === 'error' ? errorPayload(this.gatewayId, msg.job, msg.data) : msg.payload),
      onRefused: (msg, err) => {
        if (msg.kind === 'latency' || msg.kind === 'value') this._dropped.add(msg.kind, msg.job, 1);
        this._emitError(`MQTT publish to ${msg.topic} failed: ${err.message}`, { topic: msg.topic, cause: err.code });
      }
    });
    this._limits = new RateLimits({
      valuesMinIntervalMs: o.valuesMinIntervalMs,
      errorsMinIntervalMs: o.errorsMinIntervalMs,
      value: (job, data) => this._pushValue(job, data),
      error: (job, d) => {
        this._outbox.putError(job, this._topics.job(job, 'error'), d);
        this._loop.pump();
      }
    });
    this._subscriptions = new Subscriptions();
  }

  /**
   * Connects in the background. Resolves once the first attempt has connected or failed (within
   * the connect timeout): a broker that is down does not stop the gateway, the publisher keeps
   * trying with backoff and buffers meanwhile.
   * @returns {Promise<void>}
   */
  start () {
    if (this._started || this._stopPromise) return Promise.resolve();
    this._started = new Date().toISOString();
    this._status.started = this._started;
    if (this._o.spool) {
      this._spool = new SpoolStores({
        spool: this._o.spool,
        stores: this._stores,
        topic: (k, job) => this._topics.job(job, k),
        dropped: this._dropped,
        onDurable: () => this._loop.pump(),
        onError: (err) => this._reportError(err)
      });
    }
    return this._conn.start();
  }

  /**
   * Flushes pending messages (bounded by stopTimeoutMs), publishes the retained `offline` status,
   * disconnects cleanly (so the broker does not send the last will) and stops reconnecting.
   * Messages still unsent at the end are counted (latency ones as dropped).
   * @returns {Promise<void>}
   */
  stop () {
    if (!this._stopPromise) {
      this._conn.stop();
      this._limits.flush();
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
    return this._spool ? this._spool.resumePoints() : new Map();
  }

  /**
   * Sets the jobs listed in the status; republishes the status when connected.
   * @param {Array<string|{name: string, valuesMinIntervalMs?: number}>} list names, or objects
   *   that may also set the job's value window (e.g. 1000 / values.maxRatePerSec)
   */
  setJobs (list) {
    if (!Array.isArray(list)) throw new NinesError('NINES_ERR_INVALID_ARG', 'setJobs: list must be an array of job names or {name}', { field: 'list' });
    const names = [];
    const windows = new Map();
    list.forEach((j, i) => {
      const name = checkName(typeof j === 'string' ? j : j && j.name, `jobs[${i}].name`);
      names.push(name);
      if (j && typeof j === 'object' && j.valuesMinIntervalMs !== undefined) windows.set(name, checkMs(j.valuesMinIntervalMs, 0, `jobs[${i}].valuesMinIntervalMs`));
    });
    this._status.jobs = names;
    this._limits.setValueWindows(windows);
    this._statusChanged();
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
    this._status.setDevice(name, health);
    this._statusChanged();
  }

  /**
   * Sets the write commands' counters shown in the retained status (runtime/mqtt/write-commands.js,
   * which calls this at most once per MQTT_WRITES_STATUS_MIN_INTERVAL_MS while they change) and
   * republishes the status when connected.
   * @param {object|null} counts
   */
  setWrites (counts) {
    this._status.setWrites(counts);
    this._statusChanged();
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
      this._dropped.add('latency', job, 1);
      return;
    }
    this._stores.latency.push(msg);
    this._loop.pump();
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
    this._limits.value(job, payload);
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
    this._limits.error(job, errorDigest(err));
  }

  /**
   * Takes messages on a topic filter (the gateway's command topics), subscribed on every connection:
   * a clean session forgets subscriptions, so each new connection subscribes again.
   * @param {string} filter an MQTT topic filter
   * @param {(topic: string, payload: Buffer) => void} onMessage
   */
  subscribe (filter, onMessage) {
    this._subscriptions.add(filter, onMessage, this._conn.connected ? this._conn.client : null);
  }

  /**
   * Answers a command at once (QoS 1, not retained): an answer that cannot go now is not kept, as its
   * asker has stopped waiting by the time the broker is back. Counted in stats.repliesDropped.
   * @param {string} topic
   * @param {object} payload sent as JSON
   * @returns {boolean} whether it went out
   */
  reply (topic, payload) {
    if (!this._conn.connected || !this._conn.client) {
      this._counts.repliesDropped++;
      return false;
    }
    this._conn.client.publish(topic, encode(payload), { qos: 1, retain: false });
    return true;
  }

  /**
   * @returns {{connected: boolean, published: number, buffered: number, bufferedBytes: number,
   *   inflight: number, dropped: number, droppedByJob: Record<string, number>, reconnects: number,
   *   errorsSuppressed: number, valuesCoalesced: number, unsentAtStop: number, repliesDropped: number,
   *   lastError: string|null}}
   */
  get stats () {
    const { latency, value } = this._stores;
    const coalesced = this._limits.coalesced;
    return {
      connected: this._conn.connected,
      published: this._loop.published,
      buffered: latency.length,
      bufferedBytes: latency.bytes,
      valuesBuffered: value.length,
      inflight: this._loop.inflight.size,
      dropped: this._dropped.total('latency'),
      droppedByJob: this._dropped.jobs('latency'),
      valuesDropped: this._dropped.total('value'),
      valuesDroppedByJob: this._dropped.jobs('value'),
      reconnects: this._conn.reconnects,
      errorsSuppressed: coalesced.errors + this._outbox.coalesced,
      valuesCoalesced: coalesced.values,
      unsentAtStop: this._counts.unsentAtStop,
      repliesDropped: this._counts.repliesDropped,
      spool: this._spool ? this._spool.stats() : null,
      lastError: this._lastError
    };
  }

  // ---- internals ----

  _memoryStore () {
    return new MemoryStore({ maxItems: this._o.bufferMax, maxBytes: this._o.bufferMaxBytes, onDrop: (kind, job, n) => this._dropped.add(kind, job, n) });
  }

  /** @returns {Buffer} the last will of the connection about to be attempted: retained `offline`, "connection lost" */
  _willPayload () {
    const c = this._conn;
    // the connection counts a reconnect when this attempt succeeds; the will speaks for that connection
    return this._status.will(c.everConnected ? c.reconnects + 1 : c.reconnects);
  }

  _statusChanged () {
    if (!this._conn.connected) return;
    this._outbox.statusChanged();
    this._loop.pump();
  }

  /** A value leaves its rate limiter: it waits in order, with its read time, until sent. */
  _pushValue (job, data) {
    const payload = encode(data);
    const ts = data !== null && typeof data === 'object' && !Buffer.isBuffer(data) ? data.ts : undefined;
    this._stores.value.push({ kind: 'value', job, topic: this._topics.job(job, 'value'), payload, bytes: payload.length, time: ts });
    this._loop.pump();
  }

  _onUp (client) {
    this._subscriptions.subscribeAll(client);
    this._outbox.statusChanged();
    this._loop.pump();
    this.emit('connect');
  }

  _onDown (wasConnected) {
    this._loop.connectionLost();
    // the cursor as of now: a crash during the outage then resends nothing already delivered
    // (a failed attempt acknowledged nothing: no checkpoint for it)
    if (wasConnected && this._spool) this._spool.checkpoint();
    if (wasConnected) this.emit('offline');
  }

  _emitError (message, details) {
    this._reportError(new NinesError('NINES_ERR_MQTT', message, details));
  }

  _reportError (err) {
    this._lastError = err.message;
    if (this.listenerCount('error') > 0) this.emit('error', err);
  }

  async _shutdown (nowMs, timeoutMs) {
    // Keep part of the time for the offline status and the DISCONNECT, even after a slow flush
    const deadline = nowMs + timeoutMs;
    const flushDeadline = deadline - Math.min(1000, timeoutMs / 2);
    if (this._conn.connected) await this._loop.idle(flushDeadline);
    await this._conn.end(deadline, () => ({ topic: this._topics.status, payload: this._status.stopped(), qos: 1, retain: true }));
    // Count what never went out; a spool keeps its records for the next start (not dropped)
    this._counts.unsentAtStop += this._outbox.close(this._loop.takeInflight());
    this._limits.clear();
    if (this._spool) this._spool.close();
  }
}

module.exports = { Publisher };
