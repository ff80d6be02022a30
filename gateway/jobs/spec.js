'use strict';

const { NinesError } = require('../base/errors');
const { parseRate } = require('../base/quantities');
const { parseTarget } = require('../drivers/target');
const { resolveUnit, unitTarget } = require('../devices/line');
const { ms } = require('../devices/fields');
const { isName, NAME_RULE } = require('../base/names');
const { createOpSource } = require('./op-source');
const J = require('./limits');

/**
 * The one module that builds and validates a job spec, whoever asks: the gateway's YAML (runtime),
 * the Node-RED poll node, and the probe and sweep. Everything is checked here, once, at the edge;
 * the result is plain data (it crosses to a worker thread with postMessage) that the job, the
 * scheduler and the worker trust as it is. The target inside stays parsed: it is never parsed again.
 *
 * Defaults differ by purpose, and the caller names the purpose (limits.js PURPOSE_POLICY): `poll`
 * (gateway jobs, poll nodes) skips missed slots after a stall; `measure` (probe, sweep) catches up
 * capped. Every default and limit is in limits.js; the rate is read once, here, whatever form it
 * comes in ("1000/s", "max", a number per second).
 */

const { POLICIES, PURPOSE_POLICY, PRECISIONS, PURPOSE_PRECISION, VALUE_MODES } = J;
const OP_KEYS = Object.freeze(['command', 'generator', 'read', 'write', 'tags']);

/**
 * @typedef {object} JobSpec
 * @property {string} name unique key of the job in its pool (a topic level in the gateway)
 * @property {string} label the name summaries carry (Node-RED: the node's name)
 * @property {string|null} device name of the device whose connections the job uses
 * @property {string|null} unit the unit of a line the job polls (its target then carries the unit's id)
 * @property {import('../drivers/target').Target} target the device's parsed target
 * @property {'command'|'generator'|'read'|'write'|'tags'} kind
 * @property {string|object|null} operation the command, generator name or Modbus op as given
 *   (validated); null for tags
 * @property {string} op the operation's short label (`@AA`, `fc3-0+10`, `tags-12`)
 * @property {import('../tags/spec').Tag[]|null} tags the tags a tag job reads (checked), else null
 * @property {import('../tags/plan').Block[]|null} plan the reads of one poll of the tags (coalesced), else null
 * @property {boolean} writes the operation changes the device (outputs, registers)
 * @property {number} ratePerSec Infinity for closed loop
 * @property {number} connections lanes: requests the job may have in flight at once (≤ the device's connections)
 * @property {'burst'|'capped'|'skip'|'closed'} policy
 * @property {'spin'|'sleep'} precision how the job waits for each intended time (limits.js PURPOSE_PRECISION)
 * @property {number|undefined} count
 * @property {number|undefined} durationMs
 * @property {number} intervalMs summary interval
 * @property {number|undefined} timeoutMs per request, ms; undefined = the device's
 * @property {{mode: string, deadband: number, n: number, minIntervalMs: number}} values
 * @property {object|null} decode register decoding (values/registers.js options), applied in the worker
 */

/**
 * Builds and checks a job spec.
 * @param {object} input {name, label?, device?, unit?, target?, command|generator|read|write|tags, ratePerSec?, connections?,
 *   policy?, precision?, count?, durationMs?, intervalMs?, timeoutMs?, values?, decode?}; ratePerSec is a number per
 *   second, Infinity or "max" (closed loop, the default), or a rate as written ("1000/s", "60/min", "10Hz")
 * @param {object} [ctx]
 * @param {{name: string, target: object, maxConnections: number}} [ctx.device] the device the job runs on
 *   (built by devices/spec.js); its target is the job's target
 * @param {'poll'|'measure'} [ctx.purpose='poll'] which defaults apply
 * @returns {JobSpec}
 * @throws {NinesError} NINES_ERR_INVALID_ARG / NINES_ERR_INVALID_OP / NINES_ERR_INVALID_TARGET naming the field
 */
