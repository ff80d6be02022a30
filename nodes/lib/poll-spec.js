'use strict';

/**
 * nines-poll's settings → a job spec, built by gateway/jobs/spec.js (buildJobSpec, the one place job
 * specs are built) on the device of the node's config node. Register decoding is part of the spec,
 * so it runs in the worker and the deadband applies once, to the decoded values. Checked here and
 * there; every failure is a NINES_ERR_INVALID_ARG (or the driver's own code) naming the field.
 *
 * A node with source "tags" polls its tag list instead of one request: the core checks the tags
 * (`tags[3].address` in the error), coalesces their reads and decodes them in the worker.
 */

const { invalidArg } = require('./errors');
const { pickDevice, operation } = require('./job-spec');
const { typeOptions, intField } = require('./modbus-msg');
const { num } = require('./device-config');
const { formatUnitList, unitTarget } = require('../../gateway/devices/line');
const { buildJobSpec } = require('../../gateway/jobs/spec');
const { toName } = require('../../gateway/base/names');
const { usesTags, withProfile, rawTags, unitsOf } = require('./tag-list');

/** The dialog's default rate (nines-poll.html), for nodes saved without one */
const POLL_RATE = '10/s';


/**
 * The job's key in the shared pool: unique per node, whatever the node's name.
 * @param {string} nodeId
 * @returns {string}
 */
function jobKey (nodeId) {
  return toName(`poll-${nodeId}`);
}

/**
 * @param {object} RED
 * @param {object} config the node's settings
 * @param {string} nodeId the node's id (the job's key)
 * @returns {{spec: object, device: object, mode: 'worker'|'inline', autostart: boolean, units: Record<string, string>|null,
 *   unitId: number|undefined}} device: the config node; units: the unit of each tag that has one (null: no tag
 *   list); unitId: the Modbus unit it polls (undefined for ASCII)
 */
function pollSettings (RED, config, nodeId) {
  const { device, protocol } = pickDevice(RED, config);
  const tagMode = usesTags(config);
  const op = tagMode ? { tags: rawTags(withProfile(RED, config, protocol).tags) } : operation(config, protocol);
  if (config.values !== undefined && config.values !== 'every' && config.values !== 'on-change') {
    throw invalidArg('values', `values must be "on-change" or "every"; got ${JSON.stringify(config.values)}`);
  }
  const valuesMode = config.values === 'every' ? 'every' : 'on-change';
  const mode = config.mode || 'worker';
  if (mode !== 'worker' && mode !== 'inline') throw invalidArg('mode', `mode must be "worker" or "inline"; got ${JSON.stringify(mode)}`);
  // flows saved before the setting existed get the poll default (skip); buildJobSpec checks the rest
  const policy = config.policy === undefined || config.policy === '' ? undefined : config.policy;
  // likewise the wait (jobs/limits.js PURPOSE_PRECISION: sleep for polling)
  const precision = config.precision === undefined || config.precision === '' ? undefined : config.precision;
  // "10/s", "1000/min", "10Hz", a period such as "100ms", a bare number (per second) or "max": read
  // by the job-spec builder, as a rate in the gateway's config is; a node saved without one polls
  // at the dialog's default
  const rate = config.rate === undefined || config.rate === '' ? POLL_RATE : config.rate;
  const name = jobKey(nodeId);
  const label = typeof config.name === 'string' && config.name.trim() ? config.name.trim() : name;
  const unit = protocol === 'modbus' ? pollUnit(config, device.spec) : { unitId: undefined, name: undefined, deviceSpec: device.spec };

  const spec = buildPollSpec({
    name,
    label,
    unit: unit.name,
    ...op,
    ratePerSec: rate,
    connections: 1,
    policy,
    precision,
    intervalMs: num(config, 'interval', 10, 0.1, 3600, false) * 1000,
    values: {
      mode: valuesMode,
      deadband: num(config, 'deadband', 0, 0, 1e12, false),
      n: num(config, 'every', 100, 1, 1e9),
      minIntervalMs: num(config, 'minInterval', 0, 0, 3600000, false)
    },
    // registers become engineering values in the worker, before the value gate
    decode: op.read && op.read.fc >= 3 ? typeOptions(config) : undefined
  }, { device: unit.deviceSpec, purpose: 'poll' });
  return {
    spec,
    device,
    unitId: unit.unitId,
    mode,
    units: tagMode ? unitsOf(spec.tags) : null,
    autostart: config.autostart !== false && config.autostart !== 'false'
  };
}

/**
 * buildJobSpec, its refusal of the rate named by the node's field (`rate`, not the spec's `ratePerSec`).
 * @param {object} input @param {object} ctx
 * @returns {object} the job spec
 */
function buildPollSpec (input, ctx) {
  try {
    return buildJobSpec(input, ctx);
  } catch (err) {
    if (!err.details || err.details.field !== 'ratePerSec') throw err;
    throw invalidArg('rate', err.message.replace(/^ratePerSec/, 'rate'), { value: input.ratePerSec, rule: err.details.rule });
  }
}

/**
 * The unit a Modbus poll polls: its unit id field, else the device's. On a line of units (the device's
 * "Units on this line") it must be one of them, and the job names it, so its polls are gated by that
 * unit's health (a silent unit's polls are skipped, not sent). On a single device any unit id goes:
 * the job's requests carry it.
 * @param {object} config the node's settings
 * @param {import('../../gateway/devices/spec').DeviceSpec} deviceSpec
 * @returns {{unitId: number, name: string|undefined, deviceSpec: object}} name: the unit's name on a
 *   line; deviceSpec: what the job is built on (a single device's, with the poll's unit id as its target's)
 */
function pollUnit (config, deviceSpec) {
  const given = config.unitId !== undefined && config.unitId !== null && config.unitId !== '';
  const unitId = given ? intField(config.unitId, 'unitId', 0, 255) : deviceSpec.target.unitId;
  if (deviceSpec.units) {
    const unit = deviceSpec.units.find((u) => u.unitId === unitId);
    if (unit === undefined) {
      throw invalidArg('unitId', `unitId ${unitId} is not a unit of this line (units ${formatUnitList(deviceSpec.units.map((u) => u.unitId))})`, { value: config.unitId });
    }
    return { unitId, name: unit.name, deviceSpec };
  }
  // the job's requests (and a tag list's reads) take their unit id from the target it is built on
  // the unit's own target (devices/line.js), so the poll's summaries name the unit it asks, URL included
  const spec = unitId === deviceSpec.target.unitId ? deviceSpec : { ...deviceSpec, target: unitTarget(deviceSpec.target, unitId) };
  return { unitId, name: undefined, deviceSpec: spec };
}

module.exports = { pollSettings, jobKey };
