'use strict';

const { NinesError, toNinesError } = require('../../base/errors');
const D = require('./defaults');
const { rawTextOf } = require('./raw-json');

/**
 * Writes by tag over MQTT (`mqtt.writes`, off by default): a client publishes
 *
 *   <prefix>/<gateway>/<device>/write          {"id": "42", "values": {"setpoint": 71.5, "pump_on": true}}
 *   <prefix>/<gateway>/<device>/<unit>/write   the same, to a unit of a line
 *
 * optionally with `"maxAgeMs": 500`, a maximum age of its own (only shorter than mqtt.writes.maxAge),
 * and the gateway answers every command exactly once, on the same topic plus `/result` (QoS 1, not
 * retained):
 *
 *   {"id": "42", "ok": true, "results": {"setpoint": {"ok": true}, "pump_on": {"ok": true}}}
 *   {"id": "43", "ok": false, "error": {"code": "NINES_ERR_INVALID_VALUE", "message": "…"}}   nothing written
 *
 * Every write goes through Gateway#writeTags: the device must allow writes, every value is checked
 * against its tag before anything is sent, and the writes go in the order given, stopping at the
 * first that fails. A payload that is not such an object is answered with NINES_ERR_INVALID_ARG and
 * writes nothing; both are answered on arrival, never queued.
 *
 * Commands of one device run one at a time, in the order they arrive, from a bounded queue: a command
 * that finds `queue` commands of its device waiting is refused at once (NINES_ERR_WRITE_BACKLOG), and
 * one that could not start within its maximum age of its arrival is refused when its turn comes
 * (NINES_ERR_WRITE_EXPIRED). The age is also each request's latest start on the device
 * (notAfter, devices/device.js), so no write of a command starts late, not even one behind the
 * device's own polls. Nothing is written late, and the backlog of a flood is bounded in count, in
 * bytes (MAX_PAYLOAD_BYTES each) and in time.
 */

/** Largest write command read (bytes): a thousand tags with their values */
const MAX_PAYLOAD_BYTES = 64 * 1024;
const ID_MAX = 128;
const KEYS = ['id', 'values', 'maxAgeMs'];

/** @returns {number} epoch ms on the clock devices compare notAfter with (monotonic in this thread) */
const nowMs = () => performance.timeOrigin + performance.now();

/**
 * @param {import('../gateway').Gateway} gw a started gateway (its publisher up)
 * @param {{prefix: string, gateway: string, queueMax?: number, maxAgeMs?: number}} opts where the topics
 *   live; commands that may wait per device; the most time from arrival to a write's start (ms)
 * @returns {{stats: {received: number, written: number, failed: number, unknown: number, invalid: number,
 *   backlog: number, expired: number, queued: number}, stop: () => void}} every command received ends in
 *   exactly one of written, failed (not written, or written in part: a device's refusal, a gateway
 *   stopping), unknown, invalid, backlog or expired, or is queued (or running) now
 */
function startWriteCommands (gw, { prefix, gateway, queueMax = D.MQTT_WRITES_QUEUE_MAX, maxAgeMs = D.MQTT_WRITES_MAX_AGE_MS }) {
  const stats = { received: 0, written: 0, failed: 0, unknown: 0, invalid: 0, backlog: 0, expired: 0, queued: 0 };
  const base = `${prefix}/${gateway}/`;
  /** @type {Map<string, {waiting: object[], running: boolean}>} per device */
  const devices = new Map();
  let stopped = false;
  const status = statusThrottle(gw, stats);

  const answer = (c, body, outcome) => {
    stats[outcome]++;
    status.changed();
    gw.publisher.reply(`${c.topic}/result`, { id: c.id, ...body });
  };
  const refuse = (c, err, outcome) => {
    answer(c, { ok: false, error: { code: err.code, message: err.message } }, outcome);
    gw.emit('job-error', null, err);
  };

  const drain = async (device, q) => {
    q.running = true;
    while (q.waiting.length !== 0 && !stopped) {
      const c = q.waiting.shift();
      stats.queued--;
      const waited = nowMs() - c.arrivedMs;
      if (nowMs() > c.notAfter) {
        refuse(c, new NinesError('NINES_ERR_WRITE_EXPIRED', `write command ${JSON.stringify(c.id)} not written: it waited ${Math.round(waited)} ms for device "${device}", past its maximum age of ${c.maxAgeMs} ms`, { device, id: c.id, waitedMs: Math.round(waited), maxAgeMs: c.maxAgeMs }), 'expired');
        continue;
      }
      try {
        const out = await gw.writeTags(device, c.values, c.unit, { notAfter: c.notAfter, rawText: c.rawText });
        answer(c, { ok: out.ok, results: out.results }, outcomeOf(out));
      } catch (err) {
        // refused by a reload since it arrived (device gone, tag changed): nothing written
        refuse(c, toNinesError(err, 'NINES_ERR_INVALID_ARG'), 'invalid');
      }
    }
    q.running = false;
    if (q.waiting.length === 0 && devices.get(device) === q) devices.delete(device);
  };

  const onMessage = (topic, payload) => {
    if (stopped) return;
    const levels = topic.slice(base.length).split('/');
    // <device>/write or <device>/<unit>/write; results (…/write/result) are ours, not commands
    if (levels[levels.length - 1] !== 'write' || levels.length < 2 || levels.length > 3) return;
    const arrivedMs = nowMs();
    const device = levels[0];
    const unit = levels.length === 3 ? levels[1] : undefined;
    stats.received++;
    const c = { topic, id: null, arrivedMs };
    try {
      const cmd = parse(payload, maxAgeMs);
      Object.assign(c, cmd, { unit, notAfter: arrivedMs + cmd.maxAgeMs });
      // checked on arrival, so a bad command is answered at once and never holds a place in the queue
      gw.checkTagWrites(device, cmd.values, unit, { rawText: cmd.rawText });
    } catch (err) {
      if (c.id === null && err && typeof err.id === 'string') c.id = err.id; // parse knew it before it refused
      refuse(c, toNinesError(err, 'NINES_ERR_INVALID_ARG'), 'invalid');
      return;
    }
    let q = devices.get(device);
    if (q === undefined) { q = { waiting: [], running: false }; devices.set(device, q); }
    if (q.waiting.length >= queueMax) {
      refuse(c, new NinesError('NINES_ERR_WRITE_BACKLOG', `write command ${JSON.stringify(c.id)} not written: ${q.waiting.length} commands already wait for device "${device}" (mqtt.writes.queue: ${queueMax})`, { device, id: c.id, queueMax }), 'backlog');
      return;
    }
    q.waiting.push(c);
    stats.queued++;
    if (!q.running) drain(device, q);
  };
  gw.publisher.subscribe(`${base}+/write`, onMessage);
  gw.publisher.subscribe(`${base}+/+/write`, onMessage);

  /** Answers what still waits (not written) and takes no more commands: the gateway is stopping. */
  const stop = () => {
    if (stopped) return;
    stopped = true;
    for (const [device, q] of devices) {
      for (const c of q.waiting.splice(0)) {
        stats.queued--;
        refuse(c, new NinesError('NINES_ERR_CLOSED', `write command ${JSON.stringify(c.id)} not written: the gateway is stopping`, { device, id: c.id }), 'failed');
      }
    }
    status.flush();
  };
  return { stats, stop };
}

