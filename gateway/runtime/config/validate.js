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
const { buildDeviceSpec } = require('../../devices/spec');
const { sharedLines } = require('../../devices/line');
const { specProblem } = require('./spec-paths');
const { readTlsFile } = require('./tls-files');

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
 * What the config says of a device beyond its spec (the spec is what runs: devices/spec.js).
 * @typedef {object} DeviceOptions
 * @property {boolean} allowWrites whether jobs and writes by tag may write to it (off unless the config says so, as in Node-RED)
 * @property {import('./check-tags').DeviceTags|null} tags the device's tag groups (checked), or null
 * @property {Record<string, import('./check-tags').DeviceTags|null>|null} units on a line, each unit's tag
 *   groups by unit name; null for a device of one unit
 */

/**
 * The config as it runs: the device and job specs are built here, once, by the builders every edge
 * uses (devices/spec.js, jobs/spec.js), and the gateway runs them as they are.
 * @typedef {object} Config
 * @property {GatewayConfig} gateway
 * @property {import('./check-mqtt').MqttConfig} mqtt
 * @property {Record<string, import('../../devices/spec').DeviceSpec>} devices the device specs, by name
 * @property {Record<string, DeviceOptions>} deviceOptions allowWrites and tags of each device, by name
 * @property {import('../../jobs/spec').JobSpec[]} jobs the job specs, in config order
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

/** A device's YAML key → the devices/spec.js field it feeds (durations as written: the builder reads them) */
const DEVICE_FIELDS = Object.freeze({
  maxConnections: 'maxConnections',
  maxInflight: 'maxInflight',
  maxGap: 'maxGap',
  maxRegistersPerRequest: 'maxRegistersPerRequest',
  maxBitsPerRequest: 'maxBitsPerRequest',
  addressBase: 'addressBase',
  order: 'order',
  unsupportedFunctionCodes: 'unsupportedFunctionCodes',
  timeout: 'timeoutMs',
  connectTimeout: 'connectTimeoutMs',
  queue: 'queueMax',
  interFrameDelay: 'interFrameDelayMs',
  delayAfterConnect: 'delayAfterConnectMs'
});
/** Quirks a unit of a line may set for itself (devices/line.js) */
const UNIT_QUIRKS = Object.freeze(['maxGap', 'maxRegistersPerRequest', 'maxBitsPerRequest', 'addressBase', 'order', 'unsupportedFunctionCodes']);

/** YAML backoff {min, max} → the builder's {initialMs, maxMs} */
function backoffInput (raw) {
  return isMap(raw) ? { initialMs: raw.min, maxMs: raw.max } : raw;
}

/**
 * A device as written → the input of buildDeviceSpec: keys renamed, values as written, so the
 * builder is the one place they are read, defaulted and checked.
 */
function deviceInput (problems, name, target, d, units, baseDir) {
  const input = { name, target };
  // a value of the wrong type was reported by the schema: the builder would only say it again
  const given = (key) => d[key] !== undefined && !problems.has(['devices', name, key]);
  for (const [key, field] of Object.entries(DEVICE_FIELDS)) if (given(key)) input[field] = d[key];
  if (given('backoff')) input.backoff = backoffInput(d.backoff);
  if (units !== undefined) input.units = units;
  if (given('tls') && isMap(d.tls)) input.tls = tlsInput(problems, name, d.tls, baseDir);
  return input;
}

/**
 * A device's tls as written (file paths) → the builder's input (PEM texts), each file read once, here.
 * @returns {object|undefined} undefined when a file could not be read (reported, naming the field)
 */
function tlsInput (problems, name, raw, baseDir) {
  const out = {};
  let ok = true;
  for (const key of ['ca', 'cert', 'key']) {
    if (raw[key] === undefined || problems.has(['devices', name, 'tls', key])) continue;
    const got = readTlsFile(problems, ['devices', name, 'tls', key], raw[key], baseDir);
    if (got === undefined) ok = false;
    else out[key] = got.data;
  }
  if (typeof raw.servername === 'string') out.servername = raw.servername;
  return ok ? out : undefined;
}

/**
 * The units of a line as written (a map of names), as devices/line.js takes them.
 * @returns {Array<object>|undefined}
 */
function unitInputs (problems, name, raw) {
  if (!isMap(raw)) return undefined;
  return Object.entries(raw).filter(([unit, u]) => isMap(u) && !reservedKey(problems, ['devices', name, 'units', unit], unit)).map(([unit, u]) => {
    const given = (key) => u[key] !== undefined && !problems.has(['devices', name, 'units', unit, key]);
    const out = { name: unit, unitId: u.unitId };
    if (given('backoff')) out.backoff = backoffInput(u.backoff);
    for (const key of UNIT_QUIRKS) if (given(key)) out[key] = u[key];
    return out;
  });
}

