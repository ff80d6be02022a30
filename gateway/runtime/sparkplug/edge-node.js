'use strict';

const { EventEmitter } = require('node:events');
const { performance } = require('node:perf_hooks');
const { NinesError } = require('../../base/errors');
const { nodeTopics, parseTopic } = require('./topics');
const { encodePayload, decodeCommand } = require('./codec');
const { tagMetric, latencyMetrics } = require('./metrics');
const { sameMetrics } = require('./model');

/**
 * The Sparkplug B edge node's state: what it has announced, and what it publishes next. It holds
 * no MQTT client: session.js tells it when a session is up (`born`) or gone (`lost`) and sends
 * what it hands to `publish`, so every rule here is tested without a broker.
 *
 * The rules it keeps (Sparkplug 3.0):
 * - NBIRTH first in every session, with `bdSeq` (the value in this connection's will, the NDEATH)
 *   and `Node Control/Rebirth`; `seq` is 0 in it and goes up by one, modulo 256, in every DBIRTH,
 *   NDATA, DDATA and DDEATH after it. A rebirth starts again at 0, as Tahu's clients do.
 * - A device is born (DBIRTH, every metric with its latest read) when the session is up, the
 *   device is up and one of its tag jobs has read it (whichever comes last); DDATA then carries
 *   only what changed, at most once per the device's value window; DDEATH when the device goes
 *   down. Nothing of a device goes out before its DBIRTH.
 * - Node metrics (latency per job) go in NDATA, batched: one NDATA per `ndataWindowMs` however
 *   many jobs report in it.
 * - NCMD `Node Control/Rebirth` = true → NBIRTH and every DBIRTH again. A command that is not
 *   exactly understood (bytes that do not decode, an unknown metric, a wrong datatype) is refused
 *   whole with NINES_ERR_SPARKPLUG and changes nothing.
 * - DCMD writes tags through the gateway's writeTags (checked there, allowWrites needed), only
 *   with `writes` on; otherwise refused.
 *
 * Events: 'refused' (NinesError NINES_ERR_SPARKPLUG: a command refused), 'command-error'
 * (NinesError: an accepted DCMD whose write failed), 'rebirth' ({reason}).
 */

/** OPC DA "bad, waiting for initial data": a tag not read yet in this device's life */
const INITIAL = 'initial';

class EdgeNode extends EventEmitter {
  /**
   * @param {object} opts
   * @param {string} opts.group Sparkplug group id
   * @param {string} opts.node edge node id
   * @param {import('./model').NodeModel} opts.model
   * @param {(topic: string, payload: Buffer) => void} opts.publish sends a message (QoS 0, not
   *   retained), or drops it when the session is down
   * @param {boolean} [opts.writes=false] whether DCMD may write tags
   * @param {(device: string, values: Record<string, unknown>) => Promise<{ok: boolean, results: object}>} [opts.writeTags]
   * @param {number} [opts.ndataWindowMs=250] latency summaries arriving within this go in one NDATA
   * @param {() => number} [opts.now=Date.now] wall clock for timestamps, ms
   * @param {() => number} [opts.monotonic] clock for the DDATA windows, ms
   */
  constructor ({ group, node, model, publish, writes = false, writeTags, ndataWindowMs = 250, now = Date.now, monotonic = () => performance.now() }) {
    super();
    this.group = group;
    this.node = node;
    this.topics = nodeTopics(group, node);
    this.model = model;
    this._publish = publish;
    this.writes = writes;
    this._writeTags = writeTags;
    this.ndataWindowMs = ndataWindowMs;
    this._now = now;
    this._mono = monotonic;
    this.online = false;
    this.bdSeq = null;
    this.seq = 0;
    /** @type {Map<string, string>} device → its latest health state (kept for devices a reload adds) */
    this.health = new Map();
    /** @type {Map<string, object>} device → its Sparkplug state */
    this.devices = new Map();
    for (const m of model.devices.values()) this.devices.set(m.name, this._newDevice(m));
    /** @type {Map<string, object>} job → latest latency summary */
    this.latency = new Map();
    this._latencyJobs = new Set(model.latencyJobs);
    this._pendingLatency = new Set();
    this._ndataTimer = null;
    this.counts = { NBIRTH: 0, NDATA: 0, DBIRTH: 0, DDATA: 0, DDEATH: 0, rebirths: 0, refused: 0, commands: 0 };
  }

  /**
   * The NDEATH payload of a session: the will registered at CONNECT, and what stop() publishes.
   * @param {number} bdSeq
   * @returns {Buffer}
   */
  deathPayload (bdSeq) {
    return encodePayload({ timestamp: this._now(), metrics: [{ name: 'bdSeq', type: 'Int64', value: bdSeq }] });
  }

