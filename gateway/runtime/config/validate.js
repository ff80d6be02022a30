'use strict';

const os = require('node:os');
const path = require('node:path');
const { parseTarget } = require('../../drivers/target');
const D = require('./defaults');
const { Problems } = require('./problems');
const { checkSchema } = require('./schema-check');
const { isMap, durationField, reservedKey } = require('./fields');
const { checkMqtt } = require('./check-mqtt');
const { checkJobs } = require('./check-jobs');
const { checkSparkplugTags } = require('./check-sparkplug');
const { checkDeviceTags } = require('./check-tags');
const { checkEndpoint } = require('./check-http');
const { NAME_RULE } = require('./schema');
const { checkLimits, countSections } = require('./limits');
const { MAX_QUIRK_DELAY_MS } = require('../../drivers/connection-options');

/**
 * @typedef {object} GatewayConfig
 * @property {string} id topic level of this gateway (default: the host name, cleaned)
 * @property {number} intervalMs latency summary interval, >= 100
 * @property {'auto'|number} workers worker threads ("auto": the runtime decides)
 * @property {'worker'|'inline'} mode poll in worker threads or on the main thread
 * @property {string|null} hlog absolute directory for .hlog interval logs, or null for none
 * @property {import('./check-http').EndpointConfig|null} metrics the metrics endpoint, or null (off)
 * @property {import('./check-http').EndpointConfig|null} http the status page, or null (off)
 */

/**
 * @typedef {object} DeviceConfig
 * @property {string} name
 * @property {import('../../drivers/target').Target} target
 * @property {number} timeoutMs per request
 * @property {number} connectTimeoutMs
 * @property {number} queueMax requests waiting per job (each job has its own queue)
 * @property {number} maxConnections connections the device gets, shared by all its jobs
 * @property {number|undefined} maxInflight requests one connection carries at once (Modbus TCP pipelining; default 1)
 * @property {number|undefined} maxGap registers or bits a coalesced tag read may skip (devices/spec.js default)
 * @property {number|undefined} maxRegistersPerRequest largest register read (default 125)
 * @property {number|undefined} maxBitsPerRequest largest bit read (default 2000)
 * @property {0|1|undefined} addressBase 1: tag addresses count from 1 (default 0)
 * @property {string|undefined} order word and byte order of tags that give none (default ABCD)
 * @property {number[]|undefined} unsupportedFunctionCodes write function codes the device lacks
 * @property {number} interFrameDelayMs the pause the line needs after each request before the next (0: none)
 * @property {number} delayAfterConnectMs the pause after a connect before the first request (0: none)
 * @property {boolean} allowWrites whether jobs may write to it (off unless the config says so, as in Node-RED)
 * @property {{initialMs: number, maxMs: number}} backoff reconnect delays (capped exponential, jittered)
 * @property {import('./check-tags').DeviceTags|null} tags the device's tag groups (checked), or null
 * @property {Array<{name: string, unitId: number, tags: import('./check-tags').DeviceTags|null}>|undefined} units
 *   the units of a line, each with its own tag groups; undefined for a device of one unit
 */

/**
 * @typedef {object} Config
 * @property {GatewayConfig} gateway
 * @property {import('./check-mqtt').MqttConfig} mqtt
 * @property {Record<string, DeviceConfig>} devices
 * @property {import('./check-jobs').JobConfig[]} jobs
 * @property {{path: string|null, format: 'yaml'|'json'|null}} source where the config came from
 */

const NAME_RE = new RegExp(D.NAME_PATTERN);

/** The host name as a valid gateway id (topic level), for the default. */
function defaultGatewayId () {
  const id = os.hostname().replace(/[^A-Za-z0-9_.-]/g, '-').slice(0, 64);
  return id || 'gateway';
}

function checkGateway (problems, raw, baseDir, env) {
  const g = isMap(raw) ? raw : {};
  return {
    id: typeof g.id === 'string' && NAME_RE.test(g.id) ? g.id : defaultGatewayId(),
    intervalMs: durationField(problems, ['gateway', 'interval'], g.interval, {
      def: D.GATEWAY_INTERVAL_MS, minMs: D.GATEWAY_MIN_INTERVAL_MS, maxMs: D.GATEWAY_MAX_INTERVAL_MS
    }),
    workers: Number.isInteger(g.workers) ? g.workers : 'auto',
    mode: g.mode === 'inline' ? 'inline' : 'worker',
    hlog: typeof g.hlog === 'string' && g.hlog !== '' ? path.resolve(baseDir, g.hlog) : null,
    metrics: checkEndpoint(problems, 'metrics', g.metrics, env),
    http: checkEndpoint(problems, 'http', g.http, env)
  };
}

