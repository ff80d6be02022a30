'use strict';

const { NinesError } = require('../../base/errors');
const C = require('../../base/constants');
const D = require('./defaults');
const { parseBrokerUrl } = require('./broker-url');
const { checkName, checkPrefix } = require('./topics');

/**
 * The Publisher's options: what each means, its default, and its check (at the boundary, naming
 * the option). Also the mapping from a loaded gateway config, so it lives in one place.
 */

/**
 * @typedef {object} PublisherOptions
 * @property {string} url broker URL: mqtt://, mqtts://, tcp://, ssl://, ws://, wss://
 * @property {string} gatewayId topic level of this gateway
 * @property {string} [prefix='nines']
 * @property {string} [clientId] default "nines-<gatewayId>"
 * @property {string} [username]
 * @property {string} [password]
 * @property {object} [tls] passed to tls.connect: {ca, cert, key, rejectUnauthorized, servername, …}
 *   (keys ending in "Path", from the config loader, are left out)
 * @property {0|1|2} [qos=1] QoS of latency, value and error messages (status and will use 1)
 * @property {4|5} [protocolVersion=4] 4 = MQTT 3.1.1, 5 = MQTT 5
 * @property {number} [bufferMax=1000] latency messages kept while waiting for the broker
 * @property {number} [bufferMaxBytes=67108864] bytes kept likewise
 * @property {{dir: string, maxBytes: number, syncIntervalMs?: number}} [spool] keep summaries and
 *   values on disk (spool.js) while the broker is away, across restarts; omitted: memory only
 * @property {number} [maxInflight=32] messages handed to mqtt.js and not yet acknowledged
 * @property {number} [valuesMinIntervalMs=100] value messages per job at most once per this, ms
 * @property {number} [errorsMinIntervalMs=1000] error messages per job at most once per this, ms
 * @property {number} [keepaliveMs=30000] MQTT keepalive (sent in whole seconds; 0 = none)
 * @property {number} [connectTimeoutMs=10000] per connection attempt
 * @property {number} [reconnectInitialMs=500] first reconnect delay (doubling, jittered)
 * @property {number} [reconnectMaxMs=30000] cap of the reconnect delay
 * @property {number} [stopTimeoutMs=2000] how long stop() may spend flushing, ms
 * @property {string} [version] reported in the status (default: the package version)
 * @property {() => number} [random=Math.random] jitter source, injectable for tests
 */

/** An option's value or its default, checked. */
function pick (value, def, field, ok, rule) {
  if (value === undefined) return def;
  if (!ok(value)) throw new NinesError('NINES_ERR_INVALID_ARG', `${field}: ${JSON.stringify(value)} ${rule}`, { field, value });
  return value;
}

/**
 * A duration option in ms: a finite number >= 0, or the default when undefined.
 * @param {*} value
 * @param {number} def
 * @param {string} field
 * @returns {number}
 * @throws {NinesError} NINES_ERR_INVALID_ARG
 */
function checkMs (value, def, field) {
  return pick(value, def, field, (v) => typeof v === 'number' && Number.isFinite(v) && v >= 0, 'must be a number of milliseconds >= 0');
}

const intAtLeast = (min) => (v) => Number.isInteger(v) && v >= min;

/** @returns {{dir: string, maxBytes: number, syncIntervalMs: number}|null} */
function checkSpoolOption (spool) {
  if (spool === undefined || spool === null) return null;
  const dir = pick(spool.dir, undefined, 'spool.dir', (v) => typeof v === 'string' && v !== '', 'must be a folder path');
  if (dir === undefined) throw new NinesError('NINES_ERR_INVALID_ARG', 'spool.dir: is required (a folder path)', { field: 'spool.dir' });
  return {
    dir,
    maxBytes: pick(spool.maxBytes, D.MQTT_SPOOL_MAX_BYTES, 'spool.maxBytes', intAtLeast(D.MQTT_SPOOL_MIN_BYTES), `must be an integer >= ${D.MQTT_SPOOL_MIN_BYTES}`),
    syncIntervalMs: checkMs(spool.syncIntervalMs, D.MQTT_SPOOL_SYNC_MS, 'spool.syncIntervalMs')
  };
}

/**
 * Checks Publisher options and fills in the defaults.
 * @param {PublisherOptions} opts
 * @returns {Required<Omit<PublisherOptions, 'url'|'username'|'password'|'tls'>> & {broker: import('./broker-url').BrokerUrl,
 *   username?: string, password?: string, tls: object}}
 * @throws {NinesError} NINES_ERR_INVALID_ARG naming the option, the value and the rule
 */
