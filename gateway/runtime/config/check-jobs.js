'use strict';

const D = require('./defaults');
const JL = require('../../jobs/limits');
const { isMap, durationField, rateField } = require('./fields');
const { suggestKey } = require('./problems');
const { checkCommand, checkGenerator, checkOp } = require('./deep-check');
const { checkJobTags } = require('./check-tags');
const { specProblem } = require('./spec-paths');
const { buildJobSpec } = require('../../jobs/spec');

/**
 * The `jobs` list as written → the job specs that run, built by jobs/spec.js (buildJobSpec), the one
 * place a job is defaulted and checked whoever builds it (this config, a Node-RED poll node, the
 * probe). What is checked here is what only the config has: names unique across the list, a device
 * that is defined (with a guess when misspelt), one operation per job in the protocol of its device,
 * tag groups by name, values as written, a device that allows writes. A builder's refusal is
 * reported at the field as written (`ratePerSec` at `jobs[i].rate`).
 */

const OP_KINDS = ['command', 'generator', 'read', 'write', 'tags'];

const ASCII_KINDS = ['command', 'generator'];

/**
 * `values` as written → the builder's {mode, deadband, n, minIntervalMs}; the mode's default (and
 * the rule that a write job publishes none) are the builder's.
 * @returns {{mode?: string, deadband: number, n: number, minIntervalMs: number}}
 */
function checkValues (problems, segs, raw) {
  const spec = typeof raw === 'string' ? { mode: raw } : isMap(raw) ? raw : {};
  const mode = JL.VALUE_MODES.includes(spec.mode) ? spec.mode : undefined;
  // Field combinations only make sense once the mode itself is right
  if (mode !== undefined) {
    if (spec.deadband !== undefined && mode !== 'on-change') problems.add(segs.concat('deadband'), spec.deadband, 'is only used with mode: on-change');
    if (spec.n !== undefined && mode !== 'every') problems.add(segs.concat('n'), spec.n, 'is only used with mode: every');
    if (spec.maxRate !== undefined && mode === 'off') problems.add(segs.concat('maxRate'), spec.maxRate, 'has no effect with mode: off');
  }
  const maxRatePerSec = rateField(problems, segs.concat('maxRate'), spec.maxRate, {
    def: D.VALUES_MAX_RATE_PER_SEC,
    allowMax: false,
    maxRule: 'must be a finite rate such as "10/s": values are never published once per poll'
  });
  const out = {
    deadband: typeof spec.deadband === 'number' ? spec.deadband : 0,
    n: Number.isInteger(spec.n) ? spec.n : 1,
    minIntervalMs: 1000 / maxRatePerSec
  };
  if (mode !== undefined) out.mode = mode;
  return out;
}

/**
 * The tag groups and quirks a tag job's tags are checked with: its device's, or on a line its unit's.
 * A lookup only: whether the unit is right is the builder's to say (devices/line.js resolveUnit).
 * @returns {{owner: {name: string, path: string}, context: object, tags: object|null}|null} null: no such unit
 */
function tagScope (name, device, opts) {
  if (device.units === null) {
    return name === undefined ? { owner: { name: `device "${device.name}"`, path: `devices.${device.name}.tags` }, context: device, tags: opts.tags } : null;
  }
  const unit = device.units.find((u) => u.name === name);
  if (unit === undefined) return null;
  return {
    owner: { name: `unit "${unit.name}" of device "${device.name}"`, path: `devices.${device.name}.units.${unit.name}.tags` },
    context: { target: device.target, ...unit },
    tags: opts.units[unit.name]
  };
}

/** A job's spec field → its config key, where they differ */
const JOB_KEYS = Object.freeze({ ratePerSec: 'rate', policy: 'catchUp', durationMs: 'duration' });

/** The config path of a jobs/spec.js field of jobs[i] */
function jobPath (i, j, kind) {
  return (field) => {
    if (field === 'values.mode') return typeof j.values === 'string' ? ['jobs', i, 'values'] : ['jobs', i, 'values', 'mode'];
    if (field === 'operation') return ['jobs', i];
    const [head, ...rest] = field.split('.');
    if (OP_KINDS.includes(head)) return ['jobs', i, kind];
    return ['jobs', i, JOB_KEYS[head] || head, ...rest];
  };
}

/** A read/write block as the driver checks it (unitId only when given: else the job target's), fc vs value(s). */
function buildOp (problems, segs, kind, raw) {
  const op = { fc: raw.fc, address: raw.address };
  if (raw.unitId !== undefined) op.unitId = raw.unitId;
  if (kind === 'read') {
    op.quantity = raw.quantity;
    return op;
  }
  const single = raw.fc === 5 || raw.fc === 6;
  const want = single ? 'value' : 'values';
  const other = single ? 'values' : 'value';
  if (raw[other] !== undefined) problems.add(segs.concat(other), raw[other], `is not used with fc ${raw.fc}; use ${want}`);
  else if (raw[want] === undefined) problems.add(segs.concat(want), undefined, `is required with fc ${raw.fc}`);
  op[want] = raw[want];
  return op;
}

/**
 * Checks the `jobs` list and builds each job's spec.
 * @param {import('./problems').Problems} problems
 * @param {*} raw the list as written
 * @param {object} ctx
 * @param {Record<string, import('../../devices/spec').DeviceSpec>} ctx.devices the device specs built
 * @param {Record<string, import('./validate').DeviceOptions>} ctx.options allowWrites and tags of each
 * @param {string[]} ctx.names every device name written, valid or not
 * @param {number} ctx.intervalMs the gateway's summary interval
 * @returns {import('../../jobs/spec').JobSpec[]}
 */