/** The YAML path of a devices/spec.js field (`units[2].unitId` → devices.<name>.units.<unit>.unitId) */
function devicePath (name, units) {
  const yamlKey = Object.fromEntries(Object.entries(DEVICE_FIELDS).map(([k, f]) => [f, k]));
  const rename = (k) => (k === 'initialMs' ? 'min' : k === 'maxMs' ? 'max' : k);
  return (field) => {
    const m = /^units\[(\d+)\](?:\.(.+))?$/.exec(field);
    if (m !== null && units && units[Number(m[1])]) {
      return ['devices', name, 'units', units[Number(m[1])].name, ...(m[2] === undefined ? [] : m[2].split('.').map(rename))];
    }
    if (/^backoff\./.test(field)) return ['devices', name, ...field.split('.').map(rename)];
    if (/^tls(\.|$)/.test(field)) return ['devices', name, ...field.split('.')];
    const key = yamlKey[field] || (field === 'units' || field === 'backoff' ? field : null);
    return key === null ? null : ['devices', name, key];
  };
}

/** A builder's rule in the config's words: `units[0].backoff.initialMs` is the unit's `backoff.min` */
function deviceRule (rule) {
  return rule.replace(/units\[\d+\]\./g, '').replace(/backoff\.initialMs/g, 'backoff.min').replace(/backoff\.maxMs/g, 'backoff.max');
}

/**
 * Builds each device's spec (devices/spec.js) from the devices as written, mapping a builder's
 * refusal to the field's path; then checks the tags against the built spec.
 * @returns {{devices: Record<string, import('../../devices/spec').DeviceSpec>, options: Record<string, DeviceOptions>}}
 */
function checkDevices (problems, raw, baseDir) {
  const devices = {};
  const options = {};
  if (!isMap(raw)) return { devices, options };
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
    const units = unitInputs(problems, name, d.units);
    if (!target || (units !== undefined && units.some((u) => problems.has(['devices', name, 'units', u.name, 'unitId'])))) continue;
    let spec;
    try {
      const input = deviceInput(problems, name, target, d, units, baseDir);
      // a TLS file that could not be read was reported: the device is not built without it
      if (isMap(d.tls) && input.tls === undefined) continue;
      spec = buildDeviceSpec(input);
    } catch (err) {
      specProblem(problems, err, devicePath(name, units), ['devices', name], deviceRule);
      continue;
    }
    const opts = { allowWrites: d.allowWrites === true, tags: null, units: null };
    if (spec.units === null) {
      opts.tags = checkDeviceTags(problems, at('tags'), d.tags, spec, baseDir);
    } else {
      // on a line, a map of registers belongs to each unit, not to the line
      if (d.tags !== undefined) problems.add(at('tags'), undefined, 'belongs to the units of a line: put each group under devices.<name>.units.<unit>.tags');
      opts.units = {};
      for (const u of spec.units) {
        // a unit's tags are checked with its own quirks over the line's (devices/line.js)
        opts.units[u.name] = checkDeviceTags(problems, ['devices', name, 'units', u.name, 'tags'], d.units[u.name].tags, { target: spec.target, ...u }, baseDir);
      }
    }
    if (valid) { devices[name] = spec; options[name] = opts; }
  }
  // one device owns a serial line; the line's slaves are its units (devices/line.js)
  for (const s of sharedLines(Object.values(devices))) problems.add(['devices', s.name, 'target'], devices[s.name].target.url, s.rule);
  return { devices, options };
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
  const { devices, options } = checkDevices(problems, obj.devices, baseDir);
  const deviceNames = isMap(obj.devices) ? Object.keys(obj.devices) : [];
  const jobs = checkJobs(problems, obj.jobs, { devices, options, names: deviceNames, intervalMs: gateway.intervalMs });
  // only on jobs that all passed: then jobs[i] is the i-th job written, and the paths are right
  if (!problems.size) checkSparkplugTags(problems, mqtt.sparkplug, jobs);
  if (problems.size) return { config: null, problems };
  return { config: { gateway, mqtt, devices, deviceOptions: options, jobs, source: { path: null, format: null } }, problems };
}

/**
 * Validates a config object (already parsed) and returns it normalized: defaults filled in,
 * durations in ms, rates per second (Infinity for "max"), targets parsed, TLS files read, and the
 * device and job specs built (the ones the gateway runs).
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
  if (copy.devices) {
    // a modbus+tls device's spec holds its PEM texts, the client key among them
    const hide = { ca: '<ca>', cert: '<cert>', key: '<key>', passphrase: '***' };
    copy.devices = Object.fromEntries(Object.entries(copy.devices).map(([name, d]) => [name, d && d.tls
      ? { ...d, tls: Object.fromEntries(Object.entries(d.tls).map(([k, v]) => [k, hide[k] || v])) }
      : d]));
  }
  if (copy.mqtt.tls) {
    const { ca, cert, key, ...rest } = copy.mqtt.tls;
    copy.mqtt.tls = { ...rest, ca: ca ? '<ca>' : undefined, cert: cert ? '<cert>' : undefined, key: key ? '<key>' : undefined };
  }
  return copy;
}

module.exports = { validateConfig, checkConfig, redactConfig };