  /**
   * A session is up (connected, NCMD and DCMD subscribed): NBIRTH and the DBIRTHs.
   * @param {number} bdSeq the bdSeq of this connection's will
   */
  born (bdSeq) {
    this.bdSeq = bdSeq;
    this.online = true;
    this._birthAll();
  }

  /** The session is gone: whatever was born is dead (the broker publishes the will). */
  lost () {
    this.online = false;
    for (const d of this.devices.values()) this._unborn(d);
    clearTimeout(this._ndataTimer);
    this._ndataTimer = null;
  }

  /** Stops the timers. */
  close () {
    this.lost();
  }

  /**
   * NBIRTH and every DBIRTH again, in this session (an NCMD rebirth, a reload that changes the
   * node's metrics).
   * @param {string} reason
   * @returns {boolean} false when no session is up
   */
  rebirth (reason) {
    if (!this.online) return false;
    this.counts.rebirths++;
    this._birthAll();
    this.emit('rebirth', { reason });
    return true;
  }

  /**
   * A tag job's values (gateway 'values' event).
   * @param {string} job
   * @param {{values: Record<string, unknown>, quality?: Record<string, string>, ts: number, changed?: string[]}} v
   */
  onValues (job, v) {
    const name = this.model.jobDevice.get(job);
    if (name === undefined || !v || !v.values) return;
    const d = this.devices.get(name);
    if (d === undefined) return;
    const ts = typeof v.ts === 'number' ? v.ts : this._now();
    for (const [tag, value] of Object.entries(v.values)) {
      if (!d.defs.has(tag)) continue;
      d.tags.set(tag, { value, quality: v.quality && typeof v.quality[tag] === 'string' ? v.quality[tag] : 'ok', ts });
    }
    d.read = true;
    if (!this.online) return;
    if (!d.born) {
      if (this._alive(d)) this._dbirth(d);
      return;
    }
    for (const tag of Array.isArray(v.changed) ? v.changed : Object.keys(v.values)) if (d.defs.has(tag)) d.pending.add(tag);
    this._scheduleDdata(d);
  }

  /**
   * A device's health (gateway 'health' event): down or closed is its DDEATH, up its DBIRTH.
   *
   * The tags keep their latest reads across a death. They stay true: a tag job publishes every
   * change, failures included (a poll that fails turns its tags null with the error as quality),
   * so a value that was not replaced is what the device still holds. A device back before any of
   * its polls failed (a reconnect within one poll period) has nothing new to say, and its jobs
   * say nothing: its DBIRTH on 'up' carries those reads, not a null that no poll would correct.
   * @param {string} device
   * @param {{state: string}} h
   */
  onHealth (device, h) {
    if (!h || typeof h.state !== 'string') return;
    this.health.set(device, h.state);
    const d = this.devices.get(device);
    if (d === undefined) return;
    d.health = h.state;
    if (h.state === 'up') {
      if (this.online && !d.born && d.read) this._dbirth(d);
      return;
    }
    if (h.state !== 'down' && h.state !== 'closed') return;
    if (d.born && this.online) {
      // what was read before the death goes out first; then the death
      this._ddata(d);
      this._ddeath(d);
    }
    this._unborn(d);
  }

  /**
   * A job's latency summary (gateway 'summary' event), for the node metrics.
   * @param {string} job
   * @param {object} payload design.md latency payload
   */
  onSummary (job, payload) {
    if (!this._latencyJobs.has(job)) return;
    this.latency.set(job, payload);
    if (!this.online) return;
    this._pendingLatency.add(job);
    if (this._ndataTimer === null) {
      this._ndataTimer = setTimeout(() => { this._ndataTimer = null; this._ndata(); }, this.ndataWindowMs);
    }
  }

  /**
   * An NCMD or DCMD for this node.
   * @param {string} topic
   * @param {Buffer} bytes
   * @returns {Promise<void>} settles once the command is done (a DCMD's writes sent); never rejects
   */
  async onMessage (topic, bytes) {
    const t = parseTopic(topic);
    if (t === null || t.group !== this.group || t.node !== this.node) return;
    try {
      if (t.type === 'NCMD') this._ncmd(topic, bytes);
      else if (t.type === 'DCMD') await this._dcmd(topic, t.device, bytes);
    } catch (err) {
      if (err instanceof NinesError && err.code === 'NINES_ERR_SPARKPLUG') {
        this.counts.refused++;
        this.emit('refused', err);
      } else {
        this.emit('command-error', err instanceof NinesError ? err : new NinesError('NINES_ERR_SPARKPLUG', `command on ${topic} failed: ${err && err.message}`, { topic }));
      }
    }
  }

