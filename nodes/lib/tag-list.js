'use strict';

/**
 * The tag list of a poll, read or write node (node.tags, edited in the dialog or imported from a
 * CSV tag sheet) → tags checked by the core (gateway/tags/spec.js), the one place tag rules live.
 * The editor asks the same core through the admin endpoints (tag-admin.js), so a list the dialog
 * accepts is the list the runtime accepts, and a flow edited as JSON gets the same coded error
 * naming the same field (`tags[3].address`).
 */

const crypto = require('node:crypto');
const { buildTags, planReads, tagContext } = require('../../gateway/tags');
const { invalidArg } = require('./errors');

/**
 * Fields a flow edited as JSON may hold as text ("0.1" for 0.1). Not the address: there a string is
 * a Modicon reference ("40101", holding register 101) to the core, as in the gateway's YAML, and a
 * number the address itself; the dialog saves the addresses typed as numbers.
 */
const NUMBER_FIELDS = Object.freeze(['bit', 'length', 'scale', 'offset', 'deadband']);
/** A decimal number as typed: 100, -0.5, .5, 1e3 (not 0x10, not an empty string) */
const NUMBER_TEXT = /^\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?\s*$/i;

/**
 * A stored row → the raw tag the core checks: empty cells and nulls are absent fields (the tag's
 * default), numbers typed as text are numbers (the address aside). Anything else is passed on for
 * the core to judge.
 * @param {unknown} row
 * @returns {unknown}
 */
function rawTag (row) {
  if (row === null || typeof row !== 'object' || Array.isArray(row)) return row;
  const out = {};
  for (const [k, v] of Object.entries(row)) {
    if (v === '' || v === null || v === undefined) continue;
    if (NUMBER_FIELDS.includes(k) && typeof v === 'string' && NUMBER_TEXT.test(v)) out[k] = Number(v);
    else if (k === 'readOnly' && (v === 'true' || v === 'false')) out[k] = v === 'true';
    else out[k] = v;
  }
  return out;
}

/**
 * @param {unknown} list node.tags
 * @returns {unknown} the raw tags (a non-list is passed on, for the core to refuse)
 */
function rawTags (list) {
  return Array.isArray(list) ? list.map(rawTag) : list;
}

/**
 * @param {object} config a node's settings
 * @returns {boolean} true when the node works on a tag list, its own (source "tags") or a profile's
 *   (source "profile"); flows saved before tag lists existed have no source and keep their single request
 */
function usesTags (config) {
  return config.source === 'tags' || config.source === 'profile';
}

/**
 * A node's settings with the tags of its profile (a nines-profile config node), when its source is
 * "profile"; as they are otherwise. The one place a node's profile is looked up.
 * @param {object} RED
 * @param {object} config the node's settings
 * @param {'modbus'|'ascii'} protocol the protocol of the node's device
 * @returns {object} settings whose `tags` are the ones to use
 * @throws {NinesError} NINES_ERR_INVALID_ARG with field `profile`: none chosen, of another protocol,
 *   or its tags refused by the core (the profile named, and the tag's field: `profile "meter": tags[3].address …`)
 */
function withProfile (RED, config, protocol) {
  if (config.source !== 'profile') return config;
  const profile = config.profile ? RED.nodes.getNode(config.profile) : null;
  if (!profile) throw invalidArg('profile', `profile must be a nines-profile config node (the node takes its tags from it); got ${JSON.stringify(config.profile || '')}`, { value: config.profile });
  const name = profile.name || profile.id;
  if (profile.protocol !== protocol) throw invalidArg('profile', `profile "${name}" holds ${profile.protocol} tags; this node's device is ${protocol}`, { value: config.profile });
  if (profile.configError) {
    const e = profile.configError;
    throw invalidArg('profile', `profile "${name}": ${e.message}`, { value: config.profile, profileField: e.details && e.details.field });
  }
  return { ...config, tags: profile.tags };
}

/**
 * The node's tags, checked against its device.
 * @param {object} config the node's settings (config.tags)
 * @param {object} deviceSpec the device config node's spec (devices/spec.js)
 * @returns {{tags: import('../../gateway/tags/spec').Tag[], ctx: object}}
 * @throws {NinesError} NINES_ERR_INVALID_ARG listing every problem (details.field: the first, `tags[3].address`)
 */
function nodeTags (config, deviceSpec) {
  const ctx = tagContext(deviceSpec.target, deviceSpec);
  return { tags: buildTags(rawTags(config.tags), ctx, 'tags'), ctx };
}

/**
 * What a read node needs per msg: its tags, the coalesced reads of one poll, the units, and the key
 * its reader is kept under beside the device. The key holds a digest of the tags: a node keeps its id
 * across deploys, and a changed list must not find the reader (and the plan) of the old one.
 * @param {object} config
 * @param {object} deviceSpec
 * @param {string} nodeId
 * @returns {{tags: object[], plan: object[], units: Record<string, string>, key: string}}
 */
function tagRead (config, deviceSpec, nodeId) {
  const { tags, ctx } = nodeTags(config, deviceSpec);
  const digest = crypto.createHash('sha1').update(JSON.stringify(tags)).digest('hex').slice(0, 12);
  return { tags, plan: planReads(tags, ctx), units: unitsOf(tags), key: `${nodeId}:${digest}` };
}

/**
 * @param {import('../../gateway/tags/spec').Tag[]} tags
 * @returns {Record<string, string>} the unit of each tag that has one
 */
function unitsOf (tags) {
  const out = {};
  for (const t of tags) if (t.unit !== null) out[t.name] = t.unit;
  return out;
}

/**
 * The names of the tags a poll did not read, and the first code among them.
 * @param {Record<string, string>} quality
 * @returns {{names: string[], code: string|null}}
 */
function badTags (quality) {
  const names = Object.keys(quality).filter((n) => quality[n] !== 'ok');
  return { names, code: names.length === 0 ? null : quality[names[0]] };
}

module.exports = { rawTag, rawTags, usesTags, withProfile, nodeTags, tagRead, unitsOf, badTags, NUMBER_FIELDS, NUMBER_TEXT };
