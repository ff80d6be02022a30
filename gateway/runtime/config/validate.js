'use strict';

const os = require('node:os');
const path = require('node:path');
const { parseTarget } = require('../../drivers/target');
const D = require('./defaults');
const JL = require('../../jobs/limits');
const { Problems } = require('./problems');
const { checkSchema } = require('./schema-check');
const { isMap, durationField, reservedKey } = require('./fields');
const { checkMqtt } = require('./check-mqtt');
const { checkJobs } = require('./check-jobs');
const { checkSparkplugTags } = require('./check-sparkplug');
const { checkEndpoint } = require('./check-http');
const { isName, toName, NAME_RULE } = require('../../base/names');
const { checkLimits, countSections } = require('./limits');
const { buildDeviceSpec } = require('../../devices/spec');
const { sharedLines, parseUnitList, unitName, transportOf } = require('../../devices/line');
const { specProblem } = require('./spec-paths');
const { readProfiles, findProfile, namedProfile, describe, markShipped } = require('./profiles');
const { checkScanClasses } = require('./check-scan');
const { checkTagGroups } = require('./check-tags');
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

/** The host name as a valid gateway id (topic level), for the default. */
function defaultGatewayId () {
  const id = toName(os.hostname(), '-');
  return isName(id) ? id : 'gateway';
}

