'use strict';

/**
 * nines-latency-probe's settings → runProbe options, a probe run → a nines latency payload, and
 * where its .hgrm file goes.
 */

const path = require('node:path');
const { invalidArg } = require('./errors');
const { pickDevice, operation, connectionList } = require('./job-spec');
const { num } = require('./device-config');
const { parseRate } = require('../../gateway/base/quantities');

/**
 * How often the node's status counts a run's requests. Each count takes Node-RED's thread, beside
 * the probe's (measure/probe.js PROGRESS_MIN_MS has what that costs on one core): once a second
 * shows a run moving, four times a second (the count's former pace) only costs more.
 */
const STATUS_EVERY_MS = 1000;

/**
 * Settings → runProbe options; throws NINES_ERR_INVALID_ARG naming the field.
 * @param {object} RED
 * @param {object} config
 * @returns {object}
 */
function probeOptions (RED, config) {
  const { device, protocol } = pickDevice(RED, config);
  const count = config.count === '' || config.count === undefined ? undefined : num(config, 'count', 10000, 1, 1e9);
  const durationS = config.duration === '' || config.duration === undefined ? undefined : num(config, 'duration', 10, 0.001, 86400, false);
  if (count === undefined && durationS === undefined) throw invalidArg('count', 'give a count of requests or a duration in seconds');
  const rate = config.rate === '' || config.rate === undefined ? 'max' : config.rate;
  return {
    target: device.target,
    ...operation(config, protocol),
    connections: connectionList(config.connections),
    count,
    durationMs: count === undefined ? durationS * 1000 : undefined,
    ratePerSec: parseRate(typeof rate === 'string' && /^\d+(\.\d+)?$/.test(rate.trim()) ? Number(rate) : rate, 'rate'),
    timeoutMs: device.timeoutMs,
    // read and checked by the job-spec builder; flows saved before the setting get the measuring default (spin)
    precision: config.precision === undefined || config.precision === '' ? undefined : config.precision,
    progressMs: STATUS_EVERY_MS,
    inWorker: true
  };
}

/**
 * One probe run as a nines latency payload (design.md), so nines-latency-merge takes it as is.
 * @param {object} run a ProbeRunResult
 * @param {{seq: number, gateway: string, target: string}} meta seq of the run's job, the source
 * @returns {object}
 */
function runPayload (run, { seq, gateway, target }) {
  return {
    v: 1,
    gateway,
    job: run.name,
    target,
    op: run.label,
    seq,
    start: run.startMs,
    end: run.endMs,
    policy: run.policy,
    count: run.ok + run.errors + run.timeouts + run.skipped,
    ok: run.ok,
    errors: run.errors,
    timeouts: run.timeouts,
    skipped: run.skipped,
    rate: run.ratePerSec,
    unit: 'ms',
    min: run.summary.min,
    mean: run.summary.mean,
    stddev: run.summary.stddev,
    p50: run.summary.p50,
    p90: run.summary.p90,
    p99: run.summary.p99,
    p99_9: run.summary.p99_9,
    p99_99: run.summary.p99_99,
    max: run.summary.max,
    service: run.service,
    lag: run.lag,
    hist: run.hist,
    connections: run.connections,
    elapsedMs: run.elapsedMs
  };
}

/** Where .hgrm files go when the node names no directory: under the Node-RED user directory */
const DEFAULT_HGRM_DIR = 'hgrm';

/**
 * The directory of the probe's .hgrm files: the node's `directory`, relative to the Node-RED user
 * directory (~/.node-red) unless absolute, never the process's working directory, which depends on
 * how Node-RED was started.
 * @param {object} RED
 * @param {{directory?: string}} config
 * @returns {string} an absolute path
 */
function hgrmDirectory (RED, config) {
  const dir = typeof config.directory === 'string' && config.directory.trim() ? config.directory.trim() : DEFAULT_HGRM_DIR;
  if (dir.includes('\0')) throw invalidArg('directory', `directory must be a path; got ${JSON.stringify(config.directory)}`);
  if (path.isAbsolute(dir)) return path.normalize(dir);
  let userDir;
  try {
    userDir = RED.settings && RED.settings.userDir;
  } catch (err) {
    userDir = undefined; // a settings object that throws on unknown keys
  }
  return path.resolve(userDir || process.cwd(), dir);
}

/**
 * A probe's start time for file names: UTC, sortable, no characters a file system refuses,
 * e.g. 20260501T120000.123Z. Every run of one probe shares it, so its files sort together.
 * @param {number} ms epoch ms
 * @returns {string}
 */
function fileStamp (ms) {
  return new Date(ms).toISOString().replace(/[-:]/g, '');
}

/**
 * The .hgrm file of one run: `<dir>/<run name>-<probe start>.hgrm`, so a later probe never
 * overwrites an earlier one.
 * @param {string} dir from hgrmDirectory
 * @param {string} runName e.g. ED-588-@AA-1x (file-safe already)
 * @param {string} stamp from fileStamp
 * @returns {string}
 */
function hgrmFilename (dir, runName, stamp) {
  return path.join(dir, `${runName}-${stamp}.hgrm`);
}

module.exports = { probeOptions, runPayload, hgrmDirectory, hgrmFilename, fileStamp, DEFAULT_HGRM_DIR };
