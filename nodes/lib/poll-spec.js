'use strict';

/**
 * nines-poll's settings → a poll job for gateway/jobs/poll-job (createPollJob) and the decoding the node
 * applies to the values on the main thread. Checked here; every failure is NINES_ERR_INVALID_ARG.
 */

const { invalidArg } = require('./errors');
const { pickDevice, operation } = require('./job-spec');
const { typeOptions } = require('./modbus-msg');
const { num } = require('./device-config');
const { parseRate } = require('../../gateway/base/units');

/**
 * @param {object} RED
 * @param {object} config the node's settings
 * @param {string} nodeId used for the job name when the node has none
 * @returns {{spec: object, mode: 'worker'|'inline', intervalMs: number, decode: object|null,
 *   deadband: number, valuesMode: 'on-change'|'every', autostart: boolean}}
 */
function pollSettings (RED, config, nodeId) {
  const { device, protocol } = pickDevice(RED, config);
  const op = operation(config, protocol);
  const valuesMode = config.values === 'every' ? 'every' : 'on-change';
  if (config.values !== undefined && config.values !== 'every' && config.values !== 'on-change') {
    throw invalidArg('values', `values must be "on-change" or "every"; got ${JSON.stringify(config.values)}`);
  }
  const mode = config.mode || 'worker';
  if (mode !== 'worker' && mode !== 'inline') throw invalidArg('mode', `mode must be "worker" or "inline"; got ${JSON.stringify(mode)}`);
  const rate = config.rate === undefined || config.rate === '' ? '10/s' : config.rate;
  const ratePerSec = parseRate(typeof rate === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(rate) ? Number(rate) : rate, 'rate');
  const deadband = num(config, 'deadband', 0, 0, 1e12, false);

  // registers are decoded here, on the main thread; the worker compares raw values, so it gets the
  // deadband only when raw and decoded values are the same numbers
  const decode = op.read && op.read.fc >= 3 ? typeOptions(config) : null;
  const identity = !decode || (decode.type === 'uint16' && decode.scale === 1 && decode.offset === 0);
  if (decode) {
    const { registersFor } = require('../../gateway/values/registers');
    const per = registersFor(decode.type, 1);
    if (!['bool', 'string'].includes(decode.type) && op.read.quantity % per !== 0) {
      throw invalidArg('quantity', `${op.read.quantity} registers do not hold a whole number of ${decode.type} values (${per} registers each)`);
    }
  }

  const spec = {
    name: typeof config.name === 'string' && config.name.trim() ? config.name.trim() : `poll-${nodeId}`,
    target: device.target,
    ...op,
    ratePerSec,
    connections: 1,
    values: {
      mode: valuesMode,
      deadband: identity ? deadband : 0,
      n: num(config, 'every', 100, 1, 1e9),
      minIntervalMs: num(config, 'minInterval', 0, 0, 3600000, false)
    },
    device: { timeoutMs: device.timeoutMs }
  };
  return {
    spec,
    mode,
    intervalMs: num(config, 'interval', 10, 0.1, 3600, false) * 1000,
    decode,
    deadband,
    valuesMode,
    autostart: config.autostart !== false && config.autostart !== 'false'
  };
}

module.exports = { pollSettings };
