'use strict';

const { EventEmitter } = require('node:events');
const { performance } = require('node:perf_hooks');
const { NinesError } = require('../../base/errors');
const { nodeTopics, parseTopic } = require('./topics');
const { encodePayload } = require('./codec');
const { tagMetric, latencyMetrics } = require('./metrics');
const { sameMetrics } = require('./model');
const { AliasMap } = require('./aliases');
const { buildTemplates, definitionMetric } = require('./templates');
const { stateTopics, parseState, PrimaryHostState } = require('./primary-host');
const { runNcmd, runDcmd } = require('./commands');
const { HOLD_REPLAY_WAIT_MS } = require('./defaults');

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
 *   with `writes` on; otherwise refused. Its metrics name tags, or give their aliases.
 * - Aliases (aliases.js): every birth metric has its name and its alias, every DATA metric its
 *   alias alone.
 * - With a primary host (`primaryHost`): nothing is born until its STATE says online, in each
 *   session; its STATE going offline ends the session ('host-offline': session.js publishes the
 *   NDEATH and connects again, with the next bdSeq). While the node is not born, DATA goes to the
 *   hold (hold.js), as historical; after the next births it is published, oldest first, before
 *   any live DATA. A held message of a device not born yet (a gateway restarted with a disk
 *   hold births before its first reads) waits for that device's DBIRTH, at most `replayWaitMs`;
 *   one of a device that is down, or that did not come in time, is dropped, counted. What is read
 *   while a replay is under way is held behind it (historical too), so no read is lost to waiting.
 * - With templates (templates.js): tag groups are template definitions in the NBIRTH and
 *   instances in the DBIRTHs; a DDATA carries an instance by its alias with the members that changed.
 *
 * Events: 'refused' (NinesError NINES_ERR_SPARKPLUG: a command refused), 'command-error'
 * (NinesError: an accepted DCMD whose write failed), 'rebirth' ({reason}), 'host-offline' (the
 * primary host's STATE went offline while the session was up), 'held-dropped' (n: held DATA lost
 * to the cap, or published to nobody because its device or metric is gone).
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
   * @param {string|null} [opts.primaryHost] the primary host's id: birth only while it is online
   * @param {import('./hold').HeldData|null} [opts.hold] where DATA waits while the node is not born
   *   (with a primary host)
   * @param {AliasMap} [opts.aliases] kept across restarts with a disk hold
   * @param {boolean} [opts.templates=false] tag groups as templates
   * @param {number} [opts.replayWaitMs] how long a replay waits for the DBIRTH of a held message's
   *   device that is not born yet (not read since a restart)
   */
  constructor ({ group, node, model, publish, writes = false, writeTags, ndataWindowMs = 250, now = Date.now, monotonic = () => performance.now(), primaryHost = null, hold = null, aliases = new AliasMap(), templates = false, replayWaitMs = HOLD_REPLAY_WAIT_MS }) {
    super();
    this.primaryHost = primaryHost;
    this.stateTopics = primaryHost === null ? [] : Object.values(stateTopics(primaryHost));
    this.host = new PrimaryHostState();
    this.hold = hold;
    this.aliases = aliases;
    this.templates = templates;
    /** the session is up (NCMD, DCMD and STATE subscribed); `online` says the node is born in it */
    this.connected = false;
    this._replaying = false;
    this.replayWaitMs = replayWaitMs;
    /** @type {{device: string, timer: NodeJS.Timeout}|null} the device whose DBIRTH a replay waits for */
    this._awaiting = null;
    /** the replay waited its limit: it waits for no further device until the next births */
    this._waitSpent = false;
    this.group = group;
    this.node = node;
    this.topics = nodeTopics(group, node);
    this.model = model;
    this._layout(model);
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
    this.counts = { NBIRTH: 0, NDATA: 0, DBIRTH: 0, DDATA: 0, DDEATH: 0, rebirths: 0, refused: 0, commands: 0, held: 0, replayed: 0, heldDropped: 0 };
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
    this.connected = true;
    // the host's retained STATE may come before the SUBACK (MQTT 3.1.1, 3.8.4): taken already then
    if (this.primaryHost === null || this.host.online) this._birthNow();
  }

  /** The session is gone: whatever was born is dead (the broker publishes the will). */
  lost () {
    this.connected = false;
    // each session learns the host's STATE anew, from the retained message its SUBSCRIBE brings
    this.host.online = false;
    this._allUnborn();
  }

  /** Nothing is born any more (the session is gone, or the host went away): DATA is held from now on. */
  _allUnborn () {
    this.online = false;
    this._replaying = false;
    this._stopWaiting();
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
    // a replay under way (on disk it follows the fsyncs, so it takes a while): what is read meanwhile
    // queues behind the history, each read kept, rather than waiting as the latest value only
    if (!this.online || (this._replaying && d.born)) {
      if (this.hold !== null) this._holdDevice(d, Array.isArray(v.changed) ? v.changed : Object.keys(v.values), ts);
      return;
    }
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
    // a replay waiting for its DBIRTH goes on without it (its held messages dropped, counted)
    if (this._awaiting !== null && this._awaiting.device === device) { this._stopWaiting(); this._replay(); }
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
    if (!this.online || this._replaying) {
      if (this.hold !== null) this._holdNode(job);
      return;
    }
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
    if (this.stateTopics.includes(topic)) { this._onState(bytes); return; }
    const t = parseTopic(topic);
    if (t === null || t.group !== this.group || t.node !== this.node) return;
    try {
      if (t.type === 'NCMD') runNcmd(this, topic, bytes);
      else if (t.type === 'DCMD') await runDcmd(this, topic, t.device, bytes);
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
    const defsBefore = JSON.stringify(this._definitions.map((d) => d.name));
    this._layout(model);
    const nodeChanged = JSON.stringify(old.latencyJobs) !== JSON.stringify(model.latencyJobs) || (this.templates && defsBefore !== JSON.stringify(this._definitions.map((d) => d.name)));
    this._latencyJobs = new Set(model.latencyJobs);
    for (const job of [...this.latency.keys()]) if (!this._latencyJobs.has(job)) { this.latency.delete(job); this._pendingLatency.delete(job); }
    const reborn = [];
    for (const [name, d] of [...this.devices]) {
      const m = model.devices.get(name);
      if (m !== undefined && sameMetrics(d.model, m)) { d.model = m; d.layout = this._deviceLayout(m); continue; }
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

  /**
   * @returns {{online: boolean, bdSeq: number|null, seq: number, devices: Record<string, boolean>, counts: object,
   *   primaryHost: {id: string, online: boolean}|null, held: {count: number, oldestAgeMs: number|null, dropped: number, disk: boolean}|null}}
   */
  get stats () {
    const devices = {};
    for (const [name, d] of this.devices) devices[name] = d.born;
    return {
      online: this.online,
      bdSeq: this.bdSeq,
      seq: this.seq,
      devices,
      counts: { ...this.counts },
      primaryHost: this.primaryHost === null ? null : { id: this.primaryHost, online: this.host.online },
      held: this.hold === null ? null : { count: this.hold.count, oldestAgeMs: this.hold.oldestAgeMs(this._now()), dropped: this.hold.dropped + this.counts.heldDropped, disk: this.hold.dir !== null }
    };
  }

  _newDevice (m) {
    const defs = new Map(m.metrics.map((def) => [def.name, def]));
    const tags = new Map(m.metrics.map((def) => [def.name, { value: null, quality: INITIAL, ts: this._now() }]));
    const health = this.health.get(m.name);
    return { model: m, defs, tags, layout: this._deviceLayout(m), born: false, read: false, health: health === undefined ? null : health, pending: new Set(), timer: null, lastMs: -Infinity, aliases: new Set() };
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

  /** NBIRTH and the DBIRTHs now, then what was held */
  _birthNow () {
    this.online = true;
    this._birthAll();
  }

  /** A STATE of the primary host */
  _onState (bytes) {
    const state = parseState(bytes);
    if (state === null || !this.host.take(state)) return;
    if (state.online) {
      if (this.connected && !this.online) this._birthNow();
      return;
    }
    // Sparkplug 3.0: the host went away, so the session ends (session.js: NDEATH, reconnect);
    // from now on DATA is held
    if (!this.connected) return;
    const wasBorn = this.online;
    this._allUnborn();
    this.emit('host-offline', { wasBorn });
  }

  _birthAll () {
    this._stopWaiting();
    this._waitSpent = false;
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
    for (const m of metrics) m.alias = this.aliases.aliasOf(null, m.name);
    this._nodeAliases = new Set(metrics.map((m) => m.alias));
    if (this.templates) for (const def of this._definitions) metrics.push(definitionMetric(def, this.aliases.aliasOf(null, `\u0002${def.name}`)));
    this._send('NBIRTH', this.topics.nbirth, { timestamp: this._now(), seq: 0, metrics });
    for (const d of this.devices.values()) if (this._alive(d) && d.read) this._dbirth(d);
    this.aliases.save();
    if (this.hold !== null && this.hold.count > 0) this._replay();
  }

  _dbirth (d) {
    this._unborn(d);
    const metrics = [];
    for (const def of d.layout.flat) metrics.push({ ...tagMetric(def, d.tags.get(def.name), true), alias: this._tagAlias(d, def.name) });
    for (const inst of d.layout.instances) {
      metrics.push({
        name: inst.name,
        alias: this._instanceAlias(d, inst.name),
        type: 'Template',
        timestamp: this._now(),
        value: { templateRef: inst.ref, isDefinition: false, metrics: inst.members.map((def) => tagMetric(def, d.tags.get(def.name), true)) }
      });
    }
    d.aliases = new Set(metrics.map((m) => m.alias));
    this._send('DBIRTH', this.topics.device('DBIRTH', d.model.name), { timestamp: this._now(), seq: this._nextSeq(), metrics });
    d.born = true;
    d.lastMs = this._mono();
    if (this._awaiting !== null && this._awaiting.device === d.model.name) { this._stopWaiting(); this._replay(); }
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
    // live DATA waits while held DATA goes out: a host reads every metric's history in order
    if (!d.born || d.pending.size === 0 || this._replaying) return;
    const metrics = this._dataMetrics(d, d.pending, false);
    d.pending.clear();
    d.lastMs = this._mono();
    this._send('DDATA', this.topics.device('DDATA', d.model.name), { timestamp: this._now(), seq: this._nextSeq(), metrics });
  }

  _ndata () {
    if (!this.online || this._pendingLatency.size === 0 || this._replaying) return;
    const metrics = this._nodeDataMetrics(this._pendingLatency, false);
    this._pendingLatency.clear();
    this._send('NDATA', this.topics.ndata, { timestamp: this._now(), seq: this._nextSeq(), metrics });
  }

  /**
   * The DATA metrics of some tags of a device, by alias: flat tags in birth order, then the template
   * instances that hold any of them, each with those members.
   * @param {object} d
   * @param {Set<string>} tags
   * @param {boolean} historical
   * @returns {object[]}
   */
  _dataMetrics (d, tags, historical) {
    const out = [];
    const mark = historical ? { isHistorical: true } : {};
    for (const def of d.layout.flat) {
      if (!tags.has(def.name)) continue;
      const m = { ...tagMetric(def, d.tags.get(def.name), false), alias: this._tagAlias(d, def.name), ...mark };
      delete m.name;
      out.push(m);
    }
    for (const inst of d.layout.instances) {
      const members = inst.members.filter((def) => tags.has(def.name));
      if (members.length === 0) continue;
      const ts = Math.max(...members.map((def) => d.tags.get(def.name).ts));
      // members are named within their instance: an alias belongs to a top-level metric (6.4.14)
      out.push({ alias: this._instanceAlias(d, inst.name), type: 'Template', timestamp: ts, ...mark, value: { templateRef: inst.ref, isDefinition: false, metrics: members.map((def) => ({ ...tagMetric(def, d.tags.get(def.name), false), ...mark })) } });
    }
    return out;
  }

  /** The latency DATA metrics of some jobs, by alias */
  _nodeDataMetrics (jobs, historical) {
    const out = [];
    for (const job of this.model.latencyJobs) {
      if (!jobs.has(job)) continue;
      for (const { name, ...m } of latencyMetrics(job, this.latency.get(job) || null, false)) {
        out.push({ ...m, alias: this.aliases.aliasOf(null, name), ...(historical ? { isHistorical: true } : {}) });
      }
    }
    return out;
  }

  _tagAlias (d, tag) {
    return this.aliases.aliasOf(d.model.name, tag);
  }

  /** An instance's alias is keyed apart from the tags (a tag may share its group's name) */
  _instanceAlias (d, inst) {
    return this.aliases.aliasOf(d.model.name, `\u0001${inst}`);
  }

  /** Holds the changed tags of a device, as historical DATA, while the node is not born */
  _holdDevice (d, changed, ts) {
    const tags = new Set(changed.filter((t) => d.defs.has(t)));
    if (tags.size === 0) return;
    this.counts.held++;
    this.hold.push(d.model.name, ts, this._dataMetrics(d, tags, true));
  }

  _holdNode (job) {
    const s = this.latency.get(job);
    const end = s && typeof s.end === 'string' ? Date.parse(s.end) : NaN;
    this.counts.held++;
    this.hold.push(null, Number.isFinite(end) ? end : this._now(), this._nodeDataMetrics(new Set([job]), true));
  }

  /**
   * Publishes what was held, oldest first, each with the next seq; then the live DATA that waited.
   * On disk, a record is handed out once durable: the rest follows when the hold says so
   * (resumeReplay). A held message of a device not born now, or with metrics its births no longer
   * have (a reload removed them), goes without them; what is left empty is counted as dropped.
   */
  _replay () {
    this._replaying = true;
    for (;;) {
      if (!this.online) { this._replaying = false; return; }
      const held = this.hold.next();
      if (held === undefined) break;
      const device = held.device === null ? null : this.devices.get(held.device);
      if (device && !device.born && this._mayBeBorn(device)) {
        // not read since this start: its DBIRTH comes with its first read (_dbirth goes on from here)
        this.hold.putBack(held);
        this._awaitBirth(device);
        return;
      }
      const known = held.device === null ? this._nodeAliases : device && device.born ? device.aliases : null;
      const metrics = known ? held.metrics.filter((m) => known.has(m.alias)) : [];
      if (metrics.length === 0) {
        this.counts.heldDropped++;
        this.emit('held-dropped', 1);
      } else if (device === null) {
        this.counts.replayed++;
        this._send('NDATA', this.topics.ndata, { timestamp: held.ts, seq: this._nextSeq(), metrics });
      } else {
        this.counts.replayed++;
        this._send('DDATA', this.topics.device('DDATA', held.device), { timestamp: held.ts, seq: this._nextSeq(), metrics });
      }
      this.hold.ack(held);
    }
    if (this.hold.count > 0) return; // on disk, not durable yet: resumeReplay() goes on
    this._replaying = false;
    this.hold.settled();
    for (const d of this.devices.values()) this._scheduleDdata(d);
    this._ndata();
  }

  /** The hold has more records to hand out (its disk caught up): go on with a replay under way */
  resumeReplay () {
    if (this._replaying && this.online && this._awaiting === null) this._replay();
  }

  /** A device not born may still be, in this session: not down, and the replay has time left to wait */
  _mayBeBorn (d) {
    return !this._waitSpent && d.health !== 'down' && d.health !== 'closed';
  }

  /** The replay waits for a device's DBIRTH, at most replayWaitMs over the whole replay */
  _awaitBirth (d) {
    if (this._awaiting !== null) return;
    const timer = setTimeout(() => {
      this._awaiting = null;
      this._waitSpent = true;
      if (this._replaying && this.online) this._replay();
    }, this.replayWaitMs);
    timer.unref?.();
    this._awaiting = { device: d.model.name, timer };
  }

  _stopWaiting () {
    if (this._awaiting === null) return;
    clearTimeout(this._awaiting.timer);
    this._awaiting = null;
  }

  /** Templates and every device's layout, for a model */
  _layout (model) {
    const t = this.templates ? buildTemplates(model) : { definitions: [], instances: new Map() };
    this._definitions = t.definitions;
    this._instances = t.instances;
  }

  /**
   * Which tags of a device are metrics of their own and which are members of template instances.
   * @returns {{flat: import('./model').MetricDef[], instances: import('./templates').TemplateInstance[]}}
   */
  _deviceLayout (m) {
    const instances = this.templates ? (this._instances.get(m.name) || []) : [];
    const inGroup = new Set(instances.flatMap((i) => i.members.map((def) => def.name)));
    return { flat: m.metrics.filter((def) => !inGroup.has(def.name)), instances };
  }
}

module.exports = { EdgeNode, INITIAL };
