'use strict';

/**
 * What the Modbus simulators that listen on TCP (tcp-server.js, rtutcp-server.js) share, so both
 * check, listen, refuse and close alike: their common options, listening with errors a user can act
 * on, the URL a client dials, refusing a connection, and closing the server and its connections.
 */

const C = require('../../base/constants');
const { NinesError } = require('../../base/errors');
const { FaultPlan } = require('../faults');
const { formatTarget } = require('../../drivers/target');
const { resolveModel } = require('./model');
const { parseQuirks } = require('./quirks');
const { intOption, stringOption, objectOption, noUnknownKeys } = require('./validate');

/** Options every TCP simulator takes (each adds its own) */
const LISTENER_OPTIONS = Object.freeze(['host', 'port', 'model', 'modelOptions', 'faults', 'faultOptions',
  'maxConnections', 'maxPending']);

const noop = () => {};

/**
 * Checks the options every TCP simulator takes.
 * @param {unknown} options as the user gave them
 * @param {readonly string[]} known every option the simulator takes (unknown ones are errors)
 * @param {number} defaultPort
 * @returns {{opts: Record<string, any>, port: number, o: {host: string, maxConnections: number, maxPending: number,
 *   model: import('./model').ModbusModel, faults: FaultPlan, quirks: import('./quirks').Quirks|null}}} opts: the
 *   options as given, for the simulator's own; port: the one to listen on; o: the checked common ones
 * @throws {NinesError} NINES_ERR_INVALID_ARG naming the option
 */
function listenerOptions (options, known, defaultPort) {
  const opts = objectOption(options, 'options');
  noUnknownKeys(opts, 'options', known);
  const o = {
    host: stringOption(opts.host, 'host', '127.0.0.1'),
    maxConnections: intOption(opts.maxConnections, 'maxConnections', 1, 100000, C.SIM_MODBUS_MAX_CONNECTIONS),
    maxPending: intOption(opts.maxPending, 'maxPending', 1, 100000, C.SIM_MODBUS_MAX_PENDING)
  };
  const port = intOption(opts.port, 'port', 0, 65535, defaultPort);
  o.model = resolveModel(opts.model, opts.modelOptions);
  o.faults = FaultPlan.parse(opts.faults, opts.faultOptions);
  o.quirks = parseQuirks(opts, { connections: true });
  return { opts, port, o };
}

/**
 * The target URL of a simulator, e.g. modbus+tcp://127.0.0.1:5020?unitId=1.
 * @param {'modbus+tcp'|'modbus+tls'|'modbus+rtutcp'} protocol
 * @param {string} host the address bound
 * @param {number} port
 * @param {import('./model').ModbusModel} model
 * @returns {string}
 */
function simulatorUrl (protocol, host, port, model) {
  // A wildcard address is not one a client can dial: name loopback instead.
  const dial = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  const ids = model.unitIds;
  return formatTarget({ protocol, host: dial, port, unitId: ids === 'any' ? 1 : ids[0] });
}

/**
 * Listens on host:port.
 * @param {import('node:net').Server} server
 * @param {string} host
 * @param {number} port 0 picks a free one
 * @param {string} what the simulator, for the error, e.g. "Modbus TCP simulator"
 * @returns {Promise<number>} the port listened on (the real one when 0 was asked)
 * @throws {NinesError} NINES_ERR_PORT_IN_USE when the port is taken, else NINES_ERR_INVALID_ARG
 */
function listen (server, host, port, what) {
  return new Promise((resolve, reject) => {
    const onError = (err) => {
      server.removeListener('listening', onListening);
      const inUse = err.code === 'EADDRINUSE';
      reject(new NinesError(inUse ? 'NINES_ERR_PORT_IN_USE' : 'NINES_ERR_INVALID_ARG',
        `${what} cannot listen on ${host}:${port}: ${inUse ? 'the port is in use' : err.message}`, { host, port, cause: err.code }));
    };
    const onListening = () => {
      server.removeListener('error', onError);
      // After listening, a server error (rare: EMFILE on accept) must not crash the process.
      server.on('error', noop);
      resolve(/** @type {import('node:net').AddressInfo} */ (server.address()).port);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen({ host, port });
  });
}

/**
 * Refuses an accepted connection ('refuse' fault, maxConnections, closing).
 * @param {import('node:net').Socket} socket
 */
function refuse (socket) {
  socket.on('error', noop);
  // RST rather than FIN: the client sees ECONNRESET at once, the nearest a listening socket gets to refusing.
  // A TLS socket has no TCP handle of its own to reset: it is closed
  if (/** @type {any} */ (socket).encrypted) socket.destroy();
  else socket.resetAndDestroy();
}

/**
 * Stops listening and destroys the sockets.
 * @param {import('node:net').Server} server
 * @param {Iterable<import('node:net').Socket>} sockets the open connections
 * @returns {Promise<void>} once the server and every socket have closed, so nothing keeps the loop alive
 */
function closeAll (server, sockets) {
  const waits = [...sockets].map((socket) => new Promise((resolve) => {
    socket.once('close', resolve);
    socket.destroy();
  }));
  if (server.listening) waits.push(new Promise((resolve) => server.close(() => resolve())));
  return Promise.all(waits).then(noop);
}

module.exports = { LISTENER_OPTIONS, listenerOptions, simulatorUrl, listen, refuse, closeAll };
