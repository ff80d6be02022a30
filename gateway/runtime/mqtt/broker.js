'use strict';

const net = require('node:net');
const { NinesError } = require('../../base/errors');
const D = require('../config/defaults');

/**
 * The embedded MQTT broker (aedes over node:net), started when the config names no broker, so
 * `nines run` works out of the box. Loopback by default: an edge PC should not expose a broker
 * without anyone asking for it.
 */

/**
 * @typedef {object} EmbeddedBroker
 * @property {string} url e.g. "mqtt://127.0.0.1:1883"
 * @property {string} host
 * @property {number} port the port actually bound (useful with port 0)
 * @property {() => number} clientCount connected client sockets
 * @property {() => Promise<void>} close stops listening, closes every client socket, closes aedes
 */

/**
 * Starts an aedes broker listening on host:port.
 * @param {object} [opts]
 * @param {string} [opts.host='127.0.0.1']
 * @param {number} [opts.port=1883] 0 picks a free port
 * @returns {Promise<EmbeddedBroker>}
 * @throws {NinesError} NINES_ERR_PORT_IN_USE when the port is taken; NINES_ERR_INVALID_ARG for a
 *   bad host or port
 */
async function startEmbeddedBroker ({ host = D.MQTT_EMBEDDED_HOST, port = D.MQTT_EMBEDDED_PORT } = {}) {
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `port: ${JSON.stringify(port)} must be an integer from 0 to 65535`, { field: 'port', value: port });
  }
  if (typeof host !== 'string' || host === '') {
    throw new NinesError('NINES_ERR_INVALID_ARG', `host: ${JSON.stringify(host)} must be a host name or address`, { field: 'host', value: host });
  }
  // aedes 1.x is an ES module; import() loads it from CommonJS on every Node version we support
  const { Aedes } = await import('aedes');
  const aedes = await Aedes.createBroker({ heartbeatInterval: 60000, drainTimeout: 10000 });
  /** @type {Set<net.Socket>} */
  const sockets = new Set();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    aedes.handle(socket);
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

  const bound = /** @type {net.AddressInfo} */ (server.address());
  const urlHost = bound.address.includes(':') ? `[${bound.address}]` : bound.address;
  let closing = null;
  return {
    url: `mqtt://${urlHost}:${bound.port}`,
    host: bound.address,
    port: bound.port,
    clientCount: () => sockets.size,
    close () {
      if (!closing) {
        closing = (async () => {
          const serverClosed = new Promise((resolve) => server.close(() => resolve()));
          // server.close() waits for open connections; aedes closes its clients (publishing their
          // wills), and sockets that never sent CONNECT are destroyed here
          await new Promise((resolve) => aedes.close(() => resolve()));
          for (const s of sockets) s.destroy();
          await serverClosed;
        })();
      }
      return closing;
    }
  };
}

module.exports = { startEmbeddedBroker };
