'use strict';

const { tagDatatype } = require('./metrics');
const { unitKey } = require('../../devices/line');

/**
 * What the gateway looks like as a Sparkplug B edge node, from its config:
 * - one Sparkplug device per nines device that has tag jobs, carrying the tags of all those jobs.
 *   A device is what a SCADA operator sees as one piece of equipment, and its metric set stays the
 *   same when its tags are split across jobs polled at different rates (a job per rate is how a
 *   fast and a slow group are read). A job is an implementation detail of polling; a device with
 *   its jobs changed but its tags unchanged is the same Sparkplug device with the same metrics.
 *   Devices polled only by raw reads (no names, no types) have no metrics and are left out.
 * - on a line of units (devices.<name>.units), one Sparkplug device per unit, `<device>.<unit>`: each
 *   unit is a piece of equipment of its own, with its own map (two meters on one bus both have a
 *   "kwh"), and it lives and dies on its own (DDEATH when the unit falls silent, its line still up).
 * - node metrics: the latency of every job (tag jobs and raw ones alike).
 *
 * A tag read by two jobs of a device is one metric (its latest read wins). Two different tags of
 * one name on one device cannot both be metrics: the config check refuses that when Sparkplug is
 * on (metricConflicts below).
 */

/**
 * @typedef {object} MetricDef
 * @property {string} name the tag name (a `/` makes folders in Sparkplug hosts)
 * @property {string} datatype Sparkplug datatype (metrics.js)
 * @property {string|null} unit engineering unit
 */

/**
 * @typedef {object} DeviceModel
 * @property {string} name the Sparkplug device id: the nines device, or `<device>.<unit>` on a line
 * @property {string} device the nines device
 * @property {string|null} unit its unit on a line
 * @property {MetricDef[]} metrics in the order the tags first appear in the config's jobs
 * @property {string[]} jobs its tag jobs
 * @property {number} minIntervalMs DDATA at most once per this: the shortest value window of its jobs
 * @property {Array<{name: string, tags: string[]}>} groups the tag groups of its device (or unit)
 *   whose every tag is one of its metrics, in config order: the template instances (templates.js)
 */

/**
 * @typedef {object} NodeModel
 * @property {Map<string, DeviceModel>} devices
 * @property {Map<string, string>} jobDevice tag job → its device
 * @property {Map<string, Set<string>>} jobTags tag job → names of its tags
 * @property {string[]} latencyJobs every job, for the latency node metrics
 */

/** The fields of a tag that make its metric: the same name with other fields is another tag */
function tagIdentity (t) {
  return JSON.stringify([t.table, t.address, t.type, t.bit, t.span, t.wordOrder, t.byteOrder, t.scale, t.offset, t.unit]);
}

/**
 * @param {{jobs: Array<{name: string, device: string, kind: string, tags?: object[], values?: {minIntervalMs?: number}}>}} config
 *   a validated gateway config
 * @returns {NodeModel}
 */
function buildModel (config) {
  const devices = new Map();
  const jobDevice = new Map();
  const jobTags = new Map();
  for (const j of config.jobs) {
    if (j.kind !== 'tags' || !Array.isArray(j.tags)) continue;
    const id = sparkplugDeviceId(j.device, j.unit);
    let d = devices.get(id);
    if (d === undefined) {
      d = { name: id, device: j.device, unit: j.unit || null, metrics: [], jobs: [], minIntervalMs: Infinity, seen: new Set() };
      devices.set(id, d);
    }
    d.jobs.push(j.name);
    const windowMs = j.values && typeof j.values.minIntervalMs === 'number' ? j.values.minIntervalMs : 0;
    d.minIntervalMs = Math.min(d.minIntervalMs, windowMs);
    jobDevice.set(j.name, id);
    jobTags.set(j.name, new Set(j.tags.map((t) => t.name)));
    for (const t of j.tags) {
      if (d.seen.has(t.name)) continue;
      d.seen.add(t.name);
      d.metrics.push({ name: t.name, datatype: tagDatatype(t), unit: t.unit || null });
    }
  }
  for (const d of devices.values()) {
    if (!Number.isFinite(d.minIntervalMs)) d.minIntervalMs = 0;
    d.groups = fullGroups(config, d);
    delete d.seen;
  }
  return { devices, jobDevice, jobTags, latencyJobs: config.jobs.map((j) => j.name) };
}

