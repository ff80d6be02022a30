'use strict';

const D = require('./defaults');
const { isMap, durationField, rateField } = require('./fields');
const { suggestKey } = require('./problems');
const { checkCommand, checkGenerator, checkOp } = require('./deep-check');
const { checkJobTags } = require('./check-tags');

/**
 * @typedef {object} ValuesConfig
 * @property {'off'|'on-change'|'every'} mode
 * @property {number} deadband with on-change: a change smaller than this is not published (0 = any change)
 * @property {number} n with every: publish every n-th reply
 * @property {number} maxRatePerSec at most this many value messages per second
 * @property {number} minIntervalMs 1000 / maxRatePerSec
 */

/**
 * @typedef {object} JobConfig
 * @property {string} name topic level of the job
 * @property {string} device key into config.devices
 * @property {string|null} unit the unit of a line it polls (devices.<device>.units), else null
 * @property {'command'|'generator'|'read'|'write'|'tags'} kind which operation the job runs
 * @property {string} [command] ASCII command (kind command)
 * @property {string} [generator] generator name (kind generator)
 * @property {object} [op] Modbus op {fc, address, quantity | value | values, unitId} (kind read/write)
 * @property {import('../../tags/spec').Tag[]} [tags] the tags it reads, checked (kind tags)
 * @property {number} ratePerSec requests per second, Infinity for closed loop ("max")
 * @property {number} connections 1-64
 * @property {'burst'|'capped'|'skip'} catchUp
 * @property {number|null} count requests, then the job ends (null: no limit)
 * @property {number|null} durationMs run time, then the job ends (null: no limit)
 * @property {ValuesConfig} values
 */

const OP_KINDS = ['command', 'generator', 'read', 'write', 'tags'];

/** Whether the operation writes, by the job-spec module's own rule (one definition of a write). */
function writesTo (kind, operation, target) {
  try {
    return require('../../jobs/spec').isWrite(kind, operation, target);
  } catch {
    return false; // an operation that does not build is already a problem at its own field
  }
}
const ASCII_KINDS = ['command', 'generator'];

function checkValues (problems, segs, raw, kind) {
  // a tag job is there for its values: on change unless it says otherwise
  const spec = typeof raw === 'string' ? { mode: raw } : isMap(raw) ? raw : kind === 'tags' ? { mode: 'on-change' } : {};
  const mode = D.VALUES_MODES.includes(spec.mode) ? spec.mode : 'off';
  if (raw !== undefined && mode !== 'off' && kind === 'write') {
    problems.add(segs, raw, 'must be off for a write job: a write returns no values to publish');
  }
  // Field combinations only make sense once the mode itself is right
  if (D.VALUES_MODES.includes(spec.mode)) {
    if (spec.deadband !== undefined && mode !== 'on-change') problems.add(segs.concat('deadband'), spec.deadband, 'is only used with mode: on-change');
    if (spec.n !== undefined && mode !== 'every') problems.add(segs.concat('n'), spec.n, 'is only used with mode: every');
    if (spec.maxRate !== undefined && mode === 'off') problems.add(segs.concat('maxRate'), spec.maxRate, 'has no effect with mode: off');
  }
  const maxRatePerSec = rateField(problems, segs.concat('maxRate'), spec.maxRate, {
    def: D.VALUES_MAX_RATE_PER_SEC,
    allowMax: false,
    maxRule: 'must be a finite rate such as "10/s": values are never published once per poll'
  });
  return {
    mode,
    deadband: typeof spec.deadband === 'number' ? spec.deadband : 0,
    n: Number.isInteger(spec.n) ? spec.n : 1,
    maxRatePerSec,
    minIntervalMs: 1000 / maxRatePerSec
  };
}

/**
 * The unit a job names on a line: required there, refused on a device of one unit.
 * @returns {object|undefined|null} the unit (devices.<name>.units); undefined: a device of one unit;
 *   null: a problem, reported
 */
function checkUnit (problems, segs, name, deviceName, device) {
  if (device.units === undefined) {
    if (name === undefined) return undefined;
    problems.add(segs, name, `names a unit, but device "${deviceName}" is not a line of units (devices.${deviceName}.units)`);
    return null;
  }
  const names = device.units.map((u) => u.name);
  if (name === undefined) {
    problems.add(segs, undefined, `is required: device "${deviceName}" is a line of units (${names.join(', ')})`);
    return null;
  }
  const unit = device.units.find((u) => u.name === name);
  if (unit === undefined) {
    const guess = suggestKey(name, names);
    problems.add(segs, name, `is not a unit of device "${deviceName}"${guess ? ` (did you mean "${guess}"?)` : ''}; units: ${names.join(', ')}`);
    return null;
  }
  return unit;
}