/** Reconnect delays: min ≥ 1 ms, max ≥ min. */
function checkBackoff (problems, segs, raw) {
  const b = isMap(raw) ? raw : {};
  const initialMs = durationField(problems, segs.concat('min'), b.min, { def: D.DEVICE_BACKOFF_MIN_MS, minMs: 1, maxMs: 3600000 });
  const maxMs = durationField(problems, segs.concat('max'), b.max, { def: Math.max(initialMs, D.DEVICE_BACKOFF_MAX_MS), minMs: 1, maxMs: 3600000 });
  if (maxMs < initialMs) problems.add(segs.concat('max'), b.max, `must be at least backoff.min (${initialMs} ms)`);
  return { initialMs, maxMs: Math.max(initialMs, maxMs) };
}

/** devices/spec.js field → the YAML key it comes from */
const DEVICE_SPEC_FIELDS = Object.freeze({
  maxConnections: 'maxConnections',
  maxInflight: 'maxInflight',
  maxGap: 'maxGap',
  maxRegistersPerRequest: 'maxRegistersPerRequest',
  maxBitsPerRequest: 'maxBitsPerRequest',
  addressBase: 'addressBase',
  order: 'order',
  unsupportedFunctionCodes: 'unsupportedFunctionCodes',
  timeoutMs: 'timeout',
  connectTimeoutMs: 'connectTimeout',
  queueMax: 'queue',
  backoff: 'backoff',
  interFrameDelayMs: 'interFrameDelay',
  delayAfterConnectMs: 'delayAfterConnect'
});

/**
 * A device of the config as devices/spec.js takes it (one mapping, used by the config check and by
 * the gateway that builds the specs).
 * @param {DeviceConfig} d
 * @returns {object}
 */
function deviceSpecInput (d) {
  const out = {
    name: d.name,
    target: d.target,
    maxConnections: d.maxConnections,
    timeoutMs: d.timeoutMs,
    connectTimeoutMs: d.connectTimeoutMs,
    backoff: d.backoff,
    queueMax: d.queueMax
  };
  for (const key of ['maxInflight', 'maxGap', 'maxRegistersPerRequest', 'maxBitsPerRequest', 'addressBase', 'order', 'unsupportedFunctionCodes',
    'interFrameDelayMs', 'delayAfterConnectMs']) if (d[key] !== undefined) out[key] = d[key];
  if (d.units !== undefined) out.units = d.units.map(({ tags, context, ...unit }) => unit);
  return out;
}

/** Quirks a unit of a line may set for itself (devices/spec.js UNIT_INHERITS) */
const UNIT_QUIRKS = Object.freeze(['maxGap', 'maxRegistersPerRequest', 'maxBitsPerRequest', 'addressBase', 'order', 'unsupportedFunctionCodes']);

/**
 * The units of a line as written (a map of names), as devices/spec.js takes them; their tags are
 * checked once the device spec is built.
 * @returns {Array<object>|undefined}
 */
function configUnits (problems, name, raw) {
  if (!isMap(raw)) return undefined;
  return Object.entries(raw).filter(([unit, u]) => isMap(u) && !reservedKey(problems, ['devices', name, 'units', unit], unit)).map(([unit, u]) => {
    const out = { name: unit, unitId: u.unitId };
    if (u.backoff !== undefined) out.backoff = checkBackoff(problems, ['devices', name, 'units', unit, 'backoff'], u.backoff);
    for (const key of UNIT_QUIRKS) if (u[key] !== undefined) out[key] = u[key];
    out.tags = u.tags;
    return out;
  });
}

/** The YAML path of a devices/spec.js field (`units[2].unitId` → units.<name>.unitId) */
function specFieldPath (name, field, units) {
  const m = /^units\[(\d+)\](?:\.(.+))?$/.exec(field);
  if (m !== null && units && units[Number(m[1])]) {
    const rest = m[2] === undefined ? [] : m[2].split('.').map((k) => (k === 'initialMs' ? 'min' : k === 'maxMs' ? 'max' : k));
    return ['devices', name, 'units', units[Number(m[1])].name, ...rest];
  }
  if (DEVICE_SPEC_FIELDS[field] !== undefined) return ['devices', name, DEVICE_SPEC_FIELDS[field]];
  return null;
}