function checkJobs (problems, raw, { devices, options, names: deviceNames, intervalMs }) {
  if (!Array.isArray(raw)) return [];
  const seen = new Map();
  const out = [];
  raw.forEach((j, i) => {
    if (!isMap(j)) return;
    const at = (...rest) => ['jobs', i, ...rest];

    if (typeof j.name === 'string') {
      if (seen.has(j.name)) problems.add(at('name'), j.name, `is already the name of jobs[${seen.get(j.name)}]; job names must be unique`);
      else seen.set(j.name, i);
    }

    if (typeof j.device === 'string' && j.device !== '' && !deviceNames.includes(j.device)) {
      const guess = suggestKey(j.device, deviceNames);
      problems.add(at('device'), j.device, `is not a device${guess ? ` (did you mean "${guess}"?)` : ''}; defined: ${deviceNames.join(', ') || 'none'}`);
    }
    // own properties only: a job naming device "constructor" must not find Object's
    const device = typeof j.device === 'string' && Object.hasOwn(devices, j.device) ? devices[j.device] : undefined;
    const opts = device ? options[j.device] : undefined;

    const kinds = OP_KINDS.filter((k) => j[k] !== undefined);
    if (kinds.length === 0) {
      problems.add(at(), undefined, 'needs one of command, generator, read, write or tags (what to ask the device)');
    } else if (kinds.length > 1) {
      problems.add(at(kinds[1]), j[kinds[1]], `cannot be combined with ${kinds[0]}; a job has exactly one of command, generator, read, write, tags`);
    }
    const kind = kinds[0];

    let operation = kind === undefined ? undefined : j[kind];
    if (kind === 'tags' && device && !problems.has(at(kind))) {
      // a unit that is not there is the builder's to report (at jobs[i].unit); its tags wait for it
      const scope = tagScope(j.unit, device, opts);
      if (scope !== null) operation = checkJobTags(problems, at('tags'), j.tags, scope.owner, scope.context, scope.tags);
    } else if (kind && device && !problems.has(at(kind))) {
      const ascii = device.target.protocol === 'ascii';
      if (ASCII_KINDS.includes(kind) && !ascii) {
        problems.add(at(kind), j[kind], `needs an ascii:// device; "${j.device}" is ${device.target.protocol}://`);
      } else if (!ASCII_KINDS.includes(kind) && ascii) {
        problems.add(at(kind), j[kind], `needs a modbus device; "${j.device}" is ascii://`);
      } else if (kind === 'command') {
        operation = checkCommand(problems, at('command'), j.command, device.target.checksum);
      } else if (kind === 'generator') {
        checkGenerator(problems, at('generator'), j.generator);
      } else {
        operation = buildOp(problems, at(kind), kind, j[kind]);
        if (!problems.has(at(kind))) operation = checkOp(problems, at(kind), operation);
      }
    }

    const durationMs = durationField(problems, at('duration'), j.duration, { def: undefined, minMs: 1 });
    const values = checkValues(problems, at('values'), j.values);
    // a lane is one request at a time: a device offers maxConnections × maxInflight lanes at once
    const lanes = device ? device.maxConnections * device.maxInflight : 0;
    if (device && Number.isInteger(j.connections) && j.connections > lanes) {
      problems.add(at('connections'), j.connections, lanes === device.maxConnections
        ? `must be at most devices.${j.device}.maxConnections (${device.maxConnections}): a job cannot use more connections than its device has`
        : `must be at most devices.${j.device}.maxConnections × maxInflight (${device.maxConnections} × ${device.maxInflight} = ${lanes}): a job cannot have more requests in flight than its device carries`);
    }
    // what the config says of the job is all right: the builder checks and defaults the rest, once
    if (!device || kind === undefined || operation === undefined || problems.has(at())) return;
    const input = { name: j.name, [kind]: operation, ratePerSec: j.rate, intervalMs, values };
    if (j.unit !== undefined) input.unit = j.unit;
    if (j.connections !== undefined) input.connections = j.connections;
    if (j.catchUp !== undefined) input.policy = j.catchUp;
    if (j.precision !== undefined) input.precision = j.precision;
    if (j.count !== undefined) input.count = j.count;
    if (durationMs !== undefined) input.durationMs = durationMs;
    let spec;
    try {
      spec = buildJobSpec(input, { device, purpose: 'poll' });
    } catch (err) {
      specProblem(problems, err, jobPath(i, j, kind), at(), (rule) => unitGuess(rule, err, j.unit, device));
      return;
    }
    // as in Node-RED: nothing moves a real actuator unless its device says it may
    if (spec.writes && !opts.allowWrites) {
      problems.add(at(kind), j[kind], `writes to device "${j.device}", which does not allow writes; set devices.${j.device}.allowWrites: true`);
      return;
    }
    out.push(spec);
  });
  return out;
}

/** A unit that is not on the line, with the config's guess at the one meant */
function unitGuess (rule, err, name, device) {
  if (err.details.field !== 'unit' || !device.units || typeof name !== 'string' || !/^is not a unit/.test(rule)) return rule;
  const guess = suggestKey(name, device.units.map((u) => u.name));
  return guess ? rule.replace(/;/, ` (did you mean "${guess}"?);`) : rule;
}

module.exports = { checkJobs, checkValues, OP_KINDS };
