'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { isMap, reservedKey } = require('./fields');
const { checkTags, tagConflicts, buildTags, tagContext, loadTagSheet, MAX_SHEET_BYTES } = require('../../tags');

/**
 * Tags in the gateway config, checked by the one tag module (tags/spec.js) with their paths:
 *
 *   devices:
 *     plc1:
 *       target: modbus+tcp://127.0.0.1:5020?unitId=1
 *       tags:                                   # named groups of the device's tags
 *         boiler:
 *           - { name: boiler_temp, table: holding, address: 100, type: float32, order: CDAB, scale: 0.1, unit: "°C" }
 *         pumps: { csv: plc1-pumps.csv }        # a tag sheet, relative to the config file
 *   jobs:
 *     - { name: boiler, device: plc1, tags: boiler, rate: 1/s }            # one group
 *     - { name: all, device: plc1, tags: [boiler, pumps], rate: 10/s }     # several
 *     - { name: one-off, device: plc1, tags: [ { name: x, table: input, address: 7 } ], rate: 1/s }
 *
 * A device's groups together are one map: names unique across them and no two tags on the same
 * register, so a write names a tag of the device unambiguously. A job reads the tags of the groups it
 * names plus its own; a problem between them is reported at the job.
 */

/**
 * @typedef {object} DeviceTags
 * @property {Record<string, import('../../tags/spec').Tag[]>} groups
 * @property {import('../../tags/spec').Tag[]} all every tag of the device, for writes by name
 * @property {boolean} [failed] the groups have problems (reported at the device): jobs naming them are not checked again
 */

/**
 * Checks the tag groups of a device (or of a unit of a line).
 * @param {import('./problems').Problems} problems
 * @param {Array<string|number>} at where the groups are written (devices.<name>.tags, or a unit's)
 * @param {*} raw the groups as written
 * @param {{target: object, maxGap?: number, maxRegistersPerRequest?: number, maxBitsPerRequest?: number}} device
 *   the device's target and quirks (a unit's own quirks over the line's)
 * @param {string} baseDir where tag sheet paths start
 * @returns {DeviceTags|null} null when absent; `failed` when wrong (problems say why)
 */
function checkDeviceTags (problems, at, raw, device, baseDir) {
  if (raw === undefined || !isMap(raw)) return null; // a wrong type: the schema said so
  return checkTagGroups(problems, Object.entries(raw).map(([group, value]) => ({ group, value, at: at.concat(group), baseDir })), device);
}

/**
 * Checks tag groups written in several places (a profile's and a device's own: runtime/config/profiles.js),
 * each problem at the path where its tag is written.
 * @param {import('./problems').Problems} problems
 * @param {import('./profiles').GroupEntry[]} entries the groups, each with its path and the folder its sheet's path starts from
 * @param {{target: object}} device the device's target and quirks (a unit's own quirks over the line's)
 * @returns {DeviceTags}
 */
function checkTagGroups (problems, entries, device) {
  const ctx = tagContext(device.target, device);
  const groups = {};
  const all = [];
  const origin = []; // where each tag of `all` was written
  let ok = true;
  for (const { group, value, at, csvAt, baseDir, tagAt } of entries) {
    let tags = null;
    if (reservedKey(problems, at, group)) { ok = false; continue; }
    if (isMap(value) && value.csv !== undefined) {
      const sheetAt = csvAt || at.concat('csv');
      tags = readSheet(problems, sheetAt, value.csv, ctx, baseDir);
      if (tags !== null) tags.forEach(() => origin.push(sheetAt));
    } else if (Array.isArray(value)) {
      tags = listTags(problems, at, value, ctx, tagAt);
      if (tags !== null) tags.forEach((_, i) => origin.push(at.concat(i)));
    }
    if (tags === null) { ok = false; continue; }
    groups[group] = tags;
    all.push(...tags);
  }
  if (!ok) return { groups: {}, all: [], failed: true };
  // the groups together are the device's map: a write names a tag of the device unambiguously
  const clashes = tagConflicts(all);
  for (const c of clashes) problems.add(origin[c.at].concat(typeof origin[c.at][origin[c.at].length - 1] === 'number' ? [c.field] : []), c.value, `${c.rule} (tag "${all[c.at].name}", in another group of the device)`);
  return clashes.length === 0 ? { groups, all } : { groups: {}, all: [], failed: true };
}

/**
 * @param {(i: number, field: string) => Array<string|number>|null} [tagAt] where a field of tag i is
 *   written, when not in the list (an override of a profile's tag)
 * @returns {import('../../tags/spec').Tag[]|null} a list's tags, or null after problems at segs
 */