function checkDevices (problems, raw, baseDir) {
  /** @type {Record<string, DeviceConfig>} */
  const devices = {};
  if (!isMap(raw)) return devices;
  for (const [name, d] of Object.entries(raw)) {
    const at = (key) => ['devices', name, key];
    // checked all the same, but kept only under a valid name (never as the prototype, C.RESERVED_NAME)
    const valid = NAME_RE.test(name);
    if (!valid) problems.add(['devices', name], name, `is not a valid device name; ${NAME_RULE}`);
    if (!isMap(d)) continue;
    let target;
    if (typeof d.target === 'string' && d.target !== '') {
      try {
        target = parseTarget(d.target);
      } catch (err) {
        problems.add(at('target'), d.target, `is not a valid target: ${err.message}`);
      }
    }
    const device = {
      name,
      target,
      timeoutMs: durationField(problems, at('timeout'), d.timeout, { def: D.DEVICE_TIMEOUT_MS, minMs: 1, maxMs: 3600000 }),
      connectTimeoutMs: durationField(problems, at('connectTimeout'), d.connectTimeout, { def: D.DEVICE_CONNECT_TIMEOUT_MS, minMs: 1, maxMs: 3600000 }),
      queueMax: Number.isInteger(d.queue) ? d.queue : D.DEVICE_QUEUE_MAX,
      maxConnections: Number.isInteger(d.maxConnections) ? d.maxConnections : D.DEVICE_MAX_CONNECTIONS,
      // the request-shaping fields are checked against the target by devices/spec.js (absent: its defaults)
      maxInflight: Number.isInteger(d.maxInflight) ? d.maxInflight : undefined,
      maxGap: Number.isInteger(d.maxGap) ? d.maxGap : undefined,
      maxRegistersPerRequest: Number.isInteger(d.maxRegistersPerRequest) ? d.maxRegistersPerRequest : undefined,
      maxBitsPerRequest: Number.isInteger(d.maxBitsPerRequest) ? d.maxBitsPerRequest : undefined,
      addressBase: d.addressBase === 0 || d.addressBase === 1 ? d.addressBase : undefined,
      order: typeof d.order === 'string' ? d.order : undefined,
      unsupportedFunctionCodes: Array.isArray(d.unsupportedFunctionCodes) ? d.unsupportedFunctionCodes : undefined,
      // line quirks (drivers/connection.js): 0 is none
      interFrameDelayMs: durationField(problems, at('interFrameDelay'), d.interFrameDelay, { def: 0, maxMs: MAX_QUIRK_DELAY_MS }),
      delayAfterConnectMs: durationField(problems, at('delayAfterConnect'), d.delayAfterConnect, { def: 0, maxMs: MAX_QUIRK_DELAY_MS }),
      allowWrites: d.allowWrites === true,
      backoff: checkBackoff(problems, at('backoff'), d.backoff),
      units: configUnits(problems, name, d.units)
    };
    if (target) {
      // the one device-spec check (devices/spec.js): rules that span fields and the target
      let spec;
      try {
        spec = require('../../devices/spec').buildDeviceSpec(deviceSpecInput(device));
      } catch (err) {
        const field = err.details && typeof err.details.field === 'string' ? err.details.field : null;
        const segs = field === null ? null : specFieldPath(name, field, device.units);
        if (segs !== null) problems.add(segs, err.details.value, err.message.replace(/^device \S+ /, '').replace(/; got .*$/, ''));
        else problems.add(['devices', name], undefined, err.message);
        continue;
      }
      if (spec.units === null) {
        device.tags = checkDeviceTags(problems, ['devices', name, 'tags'], d.tags, device, baseDir);
      } else {
        // on a line, a map of registers belongs to each unit, not to the line
        if (d.tags !== undefined) problems.add(at('tags'), undefined, 'belongs to the units of a line: put each group under devices.<name>.units.<unit>.tags');
        device.tags = null;
        device.units.forEach((u, i) => {
          // what a unit's tags are checked with: its own quirks over the line's (devices/spec.js)
          u.context = { target: spec.target, ...spec.units[i] };
          u.tags = checkDeviceTags(problems, ['devices', name, 'units', u.name, 'tags'], u.tags, u.context, baseDir);
        });
      }
      if (valid) devices[name] = device;
    }
  }
  checkSharedLines(problems, devices);
  return devices;
}

/**
 * Two devices on one serial line: a serial port opens once, so the second device could never connect;
 * a serial server's port is one line too, and most take one client per port (the second is refused),
 * while those that take several send every reply from the line to all of them, where nothing can tell
 * whose it is. One device owns a line; the line's slaves are its units.
 * @param {import('./problems').Problems} problems
 * @param {Record<string, DeviceConfig>} devices
 */
