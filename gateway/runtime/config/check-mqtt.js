'use strict';

const fs = require('node:fs');
const path = require('node:path');
const C = require('../../base/constants');
const D = require('./defaults');
const { isMap, durationField } = require('./fields');
const { parseBytes } = require('../../base/quantities');
const { SIZE_HINT } = require('./schema');
const { parseBrokerUrl } = require('../mqtt/broker-url');
const { GATEWAY_USERNAME } = require('../mqtt/broker-guard');
const { exposureProblem } = require('../loopback');
const { checkSparkplug } = require('./check-sparkplug');
const { readTlsFile } = require('./tls-files');

/**
 * @typedef {object} TlsConfig
 * @property {Buffer} [ca] contents of the CA file
 * @property {Buffer} [cert] contents of the client certificate file
 * @property {Buffer} [key] contents of the client key file
 * @property {string} [caPath] absolute path the CA was read from
 * @property {string} [certPath]
 * @property {string} [keyPath]
 * @property {boolean} rejectUnauthorized verify the broker's certificate (default true)
 */

/**
 * @typedef {object} EmbeddedConfig
 * @property {string} host where the embedded broker listens; beyond loopback only with auth
 * @property {number} port
 * @property {number} maxPacketBytes largest packet taken from a client (the gateway's own excepted)
 * @property {number} maxClients open connections at most
 * @property {{username: string, password: string, passwordSource: 'file'|'env'}} [auth] the login
 *   every client must present (absent: no login, which is allowed on loopback only)
 */

/**
 * @typedef {object} SpoolConfig
 * @property {string} dir absolute path
 * @property {number} maxBytes cap of the spool's files together
 * @property {number} syncIntervalMs at most one fdatasync round per this
 */

/**
 * @typedef {object} MqttConfig
 * @property {string|null} url broker URL; null means "start the embedded broker"
 * @property {EmbeddedConfig|null} embedded where the embedded broker listens (null with a url)
 * @property {string} prefix first topic level(s), default "nines"
 * @property {string} clientId default "nines-<gateway.id>"
 * @property {string|null} username
 * @property {string|null} password
 * @property {'file'|'env'|null} passwordSource where the password came from (never log the password)
 * @property {0|1|2} qos QoS of latency, value and error messages
 * @property {4|5} protocolVersion 4 = MQTT 3.1.1, 5 = MQTT 5
 * @property {TlsConfig|null} tls
 * @property {number} bufferMax latency messages kept while the broker is away
 * @property {SpoolConfig|null} spool the disk spool, or null (memory only)
 * @property {{queueMax: number, maxAgeMs: number}|null} writes clients may write tags over MQTT
 *   (runtime/mqtt/write-commands.js): commands that may wait per device, the most time from a
 *   command's arrival to its write's start; null: off
 * @property {number} keepaliveMs 0 = no keepalive
 * @property {number} connectTimeoutMs
 * @property {number} errorsMinIntervalMs at most one error message per job per this window
 * @property {number} reconnectInitialMs first reconnect delay (then doubling, with jitter)
 * @property {number} reconnectMaxMs cap of the reconnect delay
 * @property {import('./check-sparkplug').SparkplugConfig|null} sparkplug the Sparkplug B edge node, or null (off)
 */

const URL_ONLY_KEYS = ['username', 'password', 'tls'];
const EMBEDDED_LOGIN = `set mqtt.embedded.username and mqtt.embedded.password (or ${D.MQTT_EMBEDDED_PASSWORD_ENV}) so that clients must log in`;

function checkTls (problems, raw, baseDir) {
  /** @type {TlsConfig} */
  const tls = { rejectUnauthorized: raw.rejectUnauthorized !== false };
  for (const key of ['ca', 'cert', 'key']) {
    const got = readTlsFile(problems, ['mqtt', 'tls', key], raw[key], baseDir);
    if (got) { tls[key] = got.data; tls[key + 'Path'] = got.abs; }
  }
  if (typeof raw.cert === 'string' && raw.key === undefined) problems.add(['mqtt', 'tls', 'key'], undefined, 'is required with mqtt.tls.cert (the client certificate\'s private key)');
  if (typeof raw.key === 'string' && raw.cert === undefined) problems.add(['mqtt', 'tls', 'cert'], undefined, 'is required with mqtt.tls.key (the client certificate)');
  return tls;
}

/**
 * The embedded broker: where it listens and the login it asks of clients. Beyond loopback a login
 * is required: an open broker on the network lets anyone subscribe, and the login keeps strangers
 * out (only the gateway may publish under the prefix in any case, see mqtt/broker-guard.js).
 * @returns {EmbeddedConfig}
 */
