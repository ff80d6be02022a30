'use strict';

/**
 * Sparkplug B topics: `spBv1.0/<group_id>/<message_type>/<edge_node_id>[/<device_id>]`
 * (Sparkplug 3.0, chapter 4). Pure functions, tested alone.
 */

const NAMESPACE = 'spBv1.0';

/** Message types an edge node publishes, and the commands it receives */
const TYPES = Object.freeze(['NBIRTH', 'NDEATH', 'NDATA', 'NCMD', 'DBIRTH', 'DDEATH', 'DDATA', 'DCMD']);

/** Longest id we accept: a topic level, not a description (MQTT topics are at most 65,535 bytes) */
const MAX_ID_LENGTH = 128;

/**
 * Why a group, edge node or device id is not a valid Sparkplug id, or null when it is. Sparkplug 3.0
 * allows any UTF-8 except the MQTT separator and wildcards (`/`, `+`, `#`); we also refuse the
 * empty string, control characters and ids longer than 128 characters, which no host shows sanely.
 * @param {unknown} id
 * @returns {string|null} the rule it breaks
 */
function idProblem (id) {
  const rule = `must be 1 to ${MAX_ID_LENGTH} characters without / + # or control characters (a Sparkplug id is one topic level)`;
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_LENGTH) return rule;
  // eslint-disable-next-line no-control-regex
  if (/[/+#\u0000-\u001f\u007f]/.test(id)) return rule;
  return null;
}

/**
 * The topics of one edge node.
 * @param {string} group
 * @param {string} node
 * @returns {{nbirth: string, ndeath: string, ndata: string, ncmd: string, dcmdFilter: string,
 *   device: (type: 'DBIRTH'|'DDEATH'|'DDATA'|'DCMD', device: string) => string}}
 */
function nodeTopics (group, node) {
  const base = (type) => `${NAMESPACE}/${group}/${type}/${node}`;
  return {
    nbirth: base('NBIRTH'),
    ndeath: base('NDEATH'),
    ndata: base('NDATA'),
    ncmd: base('NCMD'),
    dcmdFilter: `${base('DCMD')}/+`,
    device: (type, device) => `${base(type)}/${device}`
  };
}

/**
 * Splits a Sparkplug topic.
 * @param {string} topic
 * @returns {{group: string, type: string, node: string, device: string|null}|null} null when it is
 *   not a Sparkplug B edge node or device topic
 */
function parseTopic (topic) {
  const parts = String(topic).split('/');
  if (parts[0] !== NAMESPACE || parts.length < 4 || parts.length > 5) return null;
  const [, group, type, node, device] = parts;
  if (!TYPES.includes(type)) return null;
  if ((type[0] === 'D') !== (parts.length === 5)) return null;
  return { group, type, node, device: device === undefined ? null : device };
}

module.exports = { NAMESPACE, TYPES, MAX_ID_LENGTH, idProblem, nodeTopics, parseTopic };