function checkSharedLines (problems, devices) {
  const owners = new Map();
  for (const [name, d] of Object.entries(devices)) {
    const t = d.target;
    const line = t.protocol === 'modbus+rtu' ? `serial port ${t.path}` : t.protocol === 'modbus+rtutcp' ? `serial server port ${t.host.toLowerCase()}:${t.port}` : null;
    if (line === null) continue;
    const owner = owners.get(line);
    if (owner === undefined) { owners.set(line, name); continue; }
    problems.add(['devices', name, 'target'], t.url, `uses the ${line}, as device "${owner}" does: one serial line is one device, ` +
      (t.protocol === 'modbus+rtu' ? 'and a serial port opens once' : 'and a serial server port takes one client (or sends every reply to all of them)') +
      `; list the line's slaves as units of one device (devices.${owner}.units)`);
  }
}

/**
 * Checks a parsed config and fills in defaults. Reports every problem, not only the first, except
 * past the job or device limit (defaults.js), which is reported alone and at once.
 * @param {*} obj parsed YAML or JSON
 * @param {object} [opts]
 * @param {Record<string, string|undefined>} [opts.env=process.env] for NINES_MQTT_PASSWORD,
 *   NINES_MQTT_EMBEDDED_PASSWORD, NINES_METRICS_PASSWORD and NINES_HTTP_PASSWORD
 * @param {string} [opts.baseDir=process.cwd()] directory relative TLS paths start from
 * @returns {{config: Config|null, problems: Problems}} config is null when there are problems
 */
function checkConfig (obj, { env = process.env, baseDir = process.cwd() } = {}) {
  const problems = new Problems();
  // before the schema and before any per-job object: past a limit, that is the only answer
  if (!checkLimits(countSections(obj), problems)) return { config: null, problems };
  checkSchema(obj, problems);
  if (!isMap(obj)) return { config: null, problems };
  const gateway = checkGateway(problems, obj.gateway, baseDir, env);
  const mqtt = checkMqtt(problems, obj.mqtt, { env, baseDir, gatewayId: gateway.id });
  const devices = checkDevices(problems, obj.devices, baseDir);
  const deviceNames = isMap(obj.devices) ? Object.keys(obj.devices) : [];
  const jobs = checkJobs(problems, obj.jobs, devices, deviceNames);
  // only on jobs that all passed: then jobs[i] is the i-th job written, and the paths are right
  if (!problems.size) checkSparkplugTags(problems, mqtt.sparkplug, jobs);
  if (problems.size) return { config: null, problems };
  return { config: { gateway, mqtt, devices, jobs, source: { path: null, format: null } }, problems };
}

/**
 * Validates a config object (already parsed) and returns it normalized: defaults filled in,
 * durations in ms, rates per second (Infinity for "max"), targets parsed, TLS files read.
 * @param {*} obj
 * @param {object} [opts]
 * @param {Record<string, string|undefined>} [opts.env=process.env] for NINES_MQTT_PASSWORD
 * @param {string} [opts.baseDir=process.cwd()] directory relative TLS paths start from
 * @returns {Config}
 * @throws {import('../../base/errors').NinesError} NINES_ERR_CONFIG; details.errors lists {path, value, rule}
 */
function validateConfig (obj, opts) {
  const { config, problems } = checkConfig(obj, opts);
  if (!config) throw problems.toError();
  return config;
}

/**
 * A copy of a config that is safe to log or print: no password, no key material.
 * @param {Config} config
 * @returns {object}
 */
function redactConfig (config) {
  const copy = { ...config, mqtt: { ...config.mqtt } };
  if (copy.gateway) {
    copy.gateway = { ...copy.gateway };
    for (const key of ['metrics', 'http']) {
      const e = copy.gateway[key];
      if (e && e.login) copy.gateway[key] = { ...e, login: { ...e.login, password: '***' } };
    }
  }
  if (copy.mqtt.password !== null) copy.mqtt.password = '***';
  if (copy.mqtt.embedded && copy.mqtt.embedded.auth) {
    copy.mqtt.embedded = { ...copy.mqtt.embedded, auth: { ...copy.mqtt.embedded.auth, password: '***' } };
  }
  if (copy.mqtt.tls) {
    const { ca, cert, key, ...rest } = copy.mqtt.tls;
    copy.mqtt.tls = { ...rest, ca: ca ? '<ca>' : undefined, cert: cert ? '<cert>' : undefined, key: key ? '<key>' : undefined };
  }
  return copy;
}

module.exports = { validateConfig, checkConfig, redactConfig, deviceSpecInput };