  /**
   * A reload: devices whose metric set changed are born again (DDEATH, then DBIRTH with what is
   * known), removed ones die, and a changed set of jobs (the node's latency metrics) is a rebirth.
   * @param {import('./model').NodeModel} model
   */
  setModel (model) {
    const old = this.model;
    this.model = model;
    const nodeChanged = JSON.stringify(old.latencyJobs) !== JSON.stringify(model.latencyJobs);
    this._latencyJobs = new Set(model.latencyJobs);
    for (const job of [...this.latency.keys()]) if (!this._latencyJobs.has(job)) { this.latency.delete(job); this._pendingLatency.delete(job); }
    const reborn = [];
    for (const [name, d] of [...this.devices]) {
      const m = model.devices.get(name);
      if (m !== undefined && sameMetrics(d.model, m)) { d.model = m; continue; }
      if (d.born && this.online) { this._ddata(d); this._ddeath(d); }
      this._unborn(d);
      if (m === undefined) { this.devices.delete(name); continue; }
      const next = this._newDevice(m);
      // tags that are still the same metric keep their latest read
      for (const [tag, state] of d.tags) {
        if (next.defs.has(tag) && JSON.stringify(next.defs.get(tag)) === JSON.stringify(d.defs.get(tag))) next.tags.set(tag, state);
      }
      next.read = d.read;
      this.devices.set(name, next);
      reborn.push(next);
    }
    for (const m of model.devices.values()) if (!this.devices.has(m.name)) this.devices.set(m.name, this._newDevice(m));
    if (!this.online) return;
    if (nodeChanged) this.rebirth('reload');
    else for (const d of reborn) if (this._alive(d) && d.read) this._dbirth(d);
  }

  /** @returns {{online: boolean, bdSeq: number|null, seq: number, devices: Record<string, boolean>, counts: object}} */
  get stats () {
    const devices = {};
    for (const [name, d] of this.devices) devices[name] = d.born;
    return { online: this.online, bdSeq: this.bdSeq, seq: this.seq, devices, counts: { ...this.counts } };
  }

  _newDevice (m) {
    const defs = new Map(m.metrics.map((def) => [def.name, def]));
    const tags = new Map(m.metrics.map((def) => [def.name, { value: null, quality: INITIAL, ts: this._now() }]));
    const health = this.health.get(m.name);
    return { model: m, defs, tags, born: false, read: false, health: health === undefined ? null : health, pending: new Set(), timer: null, lastMs: -Infinity };
  }

  /** Up by its health; before any health report, up when a tag was read */
  _alive (d) {
    if (d.health !== null) return d.health === 'up';
    for (const s of d.tags.values()) if (s.quality === 'ok') return true;
    return false;
  }

  _unborn (d) {
    d.born = false;
    d.pending.clear();
    clearTimeout(d.timer);
    d.timer = null;
  }

  _nextSeq () {
    this.seq = (this.seq + 1) % 256;
    return this.seq;
  }

  _send (type, topic, payload) {
    this.counts[type]++;
    this._publish(topic, encodePayload(payload));
  }

  _birthAll () {
    clearTimeout(this._ndataTimer);
    this._ndataTimer = null;
    this._pendingLatency.clear();
    for (const d of this.devices.values()) this._unborn(d);
    this.seq = 0;
    const metrics = [
      { name: 'bdSeq', type: 'Int64', value: this.bdSeq },
      { name: 'Node Control/Rebirth', type: 'Boolean', value: false }
    ];
    for (const job of this.model.latencyJobs) metrics.push(...latencyMetrics(job, this.latency.get(job) || null, true));
    this._send('NBIRTH', this.topics.nbirth, { timestamp: this._now(), seq: 0, metrics });
    for (const d of this.devices.values()) if (this._alive(d) && d.read) this._dbirth(d);
  }

  _dbirth (d) {
    this._unborn(d);
    const metrics = [];
    for (const def of d.model.metrics) metrics.push(tagMetric(def, d.tags.get(def.name), true));
    this._send('DBIRTH', this.topics.device('DBIRTH', d.model.name), { timestamp: this._now(), seq: this._nextSeq(), metrics });
    d.born = true;
    d.lastMs = this._mono();
  }

  _ddeath (d) {
    this._send('DDEATH', this.topics.device('DDEATH', d.model.name), { timestamp: this._now(), seq: this._nextSeq() });
    this._unborn(d);
  }

  _scheduleDdata (d) {
    if (d.pending.size === 0 || d.timer !== null) return;
    const wait = d.lastMs + d.model.minIntervalMs - this._mono();
    if (wait <= 0) { this._ddata(d); return; }
    d.timer = setTimeout(() => { d.timer = null; this._ddata(d); }, wait);
  }