/** Builds the Modbus op from a read/write block and the device's unit id, checking fc vs value(s). */
function buildOp (problems, segs, kind, raw, target) {
  const op = { fc: raw.fc, address: raw.address, unitId: Number.isInteger(raw.unitId) ? raw.unitId : target.unitId };
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
 * Semantic checks and defaults of the `jobs` list.
 * @param {import('./problems').Problems} problems
 * @param {*} raw the list as written
 * @param {Record<string, import('./validate').DeviceConfig>} devices the devices that passed
 * @param {string[]} deviceNames every device name written, valid or not
 * @returns {JobConfig[]}
 */
function checkJobs (problems, raw, devices, deviceNames) {
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
    const unit = device ? checkUnit(problems, at('unit'), j.unit, j.device, device) : undefined;

    const kinds = OP_KINDS.filter((k) => j[k] !== undefined);
    if (kinds.length === 0) {
      problems.add(at(), undefined, 'needs one of command, generator, read, write or tags (what to ask the device)');
    } else if (kinds.length > 1) {
      problems.add(at(kinds[1]), j[kinds[1]], `cannot be combined with ${kinds[0]}; a job has exactly one of command, generator, read, write, tags`);
    }
    const kind = kinds[0];

    let command;
    let op;
    let tags;
    if (kind === 'tags' && device && unit !== null && !problems.has(at(kind))) {
      tags = unit === undefined
        ? checkJobTags(problems, at('tags'), j.tags, { name: `device "${j.device}"`, path: `devices.${j.device}.tags` }, device, device.tags)
        : checkJobTags(problems, at('tags'), j.tags, { name: `unit "${unit.name}" of device "${j.device}"`, path: `devices.${j.device}.units.${unit.name}.tags` }, unit.context, unit.tags);
    } else if (kind && device && unit !== null && !problems.has(at(kind))) {
      const ascii = device.target.protocol === 'ascii';
      if (ASCII_KINDS.includes(kind) && !ascii) {
        problems.add(at(kind), j[kind], `needs an ascii:// device; "${j.device}" is ${device.target.protocol}://`);
      } else if (!ASCII_KINDS.includes(kind) && ascii) {
        problems.add(at(kind), j[kind], `needs a modbus device; "${j.device}" is ascii://`);
      } else if (kind === 'command') {
        command = checkCommand(problems, at('command'), j.command, device.target.checksum);
      } else if (kind === 'generator') {
        checkGenerator(problems, at('generator'), j.generator);
      } else {
        // a job on a unit of a line asks that unit unless its op names another
        op = buildOp(problems, at(kind), kind, j[kind], unit === undefined ? device.target : { ...device.target, unitId: unit.unitId });
        if (!problems.has(at(kind))) op = checkOp(problems, at(kind), op);
      }
    }

    const ratePerSec = rateField(problems, at('rate'), j.rate, { def: null });
    if (j.count !== undefined && j.duration !== undefined) {
      problems.add(at('duration'), j.duration, 'cannot be combined with count; a job ends after count requests or after duration, not both');
    }
    const durationMs = durationField(problems, at('duration'), j.duration, { def: null, minMs: 1 });

    if (kind && device && !problems.has(at(kind)) && writesTo(kind, kind === 'command' ? command : j[kind], device.target)) {
      // as in Node-RED: nothing moves a real actuator unless its device says it may
      if (!device.allowWrites) {
        problems.add(at(kind), j[kind], `writes to device "${j.device}", which does not allow writes; set devices.${j.device}.allowWrites: true`);
      }
      if (j.catchUp !== undefined && j.catchUp !== 'skip' && j.rate !== 'max') {
        problems.add(at('catchUp'), j.catchUp, 'must be skip for a job that writes: a missed write is never sent late');
      }
    }
    // a lane is one request at a time: a device offers maxConnections × maxInflight lanes at once
    const lanes = device ? device.maxConnections * (Number.isInteger(device.maxInflight) ? device.maxInflight : 1) : 0;
    if (device && Number.isInteger(j.connections) && j.connections > lanes) {
      problems.add(at('connections'), j.connections, lanes === device.maxConnections
        ? `must be at most devices.${j.device}.maxConnections (${device.maxConnections}): a job cannot use more connections than its device has`
        : `must be at most devices.${j.device}.maxConnections × maxInflight (${device.maxConnections} × ${device.maxInflight} = ${lanes}): a job cannot have more requests in flight than its device carries`);
    }

    /** @type {JobConfig} */
    const job = {
      name: j.name,
      device: j.device,
      unit: unit ? unit.name : null,
      kind,
      ratePerSec,
      connections: Number.isInteger(j.connections) ? j.connections : D.JOB_CONNECTIONS,
      catchUp: D.CATCH_UP_POLICIES.includes(j.catchUp) ? j.catchUp : D.JOB_CATCH_UP,
      count: Number.isInteger(j.count) ? j.count : null,
      durationMs,
      values: checkValues(problems, at('values'), j.values, kind)
    };
    if (kind === 'command') job.command = command !== undefined ? command : j.command;
    if (kind === 'generator') job.generator = j.generator;
    if (kind === 'read' || kind === 'write') job.op = op;
    if (kind === 'tags') job.tags = tags;
    out.push(job);
  });
  return out;
}

module.exports = { checkJobs, OP_KINDS };