function checkPublisherOptions (opts) {
  const o = opts || {};
  const gatewayId = checkName(o.gatewayId, 'gatewayId');
  const tls = {};
  for (const [k, v] of Object.entries(o.tls || {})) if (!/Path$/.test(k) && v !== undefined) tls[k] = v;
  return {
    broker: parseBrokerUrl(o.url, 'url'),
    gatewayId,
    prefix: o.prefix === undefined ? C.MQTT_DEFAULT_PREFIX : checkPrefix(o.prefix),
    clientId: pick(o.clientId, `nines-${gatewayId}`, 'clientId', (v) => typeof v === 'string' && v !== '', 'must be a non-empty string'),
    username: pick(o.username, undefined, 'username', (v) => typeof v === 'string', 'must be a string'),
    password: o.password === undefined ? undefined : pick(o.password, undefined, 'password', (v) => typeof v === 'string' || Buffer.isBuffer(v), 'must be a string'),
    tls,
    qos: pick(o.qos, D.MQTT_QOS, 'qos', (v) => [0, 1, 2].includes(v), 'must be 0, 1 or 2'),
    protocolVersion: pick(o.protocolVersion, D.MQTT_PROTOCOL_VERSION, 'protocolVersion', (v) => v === 4 || v === 5, 'must be 4 or 5'),
    bufferMax: pick(o.bufferMax, D.MQTT_BUFFER_MAX, 'bufferMax', intAtLeast(0), 'must be an integer >= 0'),
    bufferMaxBytes: pick(o.bufferMaxBytes, D.MQTT_BUFFER_MAX_BYTES, 'bufferMaxBytes', intAtLeast(0), 'must be an integer >= 0'),
    maxInflight: pick(o.maxInflight, D.MQTT_MAX_INFLIGHT, 'maxInflight', intAtLeast(1), 'must be an integer >= 1'),
    spool: checkSpoolOption(o.spool),
    valuesMinIntervalMs: checkMs(o.valuesMinIntervalMs, 1000 / D.VALUES_MAX_RATE_PER_SEC, 'valuesMinIntervalMs'),
    errorsMinIntervalMs: checkMs(o.errorsMinIntervalMs, D.MQTT_ERRORS_MIN_INTERVAL_MS, 'errorsMinIntervalMs'),
    keepaliveMs: checkMs(o.keepaliveMs, D.MQTT_KEEPALIVE_MS, 'keepaliveMs'),
    connectTimeoutMs: checkMs(o.connectTimeoutMs, D.MQTT_CONNECT_TIMEOUT_MS, 'connectTimeoutMs'),
    reconnectInitialMs: checkMs(o.reconnectInitialMs, D.MQTT_RECONNECT_INITIAL_MS, 'reconnectInitialMs'),
    reconnectMaxMs: checkMs(o.reconnectMaxMs, D.MQTT_RECONNECT_MAX_MS, 'reconnectMaxMs'),
    stopTimeoutMs: checkMs(o.stopTimeoutMs, D.MQTT_STOP_TIMEOUT_MS, 'stopTimeoutMs'),
    version: o.version === undefined ? require('../../../package.json').version : String(o.version),
    random: pick(o.random, Math.random, 'random', (v) => typeof v === 'function', 'must be a function returning a number in [0, 1)')
  };
}

/**
 * @param {import('../config/validate').Config} config from loadConfig / validateConfig
 * @param {object} [opts]
 * @param {string} [opts.url] broker URL; required when config.mqtt.url is null (embedded broker:
 *   pass the started broker's url)
 * @param {string} [opts.version] reported in the status
 * @param {{username: string, password: string}} [opts.auth] the login to use instead of the
 *   config's: the embedded broker's credential for the gateway's own client (broker.gatewayAuth)
 * @returns {object} options for `new Publisher(...)`
 */
function publisherOptions (config, { url, version, auth } = {}) {
  const m = config.mqtt;
  const out = {
    url: url || m.url,
    prefix: m.prefix,
    gatewayId: config.gateway.id,
    clientId: m.clientId,
    qos: m.qos,
    protocolVersion: m.protocolVersion,
    bufferMax: m.bufferMax,
    keepaliveMs: m.keepaliveMs,
    connectTimeoutMs: m.connectTimeoutMs,
    errorsMinIntervalMs: m.errorsMinIntervalMs,
    reconnectInitialMs: m.reconnectInitialMs,
    reconnectMaxMs: m.reconnectMaxMs
  };
  if (auth) {
    out.username = auth.username;
    out.password = auth.password;
  } else {
    if (m.username !== null) out.username = m.username;
    if (m.password !== null) out.password = m.password;
  }
  if (m.tls) out.tls = m.tls;
  if (m.spool) out.spool = { dir: m.spool.dir, maxBytes: m.spool.maxBytes, syncIntervalMs: m.spool.syncIntervalMs };
  if (version !== undefined) out.version = version;
  return out;
}

/**
 * The job list for Publisher#setJobs: names plus each job's value window from values.maxRate.
 * @param {import('../config/validate').Config} config
 * @returns {Array<{name: string, valuesMinIntervalMs: number}>}
 */
function publisherJobs (config) {
  return config.jobs.map((j) => ({ name: j.name, valuesMinIntervalMs: j.values.minIntervalMs }));
}

module.exports = { checkPublisherOptions, checkMs, publisherOptions, publisherJobs };