  _ddata (d) {
    clearTimeout(d.timer);
    d.timer = null;
    if (!d.born || d.pending.size === 0) return;
    const metrics = [];
    // in birth order, whatever order the changes came in
    for (const def of d.model.metrics) if (d.pending.has(def.name)) metrics.push(tagMetric(def, d.tags.get(def.name), false));
    d.pending.clear();
    d.lastMs = this._mono();
    this._send('DDATA', this.topics.device('DDATA', d.model.name), { timestamp: this._now(), seq: this._nextSeq(), metrics });
  }

  _ndata () {
    if (!this.online || this._pendingLatency.size === 0) return;
    const metrics = [];
    for (const job of this.model.latencyJobs) if (this._pendingLatency.has(job)) metrics.push(...latencyMetrics(job, this.latency.get(job) || null, false));
    this._pendingLatency.clear();
    this._send('NDATA', this.topics.ndata, { timestamp: this._now(), seq: this._nextSeq(), metrics });
  }

  _refuse (topic, why, details = {}) {
    return new NinesError('NINES_ERR_SPARKPLUG', `command on ${topic} refused: ${why}; nothing was changed`, { topic, ...details });
  }

  /** Checks every metric of an NCMD before acting on any */
  _ncmd (topic, bytes) {
    const metrics = decodeCommand(bytes, topic);
    let rebirth = false;
    for (const m of metrics) {
      if (m.name !== 'Node Control/Rebirth') {
        throw this._refuse(topic, `unknown metric ${JSON.stringify(m.name)}; this edge node takes "Node Control/Rebirth" (Boolean)`, { metric: m.name });
      }
      if (m.type !== 'Boolean' || typeof m.value !== 'boolean') {
        throw this._refuse(topic, `"Node Control/Rebirth" must be a Boolean true or false; got datatype ${m.type || 'unknown'}${m.value === null ? ' (null)' : ''}`, { metric: m.name, datatype: m.type || null });
      }
      if (m.value) rebirth = true;
    }
    this.counts.commands++;
    if (rebirth) this.rebirth('NCMD');
  }

  /** Checks every metric of a DCMD, then writes them all through writeTags (which checks again) */
  async _dcmd (topic, device, bytes) {
    if (!this.writes) throw this._refuse(topic, 'writes by DCMD are off; set mqtt.sparkplug.writes: true (and allowWrites on the device)', { device });
    const d = this.devices.get(device);
    if (d === undefined) throw this._refuse(topic, `no Sparkplug device ${JSON.stringify(device)} on this edge node`, { device });
    if (!d.born) throw this._refuse(topic, `device ${JSON.stringify(device)} is not born (no DBIRTH since it came up)`, { device });
    const metrics = decodeCommand(bytes, topic);
    const values = {};
    for (const m of metrics) {
      const def = d.defs.get(m.name);
      if (def === undefined) throw this._refuse(topic, `device ${JSON.stringify(device)} has no metric ${JSON.stringify(m.name)}`, { device, metric: m.name });
      if (m.type !== def.datatype) throw this._refuse(topic, `metric ${JSON.stringify(m.name)} is ${def.datatype} (as in its DBIRTH); got ${m.type || 'an unknown datatype'}`, { device, metric: m.name, datatype: m.type || null });
      const value = commandValue(m.value);
      if (value === undefined) throw this._refuse(topic, `metric ${JSON.stringify(m.name)} has no value`, { device, metric: m.name });
      if (Object.prototype.hasOwnProperty.call(values, m.name)) throw this._refuse(topic, `metric ${JSON.stringify(m.name)} is named twice`, { device, metric: m.name });
      values[m.name] = value;
    }
    this.counts.commands++;
    let result;
    try {
      result = await this._writeTags(device, values);
    } catch (err) {
      // refused by writeTags (allowWrites off, a read-only tag, a value its tag cannot hold): nothing was written
      this.counts.refused++;
      this.emit('refused', err);
      return;
    }
    if (result && result.ok === false) {
      const failed = Object.entries(result.results || {}).filter(([, r]) => r && r.ok === false).map(([tag, r]) => `${tag}: ${r.skipped ? 'not sent' : r.code || 'failed'}`);
      this.emit('command-error', new NinesError('NINES_ERR_SPARKPLUG', `DCMD on ${topic}: ${failed.length} write(s) failed at the device (${failed.join(', ')})`, { topic, device, results: result.results }));
    }
  }
}

/**
 * A decoded command value as writeTags takes it: 64-bit integers as BigInt (or a number when
 * exact), the rest as decoded. undefined when there is none (is_null, or no value field).
 * @param {unknown} v
 * @returns {unknown}
 */
function commandValue (v) {
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'object' && typeof v.low === 'number' && typeof v.high === 'number') {
    const big = BigInt(v.toString());
    const n = Number(big);
    return Number.isSafeInteger(n) ? n : big;
  }
  return v;
}

module.exports = { EdgeNode, INITIAL };
