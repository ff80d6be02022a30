'use strict';

const crypto = require('node:crypto');
const { NinesError } = require('../../base/errors');
const { exposureProblem } = require('../loopback');
const { checkPrefix } = require('./topics');
const { WindowReporter } = require('../../base/window-reporter');
const D = require('./defaults');

/**
 * Who may do what on the embedded broker: the aedes `authenticate` and `authorizePublish` hooks,
 * and the loopback rule they rest on (../loopback.js, shared with the HTTP servers).
 *
 * - Login: with a username and password, every client must present them (or the gateway's own
 *   credential, below); without, the broker is open, which is allowed on loopback only.
 * - The gateway's own client is recognised by an internal credential generated for each broker
 *   start (32 random bytes, held in memory, never printed). A client id alone proves nothing: any
 *   client can send any id.
 * - Only that client may publish under `<prefix>/` (its status, will, summaries, values and
 *   errors); every other client may subscribe to everything but publish nothing there, except, with
 *   `mqtt.writes` on, write commands: `<prefix>/<gateway>/<device>/write` and
 *   `<prefix>/<gateway>/<device>/<unit>/write` (write-commands.js checks what they ask).
 * - With a Sparkplug B edge node (gateway.sparkplug), its client id is reserved too, and only the
 *   gateway's clients may publish its births, deaths and data (`spBv1.0/<group>/NBIRTH|NDEATH|NDATA|
 *   DBIRTH|DDEATH|DDATA/<node>[/…]`); commands to it (NCMD, DCMD) stay open to every client, as a
 *   host application must send them.
 * - The gateway's client id is reserved for it, and no client takes over an id that is connected.
 *   aedes, like MQTT 3.1.1 [MQTT-3.1.4-2], disconnects the older client when a second one sends its
 *   id; we refuse the newcomer instead (CONNACK 2, identifier rejected). The one exception is the
 *   gateway reconnecting with its credential: it replaces its own stale session.
 */

/** Username of the gateway's own client; the generated password is what proves it. */
const GATEWAY_USERNAME = 'nines-gateway';
/** Refusals of one kind are reported at most once per this window, the rest counted into the next */
const REPORT_WINDOW_MS = D.MQTT_REPORT_WINDOW_MS;

/** CONNACK return codes (MQTT 3.1.1, table 3.1) */
const RC_IDENTIFIER_REJECTED = 2;
const RC_BAD_LOGIN = 4;

/**
 * Compares a secret in constant time (digests first, so lengths do not leak either).
 * @param {Buffer|string|undefined|null} given
 * @param {string} expected
 * @returns {boolean}
 */
function sameSecret (given, expected) {
  if (given === undefined || given === null) return false;
  const digest = (v) => crypto.createHash('sha256').update(v).digest();
  return crypto.timingSafeEqual(digest(given), digest(expected));
}

/** A client id or topic from the wire, quoted (control characters escaped) and shortened for a log line. */
function quoted (text) {
  const s = JSON.stringify(String(text));
  return s.length > 80 ? s.slice(0, 79) + '…"' : s;
}

/**
 * @typedef {object} Refusal what the broker refused, for a log line (rate-limited per reason)
 * @property {'bad-login'|'reserved-client-id'|'client-id-in-use'|'publish-under-prefix'|'packet-too-large'|'too-many-clients'} reason
 * @property {string} message one sentence, client id and topic quoted
 * @property {string|null} clientId
 * @property {string|null} remoteAddress
 * @property {string} [topic] for publish-under-prefix
 * @property {number} [repeated] refusals of this reason folded into this report (window of 10 s)
 */

/** What a Sparkplug B edge node publishes (its commands, NCMD and DCMD, come from host applications) */
const EDGE_NODE_TYPES = new Set(['NBIRTH', 'NDEATH', 'NDATA', 'DBIRTH', 'DDEATH', 'DDATA']);

/**
 * @param {string} topic
 * @param {{group: string, node: string}} edge
 * @returns {boolean} whether the topic is a birth, death or data of that edge node or its devices
 */
function isEdgeNodeTopic (topic, edge) {
  const p = topic.split('/');
  return p[0] === 'spBv1.0' && p[1] === edge.group && EDGE_NODE_TYPES.has(p[2]) && p[3] === edge.node;
}

