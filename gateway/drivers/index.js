'use strict';

const { parseTarget } = require('./target');

/**
 * Maps a target's scheme to its driver, as MQTT.js maps URL schemes to stream builders; each driver
 * is loaded only when a target needs it (the RTU path pulls in serialport). ascii:// → AsciiClient;
 * modbus+tcp://, modbus+rtu:// and modbus+rtutcp:// → ModbusClient, with the transport of the scheme.
 * @param {string|import('./target').Target} target URL or parsed target
 * @param {object} [opts] client options: the shared ones (connection-options.js: timeoutMs,
 *   connectTimeoutMs, queueMax, reconnect, backoff, random) and the protocol's own; unknown ones are errors
 * @returns {import('./connection').Connection} an AsciiClient or a ModbusClient, not connected yet
 */
function createClient (target, opts = {}) {
  const t = parseTarget(target);
  if (t.protocol === 'ascii') {
    const { AsciiClient } = require('./ascii');
    return new AsciiClient(t, opts);
  }
  return require('./modbus').createClient(t, opts);
}

/**
 * Opens `n` connections to one target and waits until all are connected. If one fails, the ones
 * already made are closed and the first failure is thrown.
 * @param {number} n
 * @param {() => {connect: Function, close: Function}} make builds one client (createClient, or a wrapper)
 * @returns {Promise<Array<object>>}
 */
async function openClients (n, make) {
  const clients = [];
  try {
    for (let i = 0; i < n; i++) clients.push(make());
    await Promise.all(clients.map((c) => c.connect()));
    return clients;
  } catch (err) {
    await closeClients(clients);
    throw err;
  }
}

/**
 * Closes clients, waiting for all of them whatever each one does.
 * @param {Array<{close: Function}>} clients
 * @returns {Promise<void>}
 */
async function closeClients (clients) {
  await Promise.allSettled(clients.map((c) => c.close()));
}

module.exports = { createClient, openClients, closeClients };