function checkEmbedded (problems, raw, env) {
  const e = isMap(raw) ? raw : {};
  const at = (key) => ['mqtt', 'embedded', key];
  /** @type {EmbeddedConfig} */
  const embedded = {
    host: typeof e.host === 'string' ? e.host : D.MQTT_EMBEDDED_HOST,
    port: Number.isInteger(e.port) ? e.port : D.MQTT_EMBEDDED_PORT,
    maxPacketBytes: D.MQTT_EMBEDDED_MAX_PACKET_BYTES,
    maxClients: Number.isInteger(e.maxClients) ? e.maxClients : D.MQTT_EMBEDDED_MAX_CLIENTS
  };
  if (e.maxPacketSize !== undefined) {
    const min = D.MQTT_EMBEDDED_MIN_PACKET_BYTES;
    const max = D.MQTT_EMBEDDED_MAX_PACKET_LIMIT;
    try {
      const bytes = parseBytes(e.maxPacketSize, 'mqtt.embedded.maxPacketSize');
      if (bytes < min || bytes > max) problems.add(at('maxPacketSize'), e.maxPacketSize, `must be from ${min} bytes (1KiB) to ${max} bytes (MQTT's own limit, about 256MiB)`);
      else embedded.maxPacketBytes = bytes;
    } catch {
      problems.add(at('maxPacketSize'), e.maxPacketSize, `is not a size; ${SIZE_HINT}`);
    }
  }
  const username = typeof e.username === 'string' && e.username !== '' ? e.username : null;
  let password = typeof e.password === 'string' && e.password !== '' ? e.password : null;
  let passwordSource = password !== null ? 'file' : null;
  const envPassword = env ? env[D.MQTT_EMBEDDED_PASSWORD_ENV] : undefined;
  if (password === null && e.password === undefined && typeof envPassword === 'string' && envPassword !== '') {
    password = envPassword;
    passwordSource = 'env';
  }
  if (username === GATEWAY_USERNAME) {
    problems.add(at('username'), username, 'is reserved for the gateway\'s own client; choose another name');
  }
  if (username !== null && password === null && e.password === undefined) {
    problems.add(at('password'), undefined, `is required with mqtt.embedded.username (or set ${D.MQTT_EMBEDDED_PASSWORD_ENV})`);
  } else if (password !== null && username === null && e.username === undefined) {
    const from = passwordSource === 'env' ? `is required: the embedded broker's password comes from ${D.MQTT_EMBEDDED_PASSWORD_ENV}` : 'is required with mqtt.embedded.password';
    problems.add(at('username'), undefined, from);
  } else {
    const exposed = typeof e.host === 'string' ? exposureProblem(e.host, username !== null && password !== null) : null;
    if (exposed !== null) problems.add(at('host'), e.host, `${exposed}; ${EMBEDDED_LOGIN}, or listen on 127.0.0.1`);
  }
  if (username !== null && password !== null) embedded.auth = { username, password, passwordSource };
  return embedded;
}

/**
 * The disk spool: a folder (relative to the config file) and a cap. The folder is created when the
 * gateway starts; a path that is a file is an error now.
 * @returns {SpoolConfig|null}
 */
function checkSpool (problems, raw, baseDir) {
  if (!isMap(raw) || typeof raw.dir !== 'string' || raw.dir === '') return null;
  const at = (key) => ['mqtt', 'spool', key];
  const dir = path.resolve(baseDir, raw.dir);
  try {
    if (!fs.statSync(dir).isDirectory()) problems.add(at('dir'), raw.dir, `is not a folder: ${dir}`);
  } catch (err) {
    if (err.code !== 'ENOENT') problems.add(at('dir'), raw.dir, `cannot be used: ${dir}: ${err.message}`);
  }
  let maxBytes = D.MQTT_SPOOL_MAX_BYTES;
  if (raw.maxBytes !== undefined) {
    try {
      maxBytes = parseBytes(raw.maxBytes, 'mqtt.spool.maxBytes');
      if (maxBytes < D.MQTT_SPOOL_MIN_BYTES) problems.add(at('maxBytes'), raw.maxBytes, `must be at least ${D.MQTT_SPOOL_MIN_BYTES} bytes (1MiB)`);
    } catch {
      problems.add(at('maxBytes'), raw.maxBytes, `is not a size; ${SIZE_HINT}`);
    }
  }
  const syncIntervalMs = durationField(problems, at('sync'), raw.sync, { def: D.MQTT_SPOOL_SYNC_MS, minMs: 0, maxMs: 60000 });
  return { dir, maxBytes, syncIntervalMs };
}

/**
 * Semantic checks and defaults of the `mqtt` section.
 * @param {import('./problems').Problems} problems
 * @param {*} raw the section as written (undefined when omitted: embedded broker)
 * @param {object} ctx
 * @param {Record<string, string|undefined>} ctx.env environment, for NINES_MQTT_PASSWORD and
 *   NINES_MQTT_EMBEDDED_PASSWORD
 * @param {string} ctx.baseDir directory TLS paths are relative to
 * @param {string} ctx.gatewayId for the default client id
 * @returns {MqttConfig}
 */
