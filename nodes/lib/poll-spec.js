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
const { typeOptions } = require('./modbus-msg');
const { num } = require('./device-config');
const { parseRate } = require('../../gateway/base/units');
const { buildJobSpec } = require('../../gateway/jobs/spec');
const { usesTags, rawTags, unitsOf } = require('./tag-list');

/** Characters a job name may not hold (jobs/spec.js NAME_RE) */
const NAME_UNSAFE = /[^A-Za-z0-9_.-]/g;

/**
 * The job's key in the shared pool: unique per node, whatever the node's name.
 * @param {string} nodeId
 * @returns {string}
 */
function jobKey (nodeId) {
  return `poll-${String(nodeId).replace(NAME_UNSAFE, '_')}`.slice(0, 64);
}

/**
 * @param {object} RED
 * @param {object} config the node's settings
 * @param {string} nodeId the node's id (the job's key)
 * @returns {{spec: object, device: object, mode: 'worker'|'inline', autostart: boolean, units: Record<string, string>|null}}
 *   device: the config node; units: the unit of each tag that has one (null: no tag list)
 */
function pollSettings (RED, config, nodeId) {
  const { device, protocol } = pickDevice(RED, config);
  const tagMode = usesTags(config);
  const op = tagMode ? { tags: rawTags(config.tags) } : operation(config, protocol);
  if (config.values !== undefined && config.values !== 'every' && config.values !== 'on-change') {
    throw invalidArg('values', `values must be "on-change" or "every"; got ${JSON.stringify(config.values)}`);
  }
  const valuesMode = config.values === 'every' ? 'every' : 'on-change';
  const mode = config.mode || 'worker';
  if (mode !== 'worker' && mode !== 'inline') throw invalidArg('mode', `mode must be "worker" or "inline"; got ${JSON.stringify(mode)}`);
  // flows saved before the setting existed get the poll default (skip); buildJobSpec checks the rest
  const policy = config.policy === undefined || config.policy === '' ? undefined : config.policy;
  // "10/s", "1000/min", "10Hz", a period such as "100ms", a bare number (per second) or "max"
  const rate = config.rate === undefined || config.rate === '' ? '10/s' : config.rate;
  const ratePerSec = parseRate(rate, 'rate');
  const name = jobKey(nodeId);
  const label = typeof config.name === 'string' && config.name.trim() ? config.name.trim() : name;

  const spec = buildJobSpec({
    name,
    label,
    ...op,
    ratePerSec,
    connections: 1,
    policy,
    intervalMs: num(config, 'interval', 10, 0.1, 3600, false) * 1000,
    values: {
      mode: valuesMode,
      deadband: num(config, 'deadband', 0, 0, 1e12, false),
      n: num(config, 'every', 100, 1, 1e9),
      minIntervalMs: num(config, 'minInterval', 0, 0, 3600000, false)
    },
    // registers become engineering values in the worker, before the value gate
    decode: op.read && op.read.fc >= 3 ? typeOptions(config) : undefined
  }, { device: device.spec, purpose: 'poll' });
  return {
    spec,
    device,
    mode,
    units: tagMode ? unitsOf(spec.tags) : null,
    autostart: config.autostart !== false && config.autostart !== 'false'
  };
}

module.exports = { pollSettings, jobKey };
