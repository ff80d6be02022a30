'use strict';

const { NinesError } = require('../../base/errors');
const C = require('../../base/constants');

/**
 * Broker URLs: the schemes we accept, their default ports, and which ones use TLS. MQTT.js falls
 * back to another protocol on a scheme it does not know and reads options from the query string;
 * we accept only the schemes below and no query, so a URL means exactly what it says.
 */

/** scheme → default port and whether it is TLS */
const SCHEMES = Object.freeze({
  mqtt: { port: C.MQTT_DEFAULT_PORT, tls: false },
  tcp: { port: C.MQTT_DEFAULT_PORT, tls: false },
  mqtts: { port: 8883, tls: true },
  ssl: { port: 8883, tls: true },
  ws: { port: 80, tls: false },
  wss: { port: 443, tls: true }
});

/**
 * @typedef {object} BrokerUrl
 * @property {string} url the URL as given, trimmed
 * @property {string} scheme mqtt, mqtts, tcp, ssl, ws or wss
 * @property {string} host
 * @property {number} port explicit or the scheme's default
 * @property {boolean} tls
 */

/**
 * Checks a broker URL.
 * @param {*} url e.g. "mqtt://127.0.0.1:1883", "mqtts://broker:8883", "wss://host/mqtt"
 * @param {string} [field='url'] the option or config field, for the error message
 * @returns {BrokerUrl}
 * @throws {NinesError} NINES_ERR_INVALID_ARG naming the field, the value and the rule
 */
function parseBrokerUrl (url, field = 'url') {
  const fail = (rule) => {
    throw new NinesError('NINES_ERR_INVALID_ARG', `${field}: ${JSON.stringify(url)} ${rule}`, { field, value: url, rule });
  };
  if (typeof url !== 'string' || url.trim() === '') fail('must be a broker URL such as "mqtt://127.0.0.1:1883"');
  const text = url.trim();
  const m = /^([a-z][a-z0-9+.-]*):\/\//i.exec(text);
  if (!m) fail(`has no scheme; use one of ${Object.keys(SCHEMES).map((s) => s + '://').join(', ')}`);
  const scheme = m[1].toLowerCase();
  const spec = SCHEMES[scheme];
  if (!spec) fail(`has an unsupported scheme "${scheme}:"; use one of ${Object.keys(SCHEMES).map((s) => s + '://').join(', ')}`);
  let u;
  try {
    // WHATWG URL treats unknown schemes as opaque; parse the authority through http
    u = new URL('http://' + text.slice(m[0].length));
  } catch {
    return fail('is not a valid URL');
  }
  if (!u.hostname) fail('names no host');
  if (u.username || u.password) fail('must not carry credentials; use mqtt.username and mqtt.password (or NINES_MQTT_PASSWORD)');
  if (u.search) fail('must not have a query string; set options as config fields');
  if (u.hash) fail('must not have a fragment');
  if (!scheme.startsWith('ws') && u.pathname !== '/') fail(`must not have a path ("${u.pathname}") with ${scheme}://`);
  // URL drops a port equal to http's default 80, so read it back from the text
  const explicit = /^[^/?#]*?:(\d+)(?:[/?#]|$)/.exec(text.slice(m[0].length).replace(/^\[[^\]]*\]/, ''));
  const port = explicit ? Number(explicit[1]) : spec.port;
  if (!Number.isInteger(port) || port < 1 || port > 65535) fail('has a port outside 1-65535');
  return { url: text, scheme, host: u.hostname.replace(/^\[(.*)\]$/, '$1'), port, tls: spec.tls };
}

module.exports = { parseBrokerUrl, SCHEMES };