/** @returns {'written'|'failed'|'unknown'|'expired'} how a command that ran ended */
function outcomeOf (out) {
  if (out.ok) return 'written';
  const codes = Object.values(out.results).map((r) => r.code);
  if (codes.includes('NINES_ERR_WRITE_UNKNOWN')) return 'unknown';
  // its first write could not start within its age (devices/device.js notAfter): nothing written
  if (codes[0] === 'NINES_ERR_WRITE_EXPIRED') return 'expired';
  return 'failed';
}

/**
 * Puts the counters in the retained status, at most once per MQTT_WRITES_STATUS_MIN_INTERVAL_MS
 * while they change: a flood must not become a flood of status messages.
 */
function statusThrottle (gw, stats) {
  let timer = null;
  let dirty = false;
  const flush = () => {
    if (timer !== null) { clearTimeout(timer); timer = null; }
    dirty = false;
    gw.publisher.setWrites({ ...stats });
  };
  const changed = () => {
    dirty = true;
    if (timer !== null) return;
    timer = setTimeout(() => { timer = null; if (dirty) flush(); }, D.MQTT_WRITES_STATUS_MIN_INTERVAL_MS);
    timer.unref();
  };
  gw.publisher.setWrites({ ...stats });
  return { changed, flush };
}

/**
 * @param {Buffer} payload
 * @param {number} maxAgeMs the configured maximum age: a command may only ask for less
 * @returns {{id: string|null, values: object, maxAgeMs: number, rawText: (tag: string) => string|undefined}}
 * @throws {NinesError} NINES_ERR_INVALID_ARG
 */
function parse (payload, maxAgeMs) {
  if (payload.length > MAX_PAYLOAD_BYTES) throw new NinesError('NINES_ERR_INVALID_ARG', `a write command may hold at most ${MAX_PAYLOAD_BYTES} bytes; got ${payload.length}`, { field: 'payload' });
  const text = payload.toString('utf8');
  let body;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `a write command must be JSON such as {"id": "1", "values": {"setpoint": 71.5}}: ${err.message}`, { field: 'payload' });
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new NinesError('NINES_ERR_INVALID_ARG', 'a write command must be an object {"id", "values"}', { field: 'payload' });
  if (body.id !== undefined && (typeof body.id !== 'string' || body.id.length > ID_MAX)) throw new NinesError('NINES_ERR_INVALID_ARG', `id must be a string of at most ${ID_MAX} characters`, { field: 'id' });
  const id = body.id === undefined ? null : body.id;
  for (const key of Object.keys(body)) {
    if (!KEYS.includes(key)) throw Object.assign(new NinesError('NINES_ERR_INVALID_ARG', `a write command takes id, values and maxAgeMs; got ${JSON.stringify(key)}`, { field: key }), { id });
  }
  let age = maxAgeMs;
  if (body.maxAgeMs !== undefined) {
    const m = body.maxAgeMs;
    if (!Number.isInteger(m) || m < 1 || m > maxAgeMs) {
      throw Object.assign(new NinesError('NINES_ERR_INVALID_ARG', `maxAgeMs must be an integer from 1 to ${maxAgeMs} (mqtt.writes.maxAge: a command may only shorten it); got ${rawTextOf(text, [])('maxAgeMs')}`, { field: 'maxAgeMs', value: m }), { id });
    }
    age = m;
  }
  return { id, values: body.values, maxAgeMs: age, rawText: rawTextOf(text, ['values']) };
}

module.exports = { startWriteCommands, MAX_PAYLOAD_BYTES };
