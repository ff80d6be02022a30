'use strict';

const { isMap, reservedKey } = require('./fields');
const { suggestKey } = require('./problems');
const { isName, NAME_RULE } = require('../../base/names');
const { shippedNames, shippedProfile } = require('./shipped-profiles');
const { QUIRKS, DEVICE_ONLY, PROFILE_FIELDS } = require('./profile-keys');

/**
 * Profiles: a device description many devices or units share (a meter model on 50 units of a line,
 * an I/O module in 30 panels), written once:
 *
 *   profiles:
 *     meter:
 *       order: CDAB                      # quirks and defaults, as a device entry has them
 *       timeout: 300ms
 *       tags: { measurements: [ … ], nameplate: [ … ] }
 *       scan: { fast: { rate: 10/s, tags: measurements }, slow: { rate: 1/min, tags: nameplate } }
 *     pumps: { csv: pumps.csv }          # a tag sheet as a profile: one group, named as the profile
 *   devices:
 *     bus:
 *       target: "modbus+rtutcp://10.0.0.9:4001"
 *       profile: meter                   # describes every unit that names no profile of its own
 *       units: "1-50"
 *     io1: { target: "ascii://10.0.0.7:9500", profile: ED-588 }   # shipped (profiles/ED-588.yaml)
 *
 * What is written locally wins: a field (`timeout`), a tag group of the same name (it replaces the
 * profile's whole), a scan class of the same name. `overrides: { power: { scale: 0.01 } }` changes
 * fields of one tag of the profile; naming a tag the profile does not have is an error at the
 * override. The profile's own problems (an overlapping tag) are reported inside the profile
 * (`profiles.meter.tags.measurements[3].address`), once, however many devices name it.
 *
 * A unit of a line takes its tags, scan classes and quirks from its profile; a device's timing and
 * connections (timeout, maxConnections, …) belong to the whole line, so a profile named by a unit
 * may not carry them (named by the line's device, it may).
 */

/**
 * @typedef {object} Profile
 * @property {string} name
 * @property {object} body as written (a wrong type reads as empty: the schema said so)
 * @property {Array<string|number>} at where it is written: profiles.<name>
 * @property {string|null} shipped the package file it comes from, or null when the config defines it
 * @property {string} baseDir where the paths of its tag sheets start
 */

/**
 * @typedef {object} Origin a value and where it was written (its config path)
 * @property {*} value
 * @property {Array<string|number>} at
 */

/**
 * @typedef {object} GroupEntry one tag group of a device or unit, after its profile and its own
 * @property {string} group
 * @property {*} value a list of tags, or { csv }
 * @property {Array<string|number>} at the group's path (profiles.meter.tags.x, or the device's)
 * @property {Array<string|number>} [csvAt] the sheet's path when not `at.csv` (a profile that is one sheet)
 * @property {string} baseDir where a sheet's path starts
 * @property {(i: number, field: string) => Array<string|number>|null} [tagAt] the path of a field of tag i, where an override changed it
 */

/**
 * @typedef {object} Description what a device or unit is, its profile's fields under its own
 * @property {Profile|null} profile
 * @property {Record<string, Origin>} fields quirks and defaults (PROFILE_FIELDS; for a unit, QUIRKS)
 * @property {GroupEntry[]} groups
 * @property {Array<{name: string, value: *, at: Array<string|number>}>} scan scan classes
 */

/**
 * The profiles a config defines, by name.
 * @param {import('./problems').Problems} problems
 * @param {*} raw the `profiles` section as written
 * @param {string} baseDir where tag sheet paths start
 * @returns {Map<string, Profile>}
 */
function readProfiles (problems, raw, baseDir) {
  const out = new Map();
  if (!isMap(raw)) return out;
  for (const [name, body] of Object.entries(raw)) {
    const at = ['profiles', name];
    if (reservedKey(problems, at, name)) continue;
    if (!isName(name)) { problems.add(at, name, `is not a valid profile name; ${NAME_RULE}`); continue; }
    const b = isMap(body) ? body : {};
    if (b.csv !== undefined && b.tags !== undefined) problems.add(at.concat('csv'), b.csv, 'cannot be combined with tags: a profile is one tag sheet, or tag groups (each may be a sheet: tags: { x: { csv: x.csv } })');
    out.set(name, { name, body: b, at, shipped: null, baseDir });
  }
  return out;
}

