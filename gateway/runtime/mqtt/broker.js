'use strict';

const net = require('node:net');
const { NinesError } = require('../../base/errors');
const D = require('./defaults');
const { createBrokerGuard, quoted } = require('./broker-guard');
const { isLoopbackHost } = require('../loopback');
const { GuardedConnection } = require('./packet-size-guard');

/**
 * The embedded MQTT broker (aedes over node:net), started when the config names no broker, so
 * `nines run` works out of the box. Loopback by default: an edge PC should not expose a broker
 * without anyone asking for it, and beyond loopback it requires a login (broker-guard.js).
 * It runs in the gateway's process, so what a client can make it hold is bounded: packets by
 * size (packet-size-guard.js), connections by count, QoS 2 messages awaiting PUBREL per client
 * by count (defaults.js explains each).
 */

/**
 * @typedef {object} EmbeddedBroker
 * @property {string} url for clients on this machine, e.g. "mqtt://127.0.0.1:1883" (a wildcard
 *   address such as 0.0.0.0 is given as its loopback address)
 * @property {string} host the address actually bound
 * @property {number} port the port actually bound (useful with port 0)
 * @property {boolean} loopback whether only this machine can connect
 * @property {string|null} login the username clients must log in with, or null (open, loopback only)
 * @property {{username: string, password: string}|null} gatewayAuth the gateway's own credential
 *   (with opts.gateway; not enumerable, so it does not show up when the object is logged)
 * @property {() => Record<string, number>} refused refusals so far, by reason
 * @property {() => number} clientCount connected client sockets
 * @property {() => Promise<void>} close stops listening, closes every client socket, closes aedes
 */

/**
 * The URL local clients use for a bound address: a wildcard is reached through loopback.
 * @param {string} address as from server.address()
 * @param {number} port
 * @returns {string}
 */
