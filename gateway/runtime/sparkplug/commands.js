'use strict';

const { NinesError } = require('../../base/errors');
const { decodeCommand } = require('./codec');

/**
 * NCMD and DCMD for the edge node (edge-node.js): each command is checked whole before anything is
 * done, and refused with NINES_ERR_SPARKPLUG when any of it is not exactly understood. A metric is
 * named, or given by the alias its birth announced (Sparkplug 3.0 lets a host send either).
 */

const REBIRTH = 'Node Control/Rebirth';

function refuse (topic, why, details = {}) {
  return new NinesError('NINES_ERR_SPARKPLUG', `command on ${topic} refused: ${why}; nothing was changed`, { topic, ...details });
}

/**
 * A command metric's alias as a number, or null when it has none.
 * @param {{alias?: unknown}} m
 * @returns {number|null}
 */
function aliasNumber (m) {
  if (m.alias === undefined || m.alias === null) return null;
  const n = Number(typeof m.alias === 'object' ? m.alias.toString() : m.alias);
  return Number.isSafeInteger(n) ? n : -1;
}

/**
 * The name a command metric stands for: its own, or its alias's among `owner`'s metrics.
 * @param {import('./aliases').AliasMap} aliases
 * @param {string|null} owner null: the node; else the Sparkplug device id
 * @param {object} m
 * @param {string} topic
 * @returns {string}
 */
function metricName (aliases, owner, m, topic) {
  if (typeof m.name === 'string' && m.name !== '') return m.name;
  const alias = aliasNumber(m);
  const found = alias === null ? null : aliases.metricOf(alias);
  if (found === null || found.device !== owner) {
    throw refuse(topic, `alias ${alias} is not a metric of ${owner === null ? 'this edge node' : `device ${JSON.stringify(owner)}`}`, { alias, ...(owner === null ? {} : { device: owner }) });
  }
  return found.name;
}

/**
 * @param {import('./edge-node').EdgeNode} edge
 * @param {string} topic
 * @param {Buffer} bytes
 * @throws {NinesError} NINES_ERR_SPARKPLUG
 */
function runNcmd (edge, topic, bytes) {
  const metrics = decodeCommand(bytes, topic);
  let rebirth = false;
  for (const m of metrics) {
    const name = metricName(edge.aliases, null, m, topic);
    if (name !== REBIRTH) {
      throw refuse(topic, `unknown metric ${JSON.stringify(name)}; this edge node takes "${REBIRTH}" (Boolean)`, { metric: name });
    }
    if (m.type !== 'Boolean' || typeof m.value !== 'boolean') {
      throw refuse(topic, `"${REBIRTH}" must be a Boolean true or false; got datatype ${m.type || 'unknown'}${m.value === null ? ' (null)' : ''}`, { metric: name, datatype: m.type || null });
    }
    if (m.value) rebirth = true;
  }
  edge.counts.commands++;
  if (rebirth) edge.rebirth('NCMD');
}

/**
 * Tag values of a DCMD: its metrics by name or alias; a template instance's members are tags too.
 * @returns {Record<string, unknown>}
 */
function dcmdValues (edge, topic, device, d, metrics) {
  const values = {};
  const put = (name, m) => {
    const def = d.defs.get(name);
    if (def === undefined) throw refuse(topic, `device ${JSON.stringify(device)} has no metric ${JSON.stringify(name)}`, { device, metric: name });
    if (m.type !== def.datatype) throw refuse(topic, `metric ${JSON.stringify(name)} is ${def.datatype} (as in its DBIRTH); got ${m.type || 'an unknown datatype'}`, { device, metric: name, datatype: m.type || null });
    const value = commandValue(m.value);
    if (value === undefined) throw refuse(topic, `metric ${JSON.stringify(name)} has no value`, { device, metric: name });
    if (Object.prototype.hasOwnProperty.call(values, name)) throw refuse(topic, `metric ${JSON.stringify(name)} is named twice`, { device, metric: name });
    values[name] = value;
  };
  for (const m of metrics) {
    const name = metricName(edge.aliases, device, m, topic);
    if (name.startsWith('\u0001') || m.type === 'Template') {
      // a template instance: its members, named within it, are the tags to write
      const inst = d.layout.instances.find((i) => `\u0001${i.name}` === name || i.name === name);
      if (inst === undefined || m.type !== 'Template' || !m.value || !Array.isArray(m.value.metrics)) {
        throw refuse(topic, `metric ${JSON.stringify(name.replace('\u0001', ''))} is not a template instance of device ${JSON.stringify(device)}`, { device, metric: name.replace('\u0001', '') });
      }
      for (const member of m.value.metrics) {
        if (!inst.members.some((def) => def.name === member.name)) throw refuse(topic, `template instance ${JSON.stringify(inst.name)} has no member ${JSON.stringify(member.name)}`, { device, metric: member.name });
        put(member.name, member);
      }
    } else {
      put(name, m);
    }
  }
  return values;
}

/**
 * Checks every metric of a DCMD, then writes them all through writeTags (which checks again).
 * @param {import('./edge-node').EdgeNode} edge
 * @param {string} topic
 * @param {string} device
 * @param {Buffer} bytes
 * @returns {Promise<void>}
 * @throws {NinesError} NINES_ERR_SPARKPLUG
 */
async function runDcmd (edge, topic, device, bytes) {
  if (!edge.writes) throw refuse(topic, 'writes by DCMD are off; set mqtt.sparkplug.writes: true (and allowWrites on the device)', { device });
  const d = edge.devices.get(device);
  if (d === undefined) throw refuse(topic, `no Sparkplug device ${JSON.stringify(device)} on this edge node`, { device });
  if (!d.born) throw refuse(topic, `device ${JSON.stringify(device)} is not born (no DBIRTH since it came up)`, { device });
  const values = dcmdValues(edge, topic, device, d, decodeCommand(bytes, topic));
  edge.counts.commands++;
  let result;
  try {
    result = await edge._writeTags(device, values);
  } catch (err) {
    // refused by writeTags (allowWrites off, a read-only tag, a value its tag cannot hold): nothing was written
    edge.counts.refused++;
    edge.emit('refused', err);
    return;
  }
  if (result && result.ok === false) {
    const failed = Object.entries(result.results || {}).filter(([, r]) => r && r.ok === false).map(([tag, r]) => `${tag}: ${r.skipped ? 'not sent' : r.code || 'failed'}`);
    edge.emit('command-error', new NinesError('NINES_ERR_SPARKPLUG', `DCMD on ${topic}: ${failed.length} write(s) failed at the device (${failed.join(', ')})`, { topic, device, results: result.results }));
  }
}

/**
 * A decoded command value as writeTags takes it: 64-bit integers as BigInt (or a number when
 * exact), the rest as decoded. undefined when there is none (is_null, or no value field).
 * @param {unknown} v
 * @returns {unknown}
 */
function commandValue (v) {
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'object' && typeof v.low === 'number' && typeof v.high === 'number') {
    const big = BigInt(v.toString());
    const n = Number(big);
    return Number.isSafeInteger(n) ? n : big;
  }
  return v;
}

module.exports = { runNcmd, runDcmd };