/**
 * Builds the guard of one broker.
 * @param {object} opts
 * @param {string} opts.host where the broker will listen (for the loopback rule)
 * @param {string} [opts.username] required of every client (except the gateway's own) when set
 * @param {string} [opts.password] required with username
 * @param {{clientId: string, prefix: string, sparkplug?: {clientId: string, group: string, node: string}, writes?: {gateway: string}}} [opts.gateway]
 *   the gateway this broker serves: its client ids are reserved and only it may publish under
 *   `<prefix>/` (but write commands, when `writes` names the gateway id) and as its Sparkplug edge node
 * @param {boolean} [opts.refuseTakeover] refuse a connection whose client id is connected
 *   (default: true with opts.gateway, false without, as plain aedes)
 * @param {(refusal: Refusal) => void} [opts.onRefused] told of refusals, at most once per reason per 10 s
 * @returns {{hooks: {authenticate: Function, authorizePublish: Function}, login: string|null,
 *   gatewayAuth: {username: string, password: string}|null, refused: () => Record<string, number>,
 *   refuseConnection: (reason: string, client: object|null, message: string) => void, close: () => void}}
 * @throws {NinesError} NINES_ERR_INVALID_ARG naming the option: a host beyond loopback without
 *   username and password, half a login, a bad gateway option
 */
