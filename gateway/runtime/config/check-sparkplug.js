'use strict';

const { isMap } = require('./fields');
const { idProblem } = require('../sparkplug/topics');
const { metricConflicts } = require('../sparkplug/model');

/**
 * `mqtt.sparkplug`: the gateway as a Sparkplug B edge node (runtime/sparkplug/). Off when omitted.
 *
 *   mqtt:
 *     sparkplug: { group: plant1, node: edge-1, writes: false }
 *
 * @typedef {object} SparkplugConfig
 * @property {string} group Sparkplug group id
 * @property {string} node edge node id (default: gateway.id)
 * @property {string} clientId its own MQTT session's client id (default: mqtt.clientId + "-sparkplug")
 * @property {boolean} writes whether DCMD may write tags (through writeTags; the device needs allowWrites)
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
  return { group, node, clientId: ownId, writes: raw.writes === true };
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
