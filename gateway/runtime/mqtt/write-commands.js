'use strict';

const { NinesError, toNinesError } = require('../../base/errors');

/**
 * Writes by tag over MQTT (`mqtt.writes: true`, off by default): a client publishes
 *
 *   <prefix>/<gateway>/<device>/write          {"id": "42", "values": {"setpoint": 71.5, "pump_on": true}}
 *   <prefix>/<gateway>/<device>/<unit>/write   the same, to a unit of a line
 *
 * and the gateway answers on the same topic plus `/result` (QoS 1, not retained):
 *
 *   {"id": "42", "ok": true, "results": {"setpoint": {"ok": true}, "pump_on": {"ok": true}}}
 *   {"id": "43", "ok": false, "error": {"code": "NINES_ERR_INVALID_VALUE", "message": "…"}}   nothing written
 *
 * Every write goes through Gateway#writeTags: the device must allow writes, every value is checked
 * against its tag before anything is sent, and the writes go in the order given, stopping at the
 * first that fails. A payload that is not such an object is answered with NINES_ERR_INVALID_ARG and
 * writes nothing. Writes of one device run one at a time, in the order they arrive.
 */

/** Largest write command read (bytes): a thousand tags with their values */
const MAX_PAYLOAD_BYTES = 64 * 1024;
const ID_MAX = 128;

/**
 * @param {import('../gateway').Gateway} gw a started gateway (its publisher up)
 * @param {{prefix: string, gateway: string}} where the topics live
 * @returns {{stats: {received: number, refused: number, written: number, failed: number}}}
 */
function startWriteCommands (gw, { prefix, gateway }) {
  const stats = { received: 0, refused: 0, written: 0, failed: 0 };
  const base = `${prefix}/${gateway}/`;
  // one write at a time per device: a second command waits for the first, in arrival order
  const chains = new Map();
  const onMessage = (topic, payload) => {
    const levels = topic.slice(base.length).split('/');
    // <device>/write or <device>/<unit>/write; results (…/write/result) are ours, not commands
    if (levels[levels.length - 1] !== 'write' || levels.length < 2 || levels.length > 3) return;
    const device = levels[0];
    const unit = levels.length === 3 ? levels[1] : undefined;
    stats.received++;
    const prev = chains.get(device) || Promise.resolve();
    const next = prev.then(() => handle(gw, topic, device, unit, payload, stats));
    chains.set(device, next);
    next.finally(() => { if (chains.get(device) === next) chains.delete(device); });
  };
  gw.publisher.subscribe(`${base}+/write`, onMessage);
  gw.publisher.subscribe(`${base}+/+/write`, onMessage);
  return { stats };
}

/** Runs one command and answers it. Never throws. */
async function handle (gw, topic, device, unit, payload, stats) {
  let id = null;
  let answer;
  try {
    const cmd = parse(payload);
    id = cmd.id;
    const out = await gw.writeTags(device, cmd.values, unit);
    answer = { id, ok: out.ok, results: out.results };
    if (out.ok) stats.written++; else stats.failed++;
  } catch (err) {
    const e = toNinesError(err, 'NINES_ERR_INVALID_ARG');
    stats.refused++;
    answer = { id, ok: false, error: { code: e.code, message: e.message } };
    gw.emit('job-error', null, e);
  }
  gw.publisher.reply(`${topic}/result`, answer);
}

/**
 * @param {Buffer} payload
 * @returns {{id: string|null, values: object}}
 * @throws {NinesError} NINES_ERR_INVALID_ARG
 */
function parse (payload) {
  if (payload.length > MAX_PAYLOAD_BYTES) throw new NinesError('NINES_ERR_INVALID_ARG', `a write command may hold at most ${MAX_PAYLOAD_BYTES} bytes; got ${payload.length}`, { field: 'payload' });
  let body;
  try {
    body = JSON.parse(payload.toString('utf8'));
  } catch (err) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `a write command must be JSON such as {"id": "1", "values": {"setpoint": 71.5}}: ${err.message}`, { field: 'payload' });
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new NinesError('NINES_ERR_INVALID_ARG', 'a write command must be an object {"id", "values"}', { field: 'payload' });
  for (const key of Object.keys(body)) {
    if (key !== 'id' && key !== 'values') throw new NinesError('NINES_ERR_INVALID_ARG', `a write command takes id and values; got ${JSON.stringify(key)}`, { field: key });
  }
  if (body.id !== undefined && (typeof body.id !== 'string' || body.id.length > ID_MAX)) throw new NinesError('NINES_ERR_INVALID_ARG', `id must be a string of at most ${ID_MAX} characters`, { field: 'id' });
  return { id: body.id === undefined ? null : body.id, values: body.values };
}

module.exports = { startWriteCommands, MAX_PAYLOAD_BYTES };