function createBrokerGuard ({ host, username, password, gateway, refuseTakeover, onRefused }) {
  const fail = (field, value, rule) => {
    throw new NinesError('NINES_ERR_INVALID_ARG', `${field}: ${field === 'password' ? '***' : JSON.stringify(value)} ${rule}`, { field, value: field === 'password' ? '***' : value });
  };
  if (username !== undefined && (typeof username !== 'string' || username === '')) fail('username', username, 'must be a non-empty string');
  if (password !== undefined && (typeof password !== 'string' || password === '')) fail('password', password, 'must be a non-empty string');
  if (username !== undefined && password === undefined) fail('password', undefined, 'is required with username');
  if (password !== undefined && username === undefined) fail('username', undefined, 'is required with password');
  if (gateway !== undefined && username === GATEWAY_USERNAME) fail('username', username, 'is reserved for the gateway\'s own client');
  const login = username !== undefined;
  const exposed = exposureProblem(host, login);
  if (exposed !== null) fail('host', host, `${exposed}: pass username and password so that clients must log in, or listen on 127.0.0.1`);
  let prefix = null;
  let gatewayAuth = null;
  if (gateway !== undefined) {
    if (gateway === null || typeof gateway !== 'object') fail('gateway', gateway, 'must be { clientId, prefix }');
    if (typeof gateway.clientId !== 'string' || gateway.clientId === '') fail('gateway.clientId', gateway.clientId, 'must be a non-empty string');
    prefix = checkPrefix(gateway.prefix);
    gatewayAuth = { username: GATEWAY_USERNAME, password: crypto.randomBytes(32).toString('base64url') };
  }
  // write commands (mqtt.writes): <prefix>/<gateway>/<device>[/<unit>]/write, nothing else under the prefix
  const writesBase = gateway && gateway.writes ? `${prefix}/${gateway.writes.gateway}/` : null;
  const isWriteCommand = (topic) => {
    if (writesBase === null || !topic.startsWith(writesBase)) return false;
    const levels = topic.slice(writesBase.length).split('/');
    return (levels.length === 2 || levels.length === 3) && levels[levels.length - 1] === 'write' && levels.every((l) => l !== '');
  };
  let edge = null;
  if (gateway && gateway.sparkplug !== undefined && gateway.sparkplug !== null) {
    const sp = gateway.sparkplug;
    for (const key of ['clientId', 'group', 'node']) {
      if (typeof sp[key] !== 'string' || sp[key] === '') fail(`gateway.sparkplug.${key}`, sp[key], 'must be a non-empty string');
    }
    edge = sp;
  }
  const reservedIds = new Set(gateway ? [gateway.clientId].concat(edge ? [edge.clientId] : []) : []);
  const noTakeover = refuseTakeover === undefined ? gateway !== undefined : Boolean(refuseTakeover);

  /** @type {WeakSet<object>} aedes clients that logged in with the gateway's credential */
  const trusted = new WeakSet();
  /** @type {Map<string, object>} client id → the authenticated connection holding it, until it closes */
  const holders = new Map();
  const counts = { 'bad-login': 0, 'reserved-client-id': 0, 'client-id-in-use': 0, 'publish-under-prefix': 0, 'packet-too-large': 0, 'too-many-clients': 0 };
  const reporter = onRefused
    ? new WindowReporter({
      windowMs: REPORT_WINDOW_MS,
      // the newest refusal of the window speaks for it; `repeated` counts the others held with it
      emit: (_reason, refusal, held) => onRefused(held > 1 ? { ...refusal, repeated: held - 1 } : refusal)
    })
    : null;

  const report = (reason, client, message, topic) => {
    counts[reason]++;
    if (!reporter) return;
    const remoteAddress = (client && client.conn && client.conn.remoteAddress) || null;
    const clientId = client && typeof client.id === 'string' ? client.id : null;
    const refusal = { reason, message: `refused ${message}`, clientId, remoteAddress };
    if (topic !== undefined) refusal.topic = topic;
    reporter.offer(reason, refusal);
  };

  /**
   * A connection the broker cut below MQTT (broker.js): a packet over the size limit, a socket
   * over the client limit. Counted and reported like the refusals above.
   * @param {'packet-too-large'|'too-many-clients'} reason
   * @param {{id?: string, conn?: {remoteAddress?: string}}|null} client what aedes knows of it
   * @param {string} message
   */
  const refuseConnection = (reason, client, message) => report(reason, client, message);

  function refuse (client, reason, returnCode, why, callback) {
    report(reason, client, `client ${quoted(client.id)} from ${client.conn && client.conn.remoteAddress}: ${why}`);
    // aedes closes a refused client, and its close() wipes the inbound QoS 2 store of that client
    // id when the session is clean (lib/client.js, [MQTT-3.1.2-6]): the store of the client that
    // really holds the id. The refused one never had a session, so it must not end one.
    client.clean = false;
    const err = new Error(why);
    err.returnCode = returnCode;
    callback(err, false);
  }

  function authenticate (client, user, pass, callback) {
    const id = client.id;
    const isGateway = gatewayAuth !== null && user === gatewayAuth.username && sameSecret(pass, gatewayAuth.password);
    if (!isGateway) {
      if (gatewayAuth !== null && user === gatewayAuth.username) return refuse(client, 'bad-login', RC_BAD_LOGIN, 'bad user name or password', callback);
      if (login && !(user === username && sameSecret(pass, password))) return refuse(client, 'bad-login', RC_BAD_LOGIN, 'bad user name or password', callback);
      if (reservedIds.has(id)) return refuse(client, 'reserved-client-id', RC_IDENTIFIER_REJECTED, 'this client id is reserved for the gateway', callback);
    }
    const holder = holders.get(id);
    const held = holder !== undefined && holder !== client && !holder.closed;
    if (held && noTakeover && !(isGateway && reservedIds.has(id))) {
      return refuse(client, 'client-id-in-use', RC_IDENTIFIER_REJECTED, 'a client with this id is connected, and takeover is refused', callback);
    }
    if (isGateway) {
      trusted.add(client);
      // the packet size limit is for strangers (packet-size-guard.js): the gateway's client
      // publishes what the gateway makes, and cutting it off would stop its publishing
      if (client.conn && typeof client.conn.liftLimit === 'function') client.conn.liftLimit();
    }
    holders.set(id, client);
    client.conn.once('close', () => { if (holders.get(id) === client) holders.delete(id); });
    callback(null, true);
  }

  function authorizePublish (client, packet, callback) {
    const topic = packet.topic;
    // aedes' own rule, which a custom hook replaces: $SYS/ is the broker's
    if (topic.startsWith('$SYS/')) return callback(new Error('$SYS/ topic is reserved'));
    // a client of null is a will published after its client is gone: only the gateway's is let through
    if (prefix !== null && (topic === prefix || topic.startsWith(prefix + '/')) && !(client && trusted.has(client)) && !(client && isWriteCommand(topic))) {
      const who = client ? `client ${quoted(client.id)} from ${client.conn && client.conn.remoteAddress}` : 'a client that is gone (its will)';
      report('publish-under-prefix', client, `publish to ${quoted(topic)} by ${who}: only the gateway may publish under ${prefix}/`, topic);
      // the client is disconnected: MQTT 3.1.1 has no way to tell it why [MQTT-3.3.5-2]
      return callback(new Error(`only the gateway may publish under ${prefix}/`));
    }
    if (edge !== null && isEdgeNodeTopic(topic, edge) && !(client && trusted.has(client))) {
      const who = client ? `client ${quoted(client.id)} from ${client.conn && client.conn.remoteAddress}` : 'a client that is gone (its will)';
      report('publish-under-prefix', client, `publish to ${quoted(topic)} by ${who}: only the gateway may publish as Sparkplug edge node ${edge.group}/${edge.node}`, topic);
      return callback(new Error(`only the gateway may publish as Sparkplug edge node ${edge.group}/${edge.node}`));
    }
    callback(null);
  }

  return {
    hooks: { authenticate, authorizePublish },
    login: login ? username : null,
    gatewayAuth,
    refuseConnection,
    refused: () => ({ ...counts }),
    close: () => {
      if (reporter) { reporter.flush(); reporter.clear(); }
      holders.clear();
    }
  };
}

module.exports = { createBrokerGuard, quoted, GATEWAY_USERNAME, REPORT_WINDOW_MS };