/**
 * The tag groups of a Sparkplug device's owner (its nines device, or its unit on a line) that it
 * polls whole: a group read only in part would make a template instance with members never read.
 * @param {{devices?: object}} config
 * @param {{device: string, unit: string|null, seen: Set<string>}} d
 * @returns {Array<{name: string, tags: string[]}>}
 */
function fullGroups (config, d) {
  const groups = ownerGroups(config, d.device, d.unit);
  if (!groups || typeof groups !== 'object') return [];
  const out = [];
  for (const [name, tags] of Object.entries(groups)) {
    if (!Array.isArray(tags) || tags.length === 0) continue;
    const names = tags.map((t) => t.name);
    if (names.every((n) => d.seen.has(n))) out.push({ name, tags: names });
  }
  return out;
}

/**
 * The tag groups of a device, or of a unit of a line, in the checked config: under
 * `deviceOptions.<device>` (tags.groups, or units.<unit>.groups) where the config keeps a device's
 * options apart from its spec, else under `devices.<device>` (tags.groups; units as a list).
 * @returns {Record<string, Array<{name: string}>>|null}
 */
function ownerGroups (config, device, unit) {
  const opts = config.deviceOptions && config.deviceOptions[device];
  if (opts) {
    const owner = unit ? opts.units && opts.units[unit] : opts.tags;
    return (owner && owner.groups) || null;
  }
  const dev = config.devices && config.devices[device];
  if (!dev) return null;
  const owner = unit ? (Array.isArray(dev.units) ? dev.units.find((u) => u.name === unit) : dev.units && dev.units[unit]) : dev;
  return (owner && owner.tags && owner.tags.groups) || null;
}

/**
 * Tags of one name that differ between the jobs of a device (they would be two metrics of one name).
 * @param {Array<{name: string, device: string, kind?: string, tags?: object[]}>} jobs checked jobs, in config order
 * @returns {Array<{job: number, tag: number, name: string, rule: string}>} job: index in jobs; tag: index in its tags
 */
function metricConflicts (jobs) {
  const first = new Map(); // device + tag name → {job, identity}
  const out = [];
  jobs.forEach((j, ji) => {
    if (!Array.isArray(j.tags)) return;
    j.tags.forEach((t, ti) => {
      const key = `${sparkplugDeviceId(j.device, j.unit)}\u0000${t.name}`;
      const id = tagIdentity(t);
      const seen = first.get(key);
      if (seen === undefined) { first.set(key, { job: j.name, id }); return; }
      if (seen.id !== id) {
        out.push({ job: ji, tag: ti, name: t.name, rule: `names a tag other than the "${t.name}" of job "${seen.job}" on device "${j.device}"; with mqtt.sparkplug a device's tags are one metric set, so a name must mean one tag (rename one, or read the same tag)` });
      }
    });
  });
  return out;
}

/**
 * The Sparkplug device id of a nines device, or of a unit of a line.
 * @param {string} device
 * @param {string|null|undefined} unit
 * @returns {string}
 */
function sparkplugDeviceId (device, unit) {
  return unitKey(device, unit);
}

/**
 * Whether two models give a device the same metric set (a changed set needs a new DBIRTH).
 * @param {DeviceModel|undefined} a
 * @param {DeviceModel|undefined} b
 * @returns {boolean}
 */
function sameMetrics (a, b) {
  if (a === undefined || b === undefined) return a === b;
  return JSON.stringify([a.metrics, a.groups]) === JSON.stringify([b.metrics, b.groups]);
}

module.exports = { buildModel, metricConflicts, sameMetrics, sparkplugDeviceId };