/**
 * The profile a name means: the config's, else the one shipped under that name.
 * @param {string} name
 * @param {Map<string, Profile>} local
 * @returns {Profile|null}
 */
function findProfile (name, local) {
  if (local.has(name)) return local.get(name);
  const s = shippedProfile(name);
  if (s === null) return null;
  return { name, body: isMap(s.body) ? s.body : {}, at: ['profiles', name], shipped: s.file, baseDir: s.dir };
}

/**
 * The profile an entry names, or a problem at its `profile` field.
 * @returns {Profile|null|undefined} null when it names none; undefined when the name is wrong (reported)
 */
function namedProfile (problems, at, raw, local) {
  if (raw === undefined) return null;
  if (typeof raw !== 'string' || raw === '') return undefined; // the schema said so
  const p = findProfile(raw, local);
  if (p !== null) return p;
  const known = [...new Set([...local.keys(), ...shippedNames()])];
  const guess = suggestKey(raw, known);
  problems.add(at.concat('profile'), raw, `is not a profile${guess ? ` (did you mean "${guess}"?)` : ''}; defined: ${[...local.keys()].join(', ') || 'none'}; shipped: ${shippedNames().join(', ') || 'none'}`);
  return undefined;
}

/**
 * A device, or a unit of a line, with its profile's fields, tag groups and scan classes under its own.
 * @param {import('./problems').Problems} problems
 * @param {object} own the device or unit as written
 * @param {Array<string|number>} at where it is written
 * @param {Profile|null} profile the profile that describes it (its own, or on a line the device's)
 * @param {object} [opts]
 * @param {boolean} [opts.unit=false] a unit of a line: quirks only, and no device timing from its own profile
 * @param {boolean} [opts.inherited=false] the profile is the line's (named by the device), not the unit's
 * @param {object} [opts.line] the line's device as written, whose scan classes and overrides describe
 *   each unit that takes the line's profile
 * @param {Array<string|number>} [opts.lineAt] where the line's device is written
 * @param {string} [opts.baseDir] where the paths of the entry's own tag sheets start (the config file's folder)
 * @returns {Description}
 */
function describe (problems, own, at, profile, { unit = false, inherited = false, line = null, lineAt = null, baseDir = process.cwd() } = {}) {
  const body = profile ? profile.body : {};
  const fields = {};
  for (const key of unit ? QUIRKS : PROFILE_FIELDS) {
    if (own[key] !== undefined) fields[key] = { value: own[key], at: at.concat(key) };
    // a unit that takes the line's profile has its quirks through the line already (devices/line.js)
    else if (profile && body[key] !== undefined && !inherited) fields[key] = { value: body[key], at: profile.at.concat(key) };
  }
  if (unit && profile && !inherited) {
    for (const key of DEVICE_ONLY) {
      if (body[key] !== undefined) {
        problems.add(profile.at.concat(key), body[key], `belongs to a whole device, not to a unit of a line: profile "${profile.name}" is named by ${formatAt(at)}; ` +
          `give the line its ${key} on its device`);
      }
    }
  }
  const groups = profile ? profileGroups(profile) : [];
  const ownTags = isMap(own.tags) ? own.tags : {};
  const replaced = new Set(Object.keys(ownTags));
  const kept = groups.filter((g) => !replaced.has(g.group));
  const overrides = [];
  if (inherited && line && isMap(line.overrides)) overrides.push([line.overrides, lineAt.concat('overrides')]);
  if (isMap(own.overrides)) overrides.push([own.overrides, at.concat('overrides')]);
  for (const [map, oat] of overrides) applyOverrides(problems, map, oat, profile, groups, kept, at);
  for (const [group, value] of Object.entries(ownTags)) kept.push({ group, value, at: at.concat('tags', group), baseDir });
  const scan = new Map();
  const addScan = (map, sat) => { if (isMap(map)) for (const [name, value] of Object.entries(map)) scan.set(name, { name, value, at: sat.concat(name) }); };
  if (profile) addScan(body.scan, profile.at.concat('scan'));
  if (inherited && line) addScan(line.scan, lineAt.concat('scan'));
  addScan(own.scan, at.concat('scan'));
  return { profile, fields, groups: kept, scan: [...scan.values()] };
}