function checkMqtt (problems, raw, { env, baseDir, gatewayId }) {
  const m = isMap(raw) ? raw : {};
  const at = (key) => ['mqtt', key];

  let url = null;
  let urlTls = false;
  if (typeof m.url === 'string' && m.url !== '') {
    try {
      const parsed = parseBrokerUrl(m.url, 'mqtt.url');
      url = parsed.url;
      urlTls = parsed.tls;
    } catch (err) {
      problems.add(at('url'), m.url, err.details.rule);
    }
  }
  const wantsUrl = m.url !== undefined;

  let embedded = null;
  if (!wantsUrl) {
    embedded = checkEmbedded(problems, m.embedded, env);
    for (const key of URL_ONLY_KEYS) {
      if (m[key] === undefined) continue;
      const instead = key === 'tls' ? 'the embedded broker has no TLS' : `the embedded broker's login is mqtt.embedded.${key}`;
      problems.add(at(key), m[key], `is only used with mqtt.url (${instead})`);
    }
  } else if (m.embedded !== undefined) {
    problems.add(at('embedded'), m.embedded, 'cannot be combined with mqtt.url: the embedded broker runs only when no url is given');
  }

  let tls = null;
  if (wantsUrl && isMap(m.tls)) {
    if (url && !urlTls) problems.add(at('tls'), m.tls, `is only used with a TLS URL (mqtts://, ssl:// or wss://); mqtt.url is ${url}`);
    else tls = checkTls(problems, m.tls, baseDir);
  }

  const protocolVersion = m.protocolVersion === 5 ? 5 : D.MQTT_PROTOCOL_VERSION;
  const username = typeof m.username === 'string' ? m.username : null;
  let password = typeof m.password === 'string' ? m.password : null;
  let passwordSource = password !== null ? 'file' : null;
  const envPassword = env ? env[D.MQTT_PASSWORD_ENV] : undefined;
  if (wantsUrl && password === null && typeof envPassword === 'string' && envPassword !== '') {
    password = envPassword;
    passwordSource = 'env';
  }
  if (password !== null && username === null && protocolVersion === 4) {
    const from = passwordSource === 'env' ? `comes from ${D.MQTT_PASSWORD_ENV} but` : 'is set but';
    problems.add(at('password'), '***', `${from} mqtt.username is not: MQTT 3.1.1 sends a password only with a username (set mqtt.username, or protocolVersion: 5)`);
  }

  const reconnect = isMap(m.reconnect) ? m.reconnect : {};
  const reconnectInitialMs = durationField(problems, ['mqtt', 'reconnect', 'initial'], reconnect.initial, { def: D.MQTT_RECONNECT_INITIAL_MS, minMs: 10, maxMs: 3600000 });
  const reconnectMaxMs = durationField(problems, ['mqtt', 'reconnect', 'max'], reconnect.max, { def: D.MQTT_RECONNECT_MAX_MS, minMs: 10, maxMs: 3600000 });
  if (reconnectMaxMs < reconnectInitialMs && !problems.has(['mqtt', 'reconnect'])) {
    problems.add(['mqtt', 'reconnect', 'max'], reconnect.max, `must be at least mqtt.reconnect.initial (${reconnect.initial ?? `${D.MQTT_RECONNECT_INITIAL_MS}ms`})`);
  }

  const clientId = typeof m.clientId === 'string' ? m.clientId : `nines-${gatewayId}`;
  return {
    url,
    embedded,
    prefix: typeof m.prefix === 'string' ? m.prefix : C.MQTT_DEFAULT_PREFIX,
    clientId,
    username,
    password,
    passwordSource,
    qos: [0, 1, 2].includes(m.qos) ? m.qos : D.MQTT_QOS,
    protocolVersion,
    tls,
    bufferMax: Number.isInteger(m.buffer) ? m.buffer : D.MQTT_BUFFER_MAX,
    spool: checkSpool(problems, m.spool, baseDir),
    writes: checkWrites(problems, m.writes),
    keepaliveMs: durationField(problems, at('keepalive'), m.keepalive, { def: D.MQTT_KEEPALIVE_MS, minMs: 1000, maxMs: 65535000, zeroOk: true }),
    connectTimeoutMs: durationField(problems, at('connectTimeout'), m.connectTimeout, { def: D.MQTT_CONNECT_TIMEOUT_MS, minMs: 100, maxMs: 600000 }),
    errorsMinIntervalMs: durationField(problems, at('errorInterval'), m.errorInterval, { def: D.MQTT_ERRORS_MIN_INTERVAL_MS, minMs: 100, maxMs: 3600000 }),
    reconnectInitialMs,
    reconnectMaxMs,
    sparkplug: checkSparkplug(problems, m.sparkplug, { gatewayId, clientId })
  };
}

/**
 * mqtt.writes: true (the defaults), false, or { queue, maxAge }.
 * @returns {{queueMax: number, maxAgeMs: number}|null}
 */
function checkWrites (problems, raw) {
  if (raw !== true && !isMap(raw)) return null; // false, absent, or a wrong type the schema named
  const w = raw === true ? {} : raw;
  return {
    queueMax: Number.isInteger(w.queue) ? w.queue : D.MQTT_WRITES_QUEUE_MAX,
    maxAgeMs: durationField(problems, ['mqtt', 'writes', 'maxAge'], w.maxAge, { def: D.MQTT_WRITES_MAX_AGE_MS, minMs: D.MQTT_WRITES_MIN_AGE_MS, maxMs: D.MQTT_WRITES_MAX_AGE_LIMIT_MS })
  };
}

module.exports = { checkMqtt };