function checkGateway (problems, raw, baseDir, env) {
  const g = isMap(raw) ? raw : {};
  return {
    id: isName(g.id) ? g.id : defaultGatewayId(),
    intervalMs: durationField(problems, ['gateway', 'interval'], g.interval, {
      def: JL.INTERVAL_MS, minMs: D.GATEWAY_MIN_INTERVAL_MS, maxMs: D.GATEWAY_MAX_INTERVAL_MS
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
  delayAfterConnect: 'delayAfterConnectMs',
  diagnostics: 'diagnosticsMs'
});
/** The tags of a unit whose profile is not there (reported): jobs naming its groups are not checked again */
const FAILED_TAGS = Object.freeze({ groups: Object.freeze({}), all: Object.freeze([]), failed: true });

/** YAML backoff {min, max} → the builder's {initialMs, maxMs} */
function backoffInput (raw) {
  return isMap(raw) ? { initialMs: raw.min, maxMs: raw.max } : raw;
}

/**
 * A device as written, under its profile's fields (profiles.js) → the input of buildDeviceSpec: keys
 * renamed, values as written, so the builder is the one place they are read, defaulted and checked.
 */
function deviceInput (problems, name, target, d, desc, units, baseDir) {
  const input = { name, target };
  // a value of the wrong type was reported by the schema: the builder would only say it again
  for (const [key, field] of Object.entries(DEVICE_FIELDS)) {
    // a field the profile has no say in is the device's own
    const f = desc.fields[key] || (d[key] === undefined ? undefined : { value: d[key], at: ['devices', name, key] });
    if (f !== undefined && !problems.has(f.at)) input[field] = f.value;
  }
  if (d.backoff !== undefined && !problems.has(['devices', name, 'backoff'])) input.backoff = backoffInput(d.backoff);
  if (units !== undefined) input.units = units.map((u) => u.input);
  if (d.tls !== undefined && !problems.has(['devices', name, 'tls']) && isMap(d.tls)) input.tls = tlsInput(problems, name, d.tls, baseDir);
  return input;
}

/**
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
 * The units of a line as written: a map of names, or a list of unit ids ("1-50", each named
 * unit-<id>, as the Node-RED dialog names them), each with its description (its own profile, or
 * the line's).
 * @returns {Array<{name: string, at: Array<string|number>, input: object, desc: import('./profiles').Description}>|undefined|null}
 *   undefined for a device of one unit; null after a problem with the list
 */
function unitInputs (problems, name, d, target, ctx) {
  const raw = d.units;
  let listed;
  if (typeof raw === 'string') {
    const { ids, error } = parseUnitList(raw, transportOf(target));
    if (error !== null) { problems.add(['devices', name, 'units'], raw, error); return null; }
    listed = ids.map((id) => [unitName(id), { unitId: id }, ['devices', name, 'units']]);
  } else if (isMap(raw)) {
    listed = Object.entries(raw).filter(([unit, u]) => isMap(u) && !reservedKey(problems, ['devices', name, 'units', unit], unit))
      .map(([unit, u]) => [unit, u, ['devices', name, 'units', unit]]);
  } else {
    return undefined;
  }
  return listed.map(([unit, u, at]) => {
    // a unit naming a profile that is not there (reported) is described by the line's meanwhile
    const own = namedProfile(problems, at, u.profile, ctx.profiles);
    const desc = describe(problems, u, at, own || ctx.profile, { unit: true, inherited: !own, line: d, lineAt: ['devices', name], baseDir: ctx.baseDir });
    const input = { name: unit, unitId: u.unitId };
    if (u.backoff !== undefined && !problems.has(at.concat('backoff'))) input.backoff = backoffInput(u.backoff);
    for (const [key, f] of Object.entries(desc.fields)) if (!problems.has(f.at)) input[key] = f.value;
    // its tags and scan classes wait for the profile it meant
    if (own === undefined) desc.failed = true;
    return { name: unit, at, input, desc };
  });
}

/**
 * The YAML path of a devices/spec.js field (`units[2].unitId` → devices.<name>.units.<unit>.unitId);
 * a field a profile gave is at the profile's (profiles.<profile>.timeout).
 */
function devicePath (name, desc, units) {
  const yamlKey = Object.fromEntries(Object.entries(DEVICE_FIELDS).map(([k, f]) => [f, k]));
  const rename = (k) => (k === 'initialMs' ? 'min' : k === 'maxMs' ? 'max' : k);
  return (field) => {
    const m = /^units\[(\d+)\](?:\.(.+))?$/.exec(field);
    if (m !== null && units && units[Number(m[1])]) {
      const u = units[Number(m[1])];
      const rest = m[2] === undefined ? [] : m[2].split('.').map(rename);
      if (rest.length === 1 && u.desc.fields[rest[0]]) return u.desc.fields[rest[0]].at;
      // a unit of a list ("1-50") is written only in the list
      return u.at.length === 3 ? u.at : u.at.concat(rest);
    }
    if (/^backoff\./.test(field)) return ['devices', name, ...field.split('.').map(rename)];
    if (/^tls(\.|$)/.test(field)) return ['devices', name, ...field.split('.')];
    const key = yamlKey[field] || (field === 'units' || field === 'backoff' ? field : null);
    if (key !== null && desc.fields[key]) return desc.fields[key].at;
    return key === null ? null : ['devices', name, key];
  };
}

/** A builder's rule in the config's words: `units[0].backoff.initialMs` is the unit's `backoff.min` */
function deviceRule (rule) {
  return rule.replace(/units\[\d+\]\./g, '').replace(/backoff\.initialMs/g, 'backoff.min').replace(/backoff\.maxMs/g, 'backoff.max');
}

/**
 * Builds each device's spec (devices/spec.js) from the devices as written under their profiles
 * (profiles.js), mapping a builder's refusal to the field's path; then checks the tags against the
 * built spec, and gathers the scan classes of each device and unit (check-scan.js builds their jobs).
 * @returns {{devices: Record<string, import('../../devices/spec').DeviceSpec>, options: Record<string, DeviceOptions>,
 *   scans: import('./check-scan').ScanEntry[]}}
 */
function checkDevices (problems, raw, baseDir, profiles) {
  const devices = {};
  const options = {};
  const scans = [];
  if (!isMap(raw)) return { devices, options, scans };
  for (const [name, d] of Object.entries(raw)) {
    const at = (key) => ['devices', name, key];
    // checked all the same, but kept only under a valid name (never as the prototype, C.RESERVED_NAME)
    const valid = isName(name);
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
    const profile = namedProfile(problems, ['devices', name], d.profile, profiles);
    if (!target || profile === undefined) continue;
    const desc = describe(problems, d, ['devices', name], profile, { baseDir });
    const units = unitInputs(problems, name, d, target, { profiles, profile, baseDir });
    if (units === null || (units !== undefined && units.some((u) => problems.has(u.at.concat('unitId'))))) continue;
    let spec;
    try {
      const input = deviceInput(problems, name, target, d, desc, units, baseDir);
      // a TLS file that could not be read was reported: the device is not built without it
      if (isMap(d.tls) && input.tls === undefined) continue;
      spec = buildDeviceSpec(input);
    } catch (err) {
      specProblem(problems, err, devicePath(name, desc, units), ['devices', name], deviceRule);
      continue;
    }
    const opts = { allowWrites: d.allowWrites === true, tags: null, units: null };
    const groupsOf = (x, own) => (own === undefined && x.groups.length === 0 ? null : x.groups);
    if (spec.units === null) {
      const groups = groupsOf(desc, d.tags);
      opts.tags = groups === null ? null : checkTagGroups(problems, groups, spec);
      if (valid && desc.scan.length) scans.push({ device: name, unit: null, classes: desc.scan, context: spec, tags: opts.tags, owner: { name: `device "${name}"`, path: `devices.${name}.tags` } });
    } else {
      // on a line, a map of registers belongs to each unit, not to the line
      if (d.tags !== undefined) problems.add(at('tags'), undefined, 'belongs to the units of a line: put each group under devices.<name>.units.<unit>.tags');
      opts.units = {};
      spec.units.forEach((u, i) => {
        const { desc: ud } = units[i];
        const groups = groupsOf(ud, isMap(d.units) ? d.units[u.name].tags : undefined);
        // a unit's tags are checked with its own quirks over the line's (devices/line.js)
        const context = { target: spec.target, ...u };
        opts.units[u.name] = ud.failed ? FAILED_TAGS : groups === null ? null : checkTagGroups(problems, groups, context);
        const owner = { name: `unit "${u.name}" of device "${name}"`, path: `devices.${name}.units.${u.name}.tags` };
        if (valid && ud.scan.length && !ud.failed) scans.push({ device: name, unit: u.name, classes: ud.scan, context, tags: opts.units[u.name], owner });
      });
    }
    if (valid) { devices[name] = spec; options[name] = opts; }
  }
  // one device owns a serial line; the line's slaves are its units (devices/line.js)
  for (const s of sharedLines(Object.values(devices))) problems.add(['devices', s.name, 'target'], devices[s.name].target.url, s.rule);
  return { devices, options, scans };
}

/**
 * Whether any device or unit has scan classes as written (its own, or its profile's), whether or not
 * they passed: a config whose only jobs are scan classes needs no `jobs`, even while they have problems.
 * @returns {boolean}
 */
function writesScan (raw, profiles) {
  const has = (e) => isMap(e) && (e.scan !== undefined || (typeof e.profile === 'string' && (findProfile(e.profile, profiles) || { body: {} }).body.scan !== undefined));
  return isMap(raw) && Object.values(raw).some((d) => has(d) || (isMap(d) && isMap(d.units) && Object.values(d.units).some(has)));
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
  const profiles = readProfiles(problems, obj.profiles, baseDir);
  const { devices, options, scans } = checkDevices(problems, obj.devices, baseDir, profiles);
  const deviceNames = isMap(obj.devices) ? Object.keys(obj.devices) : [];
  const written = checkJobs(problems, obj.jobs, { devices, options, names: deviceNames, intervalMs: gateway.intervalMs });
  const taken = new Map(Array.isArray(obj.jobs) ? obj.jobs.map((j, i) => [isMap(j) ? j.name : undefined, `jobs[${i}]`]).filter(([n]) => typeof n === 'string') : []);
  const room = D.CONFIG_MAX_JOBS - (Array.isArray(obj.jobs) ? obj.jobs.length : 0);
  const jobs = written.concat(checkScanClasses(problems, scans, { devices, taken, intervalMs: gateway.intervalMs, room }));
  // something to poll: jobs written, or a device's scan classes
  if (obj.jobs === undefined && !writesScan(obj.devices, profiles)) problems.add(['jobs'], undefined, 'is required; list at least one job: - { name, device, command | generator | read | write | tags, rate }, or give a device scan classes (scan: { fast: { rate: 10/s, tags: [measurements] } })');
  // only on jobs that all passed: then jobs[i] is the i-th job written, and the paths are right
  if (!problems.size) checkSparkplugTags(problems, mqtt.sparkplug, jobs);
  markShipped(problems, profiles);
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