function localUrl (address, port) {
  const host = address === '0.0.0.0' ? '127.0.0.1' : address === '::' ? '::1' : address;
  return `mqtt://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * Starts an aedes broker listening on host:port.
 * @param {object} [opts]
 * @param {string} [opts.host='127.0.0.1'] beyond loopback (e.g. 0.0.0.0) only with username and password
 * @param {number} [opts.port=1883] 0 picks a free port
 * @param {string} [opts.username] clients must log in with this and the password (required beyond loopback)
 * @param {string} [opts.password]
 * @param {{clientId: string, prefix: string, sparkplug?: {clientId: string, group: string, node: string}}} [opts.gateway]
 *   the gateway this broker serves (and its Sparkplug edge node, broker-guard.js): only
 *   its client (which logs in with `gatewayAuth`) may publish under `<prefix>/`, its client id is
 *   reserved, and no client takes over a connected client id. Without it the broker is plain
 *   aedes apart from the login (for tests and tools).
 * @param {number} [opts.maxPacketBytes] largest packet taken from a client other than the
 *   gateway's own; a connection sending a larger one is closed (default 1 MiB)
 * @param {number} [opts.maxClients] open connections; more are closed at accept (default 64)
 * @param {boolean} [opts.refuseTakeover] default: true with opts.gateway
 * @param {(refusal: import('./broker-guard').Refusal) => void} [opts.onRefused] told of refused
 *   logins, client ids, publishes, oversized packets and connections over the limit, at most
 *   once per reason per 10 s (with a count)
 * @returns {Promise<EmbeddedBroker>}
 * @throws {NinesError} NINES_ERR_PORT_IN_USE when the port is taken; NINES_ERR_INVALID_ARG for a
 *   bad host or port, a host beyond loopback without a login, a bad limit, or a bad login or
 *   gateway option
 */
async function startEmbeddedBroker ({
  host = D.MQTT_EMBEDDED_HOST, port = D.MQTT_EMBEDDED_PORT, username, password, gateway, refuseTakeover, onRefused,
  maxPacketBytes = D.MQTT_EMBEDDED_MAX_PACKET_BYTES, maxClients = D.MQTT_EMBEDDED_MAX_CLIENTS
} = {}) {
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `port: ${JSON.stringify(port)} must be an integer from 0 to 65535`, { field: 'port', value: port });
  }
  if (!Number.isInteger(maxPacketBytes) || maxPacketBytes < D.MQTT_EMBEDDED_MIN_PACKET_BYTES || maxPacketBytes > D.MQTT_EMBEDDED_MAX_PACKET_LIMIT) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `maxPacketBytes: ${JSON.stringify(maxPacketBytes)} must be an integer from ${D.MQTT_EMBEDDED_MIN_PACKET_BYTES} to ${D.MQTT_EMBEDDED_MAX_PACKET_LIMIT}`, { field: 'maxPacketBytes', value: maxPacketBytes });
  }
  if (!Number.isInteger(maxClients) || maxClients < 1 || maxClients > D.MQTT_EMBEDDED_MAX_CLIENTS_LIMIT) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `maxClients: ${JSON.stringify(maxClients)} must be an integer from 1 to ${D.MQTT_EMBEDDED_MAX_CLIENTS_LIMIT}`, { field: 'maxClients', value: maxClients });
  }
  if (typeof host !== 'string' || host === '') {
    throw new NinesError('NINES_ERR_INVALID_ARG', `host: ${JSON.stringify(host)} must be a host name or address`, { field: 'host', value: host });
  }
  // checked before anything listens: an open broker never binds beyond loopback, not even briefly
  const guard = createBrokerGuard({ host, username, password, gateway, refuseTakeover, onRefused });
  // aedes 1.x is an ES module; import() loads it from CommonJS on every Node version we support
  const { Aedes } = await import('aedes');
  const aedes = await Aedes.createBroker({ heartbeatInterval: 60000, drainTimeout: 10000, maxInflightInbound: D.MQTT_MAX_INFLIGHT, ...guard.hooks });
  /** @type {Set<net.Socket>} */
  const sockets = new Set();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    const conn = new GuardedConnection(socket, {
      maxPacketBytes,
      onTooLarge: (size) => {
        const c = conn.client; // aedes' client of this connection, with its id once CONNECT is read
        const who = c && typeof c.id === 'string' ? `client ${quoted(c.id)}` : 'a client';
        guard.refuseConnection('packet-too-large', c || { conn },
          `a packet of ${size === Infinity ? 'more than 268435460' : size} bytes from ${who} at ${socket.remoteAddress}: over the limit of ${maxPacketBytes} (mqtt.embedded.maxPacketSize); connection closed`);
      }
    });
    aedes.handle(conn);
  });
  // Node closes connections past maxConnections at accept and tells 'drop'
  server.maxConnections = maxClients;
  server.on('drop', (data) => {
    guard.refuseConnection('too-many-clients', { conn: { remoteAddress: data ? data.remoteAddress : null } },
      `a connection from ${data ? data.remoteAddress : 'a client'}: ${maxClients} clients are connected, the limit (mqtt.embedded.maxClients); connection closed`);
  });

  try {
    await new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    guard.close();
    await new Promise((resolve) => aedes.close(resolve));
    if (err.code === 'EADDRINUSE') {
      throw new NinesError('NINES_ERR_PORT_IN_USE',
        `port ${port} on ${host} is in use: another broker is running? set mqtt.url to use it`, { host, port, cause: err.code });
    }
    if (err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND' || err.code === 'EACCES') {
      throw new NinesError('NINES_ERR_INVALID_ARG', `cannot listen on ${host}:${port}: ${err.code}`, { host, port, cause: err.code });
    }
    throw err;
  }

  let closing = null;
  const close = () => {
    if (!closing) {
      closing = (async () => {
        const serverClosed = new Promise((resolve) => server.close(() => resolve()));
        // server.close() waits for open connections; aedes closes its clients (publishing their
        // wills), and sockets that never sent CONNECT are destroyed here
        await new Promise((resolve) => aedes.close(() => resolve()));
        for (const s of sockets) s.destroy();
        await serverClosed;
        guard.close();
      })();
    }
    return closing;
  };

  const bound = /** @type {net.AddressInfo} */ (server.address());
  const loopback = isLoopbackHost(bound.address);
  if (!loopback && guard.login === null) {
    // a name that counted as loopback ("localhost") resolved to something else
    await close();
    throw new NinesError('NINES_ERR_INVALID_ARG', `host: ${JSON.stringify(host)} bound ${bound.address}, beyond loopback: pass username and password so that clients must log in, or listen on 127.0.0.1`, { field: 'host', value: host, bound: bound.address });
  }
  const broker = {
    url: localUrl(bound.address, bound.port),
    host: bound.address,
    port: bound.port,
    loopback,
    login: guard.login,
    refused: guard.refused,
    clientCount: () => sockets.size,
    close
  };
  Object.defineProperty(broker, 'gatewayAuth', { value: guard.gatewayAuth, enumerable: false });
  return broker;
}

module.exports = { startEmbeddedBroker, localUrl };
