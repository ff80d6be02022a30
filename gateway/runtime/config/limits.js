'use strict';

const D = require('./defaults');

/**
 * The job and device limits (defaults.js CONFIG_MAX_JOBS, CONFIG_MAX_DEVICES), checked from
 * counts alone: the loader counts the nodes of the parsed YAML document before turning it into
 * objects, and checkConfig counts a plain object before the schema sees any job. Past a limit
 * nothing else is checked, so the answer comes at once.
 */

/**
 * Adds one problem per section over its limit.
 * @param {{jobs?: number, devices?: number}} counts entries in each section (undefined: unknown)
 * @param {import('./problems').Problems} problems
 * @returns {boolean} true when every count is within its limit
 */
function checkLimits ({ jobs, devices }, problems) {
  let ok = true;
  if (devices !== undefined && devices > D.CONFIG_MAX_DEVICES) {
    problems.add(['devices'], undefined, `${devices} devices; at most ${D.CONFIG_MAX_DEVICES} per gateway (split the config across gateways)`);
    ok = false;
  }
  if (jobs !== undefined && jobs > D.CONFIG_MAX_JOBS) {
    problems.add(['jobs'], undefined, `${jobs} jobs; at most ${D.CONFIG_MAX_JOBS} per gateway (split the config across gateways)`);
    ok = false;
  }
  return ok;
}

/**
 * Counts the jobs and devices of a parsed config without touching any of them: the length of
 * the jobs list and the number of device names.
 * @param {*} obj
 * @returns {{jobs?: number, devices?: number}}
 */
function countSections (obj) {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return {};
  const jobs = Array.isArray(obj.jobs) ? obj.jobs.length : undefined;
  const d = obj.devices;
  const devices = d !== null && typeof d === 'object' && !Array.isArray(d) ? Object.keys(d).length : undefined;
  return { jobs, devices };
}

module.exports = { checkLimits, countSections };