/** @returns {GroupEntry[]} a profile's tag groups: its tags, or its one sheet (a group named as the profile) */
function profileGroups (profile) {
  const b = profile.body;
  if (typeof b.csv === 'string' && b.tags === undefined) {
    return [{ group: profile.name, value: { csv: b.csv }, at: profile.at.concat('tags', profile.name), csvAt: profile.at.concat('csv'), baseDir: profile.baseDir }];
  }
  if (!isMap(b.tags)) return [];
  return Object.entries(b.tags).map(([group, value]) => ({ group, value, at: profile.at.concat('tags', group), baseDir: profile.baseDir }));
}

/**
 * Changes fields of the profile's tags (inline lists) where an entry overrides them; a tag the
 * profile lacks, or one in a group the entry replaces, is a problem at the override.
 */
function applyOverrides (problems, map, oat, profile, groups, kept, at) {
  for (const [tag, patch] of Object.entries(map)) {
    const here = oat.concat(tag);
    if (!profile) { problems.add(here, patch, `overrides a tag of a profile, but ${formatAt(at)} names no profile`); continue; }
    if (!isMap(patch)) continue; // the schema said so
    if (patch.name !== undefined) { problems.add(here.concat('name'), patch.name, 'cannot be overridden: a tag keeps its name (the override is found by it)'); continue; }
    const found = groups.find((g) => Array.isArray(g.value) && g.value.some((t) => isMap(t) && t.name === tag));
    if (found === undefined) {
      const names = groups.flatMap((g) => (Array.isArray(g.value) ? g.value.filter(isMap).map((t) => t.name) : []));
      const guess = suggestKey(tag, names.filter((n) => typeof n === 'string'));
      const sheets = groups.filter((g) => !Array.isArray(g.value)).map((g) => g.group);
      problems.add(here, patch, `is not a tag of profile "${profile.name}"${guess ? ` (did you mean "${guess}"?)` : ''}` +
        (sheets.length ? `; tags of its sheet groups (${sheets.join(', ')}) are changed by replacing the group` : ''));
      continue;
    }
    const entry = kept.find((g) => g.group === found.group);
    if (entry === undefined) {
      problems.add(here, patch, `is a tag of group "${found.group}" of profile "${profile.name}", which ${formatAt(at.concat('tags', found.group))} replaces: change it there`);
      continue;
    }
    const i = entry.value.findIndex((t) => isMap(t) && t.name === tag);
    entry.value = entry.value.slice();
    entry.value[i] = { ...entry.value[i], ...patch };
    const before = entry.tagAt;
    entry.tagAt = (k, field) => (k === i && Object.hasOwn(patch, field) ? here.concat(field) : before ? before(k, field) : null);
  }
}

/** ` (shipped: profiles/ED-588.yaml)` for a shipped profile, so a message says where it lives */
function shippedNote (profile) {
  return profile && profile.shipped ? ` (profile "${profile.name}" is shipped with nines: ${profile.shipped})` : '';
}

/**
 * Says where a shipped profile lives in each problem found inside it: its path (profiles.ED-588.…)
 * is in no file of the user's.
 * @param {import('./problems').Problems} problems
 * @param {Map<string, Profile>} local the config's own profiles
 */
function markShipped (problems, local) {
  for (const p of problems.list) {
    if (p.segs[0] !== 'profiles' || local.has(p.segs[1])) continue;
    const s = findProfile(String(p.segs[1]), local);
    if (s !== null && s.shipped) p.rule += shippedNote(s);
  }
}

function formatAt (segs) {
  return segs.join('.');
}

module.exports = { readProfiles, findProfile, namedProfile, describe, markShipped };