function buildJobSpec (input, { device, purpose = 'poll' } = {}) {
  if (!input || typeof input !== 'object') throw invalid('job', input, 'must be an object');
  if (!PURPOSE_POLICY[purpose]) throw invalid('purpose', purpose, 'must be "poll" or "measure"');
  const name = input.name;
  if (!isName(name)) throw invalid('name', name, NAME_RULE);
  // the one place a job's unit is resolved (devices/line.js), whoever builds the job
  const unit = resolveUnit(input.unit, device);
  // a unit of a line: the job's requests go to its unit id (the device's target names the line)
  const target = device ? (unit === null ? device.target : unitTarget(device.target, unit.unitId)) : parseTarget(input.target);
  // Each lane is strictly sequential: a device offers maxConnections × maxInflight of them at once
  const maxLanes = device ? device.maxConnections * (device.maxInflight || 1) : J.MAX_CONNECTIONS;

  const kinds = OP_KEYS.filter((k) => input[k] !== undefined);
  if (kinds.length !== 1) throw invalid('operation', kinds, 'give exactly one of command, generator, read, write or tags');
  const kind = kinds[0];
  let tagJob = null;
  let label;
  if (kind === 'tags') {
    tagJob = buildTagJob(input.tags, target, unit === null ? device : unit);
    label = `tags-${tagJob.tags.length}`;
  } else {
    label = createOpSource({ [kind]: input[kind] }, target).label; // throws the driver's own coded error
  }

  // the one default and the one check of a rate, whichever edge it came from (YAML, Node-RED, a CLI flag)
  const ratePerSec = input.ratePerSec === undefined ? J.RATE_PER_SEC : readRate(input.ratePerSec);
  const connections = input.connections === undefined ? J.CONNECTIONS : input.connections;
  if (!Number.isInteger(connections) || connections < 1 || connections > maxLanes) {
    throw invalid('connections', connections, `must be an integer from 1 to ${maxLanes}${device ? ` (the connections × requests in flight of device ${device.name})` : ''}`);
  }
  const policy = input.policy === undefined ? PURPOSE_POLICY[purpose] : input.policy;
  if (!POLICIES.includes(policy)) throw invalid('policy', policy, `must be one of ${POLICIES.join(', ')}`);
  const precision = input.precision === undefined ? PURPOSE_PRECISION[purpose] : input.precision;
  if (!PRECISIONS.includes(precision)) throw invalid('precision', precision, `must be one of ${PRECISIONS.join(', ')}`);
  const writes = isWrite(kind, input[kind], target);
  // a write that missed its slot must never go out late: a setpoint replayed after an outage
  // moves a real actuator at the wrong time
  if (writes && purpose === 'poll' && policy !== 'skip' && ratePerSec !== Infinity) {
    throw invalid('policy', policy, 'must be skip for a job that writes: a missed write is never sent late');
  }
  optionalInt(input.count, 'count', 0);
  optionalNumber(input.durationMs, 'durationMs', 0);
  if (input.count !== undefined && input.durationMs !== undefined) throw invalid('durationMs', input.durationMs, 'cannot be combined with count');
  // a job's own request timeout takes the device timeout's one rule and ceiling (devices/limits.js)
  const timeoutMs = ms(input.timeoutMs, 'timeoutMs', undefined);
  const intervalMs = input.intervalMs === undefined ? J.INTERVAL_MS : input.intervalMs;
  optionalNumber(intervalMs, 'intervalMs', 1);

  return {
    name,
    label: typeof input.label === 'string' && input.label !== '' ? input.label : name,
    device: device ? device.name : (typeof input.device === 'string' ? input.device : null),
    unit: unit === null ? null : unit.name,
    target,
    kind,
    operation: kind === 'tags' ? null : input[kind],
    op: label,
    tags: tagJob === null ? null : tagJob.tags,
    plan: tagJob === null ? null : tagJob.plan,
    writes,
    ratePerSec,
    connections,
    policy: ratePerSec === Infinity ? 'closed' : policy,
    precision,
    count: input.count,
    durationMs: input.durationMs,
    intervalMs,
    timeoutMs,
    values: buildValues(input.values, kind),
    decode: buildDecode(input.decode, kind, input[kind])
  };
}

/**
 * Whether the operation changes the device: a Modbus write, or an ASCII command or generator that
 * sets outputs (classified by the driver's own command table).
 */
