'use strict';

const { NinesError } = require('../base/errors');

/**
 * What a config reload changes (`nines run` on SIGHUP, or with --watch on a file change): the
 * devices and jobs, compared by their built specs. A job whose spec and device are unchanged keeps
 * running untouched (no gap, `seq` contiguous); a changed job is stopped (its last interval is
 * published) and started with its new spec in the same stream (`seq` goes on, and its next interval
 * starts where the last one ended); a removed one is stopped and its stream ends; a new one starts a
 * new stream, even under the name of a job removed earlier. A device whose spec changed is
 * replaced, and its jobs with it.
 *
 * Sections that shape the process itself (mqtt, gateway.id, workers, mode, hlog, metrics, http)
 * apply at a restart: a reload that changes them is refused whole, nothing changes, and the error names each
 * field, as an invalid config is.
 */

/** Fields outside devices and jobs a reload cannot apply, as config paths */
const FIXED = Object.freeze([
  ['mqtt', (c) => c.mqtt],
  ['gateway.id', (c) => c.gateway.id],
  ['gateway.workers', (c) => c.gateway.workers],
  ['gateway.mode', (c) => c.gateway.mode],
  ['gateway.hlog', (c) => c.gateway.hlog],
  ['gateway.metrics', (c) => c.gateway.metrics],
  ['gateway.http', (c) => c.gateway.http]
]);

/**
 * @typedef {object} ReloadPlan
 * @property {string[]} devicesRemoved devices to take out (removed or changed)
 * @property {object[]} devicesAdded device specs to put in (new or changed)
 * @property {string[]} jobsStopped jobs to stop first (removed, changed, or on a changed device)
 * @property {object[]} jobsStarted job specs to start (new, changed, or on a changed device)
 * @property {{kept: string[], changed: string[], added: string[], removed: string[]}} jobs by name, for the report
 */

/**
 * Compares two configs by their built specs.
 * @param {{config: object, devices: object[], jobs: object[]}} before the running config and its specs
 * @param {{config: object, devices: object[], jobs: object[]}} after the new config, validated, and its specs
 * @returns {ReloadPlan}
 * @throws {NinesError} NINES_ERR_CONFIG when a field that applies only at a restart changed
 */
function planReload (before, after) {
  const fixed = FIXED.filter(([, get]) => !same(get(before.config), get(after.config))).map(([path]) => path);
  if (fixed.length !== 0) {
    const errors = fixed.map((path) => ({ path, value: null, rule: 'changed: it applies when the gateway restarts, not on reload' }));
    throw new NinesError('NINES_ERR_CONFIG', `config not reloaded, nothing changed: ${fixed.join(', ')} ${fixed.length === 1 ? 'changes' : 'change'} only at a restart`, { errors });
  }
  const oldDevices = new Map(before.devices.map((d) => [d.name, d]));
  const newDevices = new Map(after.devices.map((d) => [d.name, d]));
  const changedDevices = new Set();
  const devicesRemoved = [];
  const devicesAdded = [];
  for (const [name, d] of oldDevices) {
    const n = newDevices.get(name);
    if (n === undefined || !same(d, n)) { devicesRemoved.push(name); if (n !== undefined) changedDevices.add(name); }
  }
  for (const [name, d] of newDevices) if (!oldDevices.has(name) || changedDevices.has(name)) devicesAdded.push(d);

  const oldJobs = new Map(before.jobs.map((j) => [j.name, j]));
  const newJobs = new Map(after.jobs.map((j) => [j.name, j]));
  const report = { kept: [], changed: [], added: [], removed: [] };
  const jobsStopped = [];
  const jobsStarted = [];
  for (const [name, j] of oldJobs) {
    const n = newJobs.get(name);
    if (n === undefined) { report.removed.push(name); jobsStopped.push(name); continue; }
    if (same(j, n) && !changedDevices.has(j.device) && !devicesRemoved.includes(j.device)) { report.kept.push(name); continue; }
    report.changed.push(name);
    jobsStopped.push(name);
    jobsStarted.push(n);
  }
  for (const [name, j] of newJobs) {
    if (oldJobs.has(name)) continue;
    report.added.push(name);
    jobsStarted.push(j);
  }
  return { devicesRemoved, devicesAdded, jobsStopped, jobsStarted, jobs: report };
}

/** Deep equality of plain data (specs and config sections), by their JSON */
function same (a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

module.exports = { planReload };
