'use strict';

const D = require('./defaults');
const { isMap } = require('./fields');
const { checkJobTags } = require('./check-tags');
const { checkValues } = require('./check-jobs');
const { specProblem } = require('./spec-paths');
const { buildJobSpec } = require('../../jobs/spec');

/**
 * Scan classes: the tag groups of one device read at different rates, from one device entry, with
 * no job written per rate:
 *
 *   scan:
 *     fast: { rate: 10/s, tags: [measurements] }
 *     slow: { rate: 1/min, tags: nameplate, values: every }
 *
 * Each class is one job, named `<device>.<class>` (on a line `<device>.<unit>.<class>`), built by
 * the job builder (jobs/spec.js) as a job written under `jobs:` is. A job plans its own reads
 * (tags/plan.js), so merged reads never cross classes: a register of the slow class is never read
 * at the fast rate because it sits beside a fast one. A tag group is in one class at most: one
 * group, one rate. A reload compares these jobs by their specs like any other (runtime/reload.js):
 * a changed rate restarts only that class's job.
 */

/** A class name: a topic level of its own within the job's name, so no dot */
const CLASS_RE = /^[A-Za-z0-9_-]{1,32}$/;
/** Job names (jobs/spec.js) */
const MAX_JOB_NAME = 64;

/**
 * @typedef {object} ScanEntry the scan classes of a device, or of a unit of a line
 * @property {string} device
 * @property {string|null} unit
 * @property {Array<{name: string, value: *, at: Array<string|number>}>} classes
 * @property {object} context the target and quirks its tags are checked with (a unit's over its line's)
 * @property {import('./check-tags').DeviceTags|null} tags its tag groups, checked
 * @property {{name: string, path: string}} owner for messages
 */

/**
 * Builds the job of every scan class.
 * @param {import('./problems').Problems} problems
 * @param {ScanEntry[]} entries
 * @param {object} ctx
 * @param {Record<string, import('../../devices/spec').DeviceSpec>} ctx.devices
 * @param {Map<string, Array<string|number>>} ctx.taken job names already used, and where (jobs[i].name)
 * @param {number} ctx.intervalMs the gateway's summary interval
 * @param {number} ctx.room jobs that may still be added (defaults.js CONFIG_MAX_JOBS less the jobs written)
 * @returns {import('../../jobs/spec').JobSpec[]}
 */
function checkScanClasses (problems, entries, { devices, taken, intervalMs, room }) {
  const out = [];
  const count = entries.reduce((n, e) => n + e.classes.length, 0);
  if (count > room) {
    problems.add(['devices'], undefined, `scan classes make ${count} jobs, beside the ${D.CONFIG_MAX_JOBS - room} written: at most ${D.CONFIG_MAX_JOBS} per gateway (split the config across gateways)`);
    return out;
  }
  for (const e of entries) {
    const device = devices[e.device];
    if (device === undefined) continue;
    const inClass = new Map(); // group → the class that reads it
    for (const c of e.classes) {
      if (!isMap(c.value)) continue; // the schema said so
      if (!CLASS_RE.test(c.name)) { problems.add(c.at, c.name, 'is not a scan class name: 1-32 letters, digits, _ or - (it becomes the last part of its job\'s name)'); continue; }
      const name = [e.device, e.unit, c.name].filter((p) => p !== null).join('.');
      if (name.length > MAX_JOB_NAME) { problems.add(c.at, c.name, `makes the job name "${name}", longer than ${MAX_JOB_NAME} characters: use shorter device, unit or class names`); continue; }
      if (taken.has(name)) { problems.add(c.at, c.name, `makes the job "${name}", which is already the name of ${taken.get(name)}`); continue; }
      taken.set(name, c.at.join('.'));
      const groups = typeof c.value.tags === 'string' ? [c.value.tags] : Array.isArray(c.value.tags) ? c.value.tags : null;
      if (groups === null) continue; // the schema said so
      let ok = true;
      groups.forEach((g, k) => {
        const at = typeof c.value.tags === 'string' ? c.at.concat('tags') : c.at.concat('tags', k);
        if (inClass.has(g) && inClass.get(g) !== c.name) { problems.add(at, g, `is read by scan class "${inClass.get(g)}" already: a tag group has one rate`); ok = false; }
        inClass.set(g, c.name);
      });
      if (!ok || (e.tags && e.tags.failed)) continue;
      const tags = checkJobTags(problems, c.at.concat('tags'), c.value.tags, e.owner, e.context, e.tags);
      const values = checkValues(problems, c.at.concat('values'), c.value.values);
      if (tags === undefined || problems.has(c.at)) continue;
      const input = { name, tags, ratePerSec: c.value.rate, intervalMs, values };
      if (e.unit !== null) input.unit = e.unit;
      try {
        out.push(buildJobSpec(input, { device, purpose: 'poll' }));
      } catch (err) {
        specProblem(problems, err, (field) => (field === 'ratePerSec' ? c.at.concat('rate') : /^values\./.test(field) ? c.at.concat(field.split('.')) : null), c.at);
      }
    }
  }
  return out;
}

module.exports = { checkScanClasses };