function isWrite (kind, operation, target) {
  if (kind === 'write') return true;
  if (kind === 'read' || kind === 'tags' || target.protocol !== 'ascii') return false;
  const ascii = require('../drivers/ascii');
  const command = kind === 'command' ? operation : ascii.createGenerator(operation, { address: target.address, random: () => 0.5 })();
  return WRITE_KINDS.includes(ascii.classifyCommand(command));
}

const WRITE_KINDS = Object.freeze(['write-digital', 'analog-write']);

/**
 * @param {unknown} v a rate as any edge gives it
 * @returns {number} per second, Infinity for closed loop
 * @throws {NinesError} NINES_ERR_INVALID_ARG with field ratePerSec, the forms a rate takes, and
 *   details.rule (base/quantities.js parseRate, the one reader of a rate)
 */
function readRate (v) {
  return parseRate(v, 'ratePerSec');
}

/**
 * The tags of a tag job, checked against the device (tags/spec.js), and the reads of one poll,
 * coalesced under the device's limits (tags/plan.js).
 * @returns {{tags: import('../tags/spec').Tag[], plan: import('../tags/plan').Block[]}}
 */
function buildTagJob (raw, target, device) {
  const { buildTags, planReads, tagContext } = require('../tags');
  const ctx = tagContext(target, device);
  const tags = buildTags(raw, ctx, 'tags');
  return { tags, plan: planReads(tags, ctx) };
}

/** The value gate's settings; a write job publishes no values; a tag job publishes its values on change unless told otherwise. */
function buildValues (raw, kind) {
  const v = raw === undefined ? { mode: kind === 'tags' ? 'on-change' : 'off' } : raw;
  if (!v || typeof v !== 'object') throw invalid('values', raw, 'must be an object {mode, deadband, n, minIntervalMs}');
  const mode = v.mode === undefined ? (kind === 'tags' ? 'on-change' : 'off') : v.mode;
  if (!VALUE_MODES.includes(mode)) throw invalid('values.mode', mode, `must be one of ${VALUE_MODES.join(', ')}`);
  if (mode !== 'off' && kind === 'write') throw invalid('values.mode', mode, 'must be off for a write job: a write returns no values');
  const deadband = v.deadband === undefined ? 0 : v.deadband;
  optionalNumber(deadband, 'values.deadband', 0);
  const n = v.n === undefined ? 1 : v.n;
  optionalInt(n, 'values.n', 1);
  const minIntervalMs = v.minIntervalMs === undefined ? 0 : v.minIntervalMs;
  optionalNumber(minIntervalMs, 'values.minIntervalMs', 0);
  return { mode, deadband, n, minIntervalMs };
}

/** Register decoding runs in the worker, before the value gate, so the deadband sees engineering values. */
function buildDecode (raw, kind, op) {
  if (raw === undefined || raw === null) return null;
  if (kind !== 'read') throw invalid('decode', raw, 'applies to Modbus reads only');
  const { normalizeOptions, registersFor } = require('../values/registers');
  const d = normalizeOptions(raw);
  const fc = typeof op === 'object' ? op.fc : Number(String(op).split(':')[0]);
  if (fc !== 3 && fc !== 4) throw invalid('decode', raw, 'applies to register reads (FC3, FC4) only');
  const quantity = typeof op === 'object' ? op.quantity : Number(String(op).split(':')[2]);
  const per = registersFor(d.type, 1);
  if (!['bool', 'string'].includes(d.type) && quantity % per !== 0) {
    throw invalid('decode.type', d.type, `needs a quantity that is a multiple of ${per} registers; got ${quantity}`);
  }
  return d;
}

function optionalInt (v, field, min) {
  if (v !== undefined && !(Number.isInteger(v) && v >= min)) throw invalid(field, v, `must be a whole number ≥ ${min}`);
}

function optionalNumber (v, field, min) {
  if (v !== undefined && !(typeof v === 'number' && Number.isFinite(v) && v >= min)) throw invalid(field, v, `must be a number ≥ ${min}`);
}

function invalid (field, value, rule) {
  return new NinesError('NINES_ERR_INVALID_ARG', `job ${field} ${rule}; got ${JSON.stringify(value)}`, { field, value, rule });
}

module.exports = { buildJobSpec, isWrite, POLICIES, PURPOSE_POLICY };