function listTags (problems, segs, list, ctx, tagAt) {
  const { tags, problems: found } = checkTags(list, ctx);
  for (const p of found) {
    const moved = tagAt && typeof p.path[0] === 'number' && typeof p.path[1] === 'string' ? tagAt(p.path[0], p.path[1]) : null;
    problems.add(moved || segs.concat(p.path), p.value, p.rule);
  }
  return found.length === 0 ? tags : null;
}

/** @returns {import('../../tags/spec').Tag[]|null} */
function readSheet (problems, segs, file, ctx, baseDir = process.cwd()) {
  if (typeof file !== 'string' || file === '') { problems.add(segs, file, 'must be the path of a CSV tag sheet'); return null; }
  const abs = path.resolve(baseDir, file);
  let text;
  try {
    const stat = fs.statSync(abs);
    if (stat.size > MAX_SHEET_BYTES) { problems.add(segs, file, `is ${stat.size} bytes; a tag sheet may hold at most ${MAX_SHEET_BYTES}`); return null; }
    text = fs.readFileSync(abs, 'utf8');
  } catch (err) {
    problems.add(segs, file, `cannot be read (${err.code || err.message}): ${abs}`);
    return null;
  }
  try {
    return loadTagSheet(text, ctx, file);
  } catch (err) {
    problems.add(segs, file, `is not a valid tag sheet: ${err.message}`);
    return null;
  }
}

/**
 * The tags a job reads: the groups it names and its own tags, checked together.
 * @param {import('./problems').Problems} problems
 * @param {Array<string|number>} segs the job's `tags` path
 * @param {*} raw as written: a group name, or a list of group names and tags
 * @param {{name: string, path: string}} owner whose groups they are, for messages: `device "plc1"` or
 *   `unit "m1" of device "bus1"`, and where its groups are written
 * @param {{target: object}} device the target and quirks the tags are checked with (a unit's over its line's)
 * @param {DeviceTags|null} deviceTags
 * @returns {import('../../tags/spec').Tag[]|undefined} undefined after a problem
 */
function checkJobTags (problems, segs, raw, owner, device, deviceTags) {
  const items = typeof raw === 'string' ? [raw] : Array.isArray(raw) ? raw : null;
  if (items === null) return undefined; // the schema said so
  if (items.length === 0) { problems.add(segs, raw, 'must name a tag group or hold at least one tag'); return undefined; }
  if (deviceTags && deviceTags.failed) return undefined; // its problems are reported at the device
  const ctx = tagContext(device.target, device);
  const all = [];
  const origin = [];
  const named = new Set();
  const own = [];
  const ownAt = [];
  let ok = true;
  items.forEach((item, k) => {
    const at = typeof raw === 'string' ? segs : segs.concat(k);
    if (typeof item !== 'string') { own.push(item); ownAt.push(at); return; }
    const groups = deviceTags ? Object.keys(deviceTags.groups) : [];
    if (!groups.includes(item)) {
      problems.add(at, item, groups.length ? `is not a tag group of ${owner.name} (groups: ${groups.join(', ')})` : `names a tag group, but ${owner.name} has no tags (${owner.path})`);
      ok = false;
    } else if (named.has(item)) {
      problems.add(at, item, 'names the same tag group twice');
      ok = false;
    } else {
      named.add(item);
      for (const t of deviceTags.groups[item]) { all.push(t); origin.push(at); }
    }
  });
  if (own.length !== 0) {
    const { tags, problems: found } = checkTags(own, ctx);
    // a problem of one of the job's own tags is at that tag (its index in the job's list)
    for (const p of found) problems.add(typeof p.path[0] === 'number' ? ownAt[p.path[0]].concat(p.path.slice(1)) : segs, p.value, p.rule);
    if (found.length !== 0) ok = false;
    else for (const t of tags) { all.push(t); origin.push(ownAt[own.indexOf(own.find((o) => o && o.name === t.name))]); }
  }
  if (!ok) return undefined;
  const clashes = tagConflicts(all);
  for (const c of clashes) problems.add(origin[c.at], all[c.at].name, `holds tag "${all[c.at].name}", which ${c.rule.replace(/^is the name/, 'has the name')}`);
  if (clashes.length !== 0) return undefined;
  // a list built for this device, so the job spec takes it as it is (tags/spec.js buildTags)
  return buildTags(all, ctx, segs.join('.'));
}

module.exports = { checkDeviceTags, checkTagGroups, checkJobTags };
