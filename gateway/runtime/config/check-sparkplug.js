'use strict';

const { isMap } = require('./fields');
const { parseBytes } = require('../../base/quantities');
const SP = require('../sparkplug/defaults');
const { SIZE_HINT } = require('./schema');
const { idProblem } = require('../sparkplug/topics');
const { metricConflicts } = require('../sparkplug/model');

/**
 * `mqtt.sparkplug`: the gateway as a Sparkplug B edge node (runtime/sparkplug/). Off when omitted.
 *
 *   mqtt:
 *     sparkplug: { group: plant1, node: edge-1, writes: false, primaryHost: scada-1, templates: false,
 *                  hold: { maxMessages: 100000, maxBytes: 64MiB } }
 *
 * @typedef {object} SparkplugConfig
 * @property {string} group Sparkplug group id
 * @property {string} node edge node id (default: gateway.id)
 * @property {string} clientId its own MQTT session's client id (default: mqtt.clientId + "-sparkplug")
 * @property {boolean} writes whether DCMD may write tags (through writeTags; the device needs allowWrites)
 * @property {string|null} primaryHost the primary host application's id: birth only while its STATE says online
 * @property {{maxMessages: number, maxBytes: number}} hold the DATA held while it is offline (hold.js)
 * @property {boolean} templates tag groups as template definitions and instances (templates.js)
 */

/**
 * @param {import('./problems').Problems} problems
 * @param {*} raw mqtt.sparkplug as written (undefined: off)
 * @param {{gatewayId: string, clientId: string}} ctx the gateway id and the publisher's client id
 * @returns {SparkplugConfig|null}
 */
function checkSparkplug (problems, raw, { gatewayId, clientId }) {
  if (raw === undefined || !isMap(raw)) return null; // a wrong type: the schema said so
  const at = (key) => ['mqtt', 'sparkplug', key];
  const id = (key, value) => {
    if (typeof value !== 'string') return value;
    const rule = idProblem(value);
    if (rule !== null) problems.add(at(key), value, rule);
    return value;
  };
  const group = id('group', raw.group);
  const node = raw.node === undefined ? gatewayId : id('node', raw.node);
  const ownId = typeof raw.clientId === 'string' ? raw.clientId : `${clientId}-sparkplug`;
  // two sessions with one client id would take the connection from each other, forever
  if (ownId === clientId) problems.add(at('clientId'), ownId, `must differ from the client id of the gateway's publisher (${JSON.stringify(clientId)}): Sparkplug needs its own session, whose will is the NDEATH`);
  const primaryHost = raw.primaryHost === undefined ? null : id('primaryHost', raw.primaryHost);
  return { group, node, clientId: ownId, writes: raw.writes === true, primaryHost, hold: checkHold(problems, raw.hold), templates: raw.templates === true };
}

/**
 * `mqtt.sparkplug.hold`, with the defaults filled in.
 * @param {import('./problems').Problems} problems
 * @param {*} raw
 * @returns {{maxMessages: number, maxBytes: number}}
 */
function checkHold (problems, raw) {
  const hold = { maxMessages: SP.HOLD_MAX_MESSAGES, maxBytes: SP.HOLD_MAX_BYTES };
  if (!isMap(raw)) return hold;
  if (Number.isInteger(raw.maxMessages)) hold.maxMessages = raw.maxMessages;
  if (raw.maxBytes !== undefined) {
    const at = ['mqtt', 'sparkplug', 'hold', 'maxBytes'];
    try {
      hold.maxBytes = parseBytes(raw.maxBytes, 'mqtt.sparkplug.hold.maxBytes');
      if (hold.maxBytes < SP.HOLD_MIN_BYTES) problems.add(at, raw.maxBytes, `must be at least ${SP.HOLD_MIN_BYTES} bytes (1MiB)`);
    } catch {
      problems.add(at, raw.maxBytes, `is not a size; ${SIZE_HINT}`);
    }
  }
  return hold;
}

/**
 * With Sparkplug on, a device's tags are one metric set: a tag name read by two jobs of a device
 * must be the same tag in both.
 * @param {import('./problems').Problems} problems
 * @param {SparkplugConfig|null} sparkplug
 * @param {Array<{name: string, device: string, tags?: object[]}>} jobs checked jobs, in config order
 */
function checkSparkplugTags (problems, sparkplug, jobs) {
  if (sparkplug === null) return;
  for (const c of metricConflicts(jobs)) problems.add(['jobs', c.job, 'tags'], c.name, c.rule);
}

module.exports = { checkSparkplug, checkSparkplugTags };
