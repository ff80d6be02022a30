'use strict';

/**
 * The ASCII simulator's TCP server: an ED-588 or ED-560 on 127.0.0.1:9500 by default, many
 * simultaneous connections (the vendor's tests use 1, 2, 4, 8), each strictly request/response,
 * with the shared fault engine (faults.js). Framing, ordering and delays are in connection.js;
 * the device itself is pure (device.js).
 */

const net = require('node:net');
const { NinesError, toNinesError } = require('../../base/errors');
const { SIM_ASCII_PORT } = require('../../base/constants');
const { parseDuration } = require('../../base/quantities');
const { formatTarget } = require('../../drivers/target');
const { FaultPlan } = require('../faults');
const { createDevice } = require('./device');
const { SimConnection } = require('./connection');

const OPTION_KEYS = ['model', 'host', 'port', 'address', 'checksum', 'name', 'faults', 'maxConnections', 'idleTimeoutMs', 'animate', 'faultOptions'];
const DEFAULT_HOST = '127.0.0.1';
/** Connections served at once; more are accepted and closed at once, and counted as refused [OURS]. */
const DEFAULT_MAX_CONNECTIONS = 32;
const MAX_CONNECTIONS_LIMIT = 4096;

/** @returns {never} */
function invalid (field, value, rule) {
  throw new NinesError('NINES_ERR_INVALID_ARG', `${field} must be ${rule}; got ${JSON.stringify(value)}`, { field, value });
}

/** @returns {object} validated server options (device options are checked by createDevice) */
function checkOptions (o) {
  if (o === null || typeof o !== 'object') invalid('options', o, 'an object');
  for (const k of Object.keys(o)) if (!OPTION_KEYS.includes(k)) invalid(k, o[k], `absent: unknown option (known: ${OPTION_KEYS.join(', ')})`);
  const host = o.host === undefined ? DEFAULT_HOST : o.host;
  const port = o.port === undefined ? SIM_ASCII_PORT : o.port;
  const maxConnections = o.maxConnections === undefined ? DEFAULT_MAX_CONNECTIONS : o.maxConnections;
  if (typeof host !== 'string' || host.trim() === '') invalid('host', host, 'a host name or IP address');
  if (!Number.isInteger(port) || port < 0 || port > 65535) invalid('port', port, 'an integer 0-65535 (0 picks a free port)');
  if (!Number.isInteger(maxConnections) || maxConnections < 1 || maxConnections > MAX_CONNECTIONS_LIMIT) {
    invalid('maxConnections', maxConnections, `an integer 1-${MAX_CONNECTIONS_LIMIT}`);
  }
  const idleTimeoutMs = o.idleTimeoutMs === undefined ? 0 : parseDuration(o.idleTimeoutMs, 'idleTimeoutMs');
  return { host, port, maxConnections, idleTimeoutMs };
}

/** A running ASCII simulator. Create with createAsciiSimulator(). */
class AsciiSimulator {
  constructor (device, faults, opts) {
    /** @type {import('./device').AsciiDevice} */
    this.device = device;
    /** @type {FaultPlan} */
    this.faults = faults;
    this.host = opts.host;
    this.port = opts.port;
    this._opts = opts;
    /** Counters since start; every request ends in exactly one of replies, silent, dropped, garbage, closed, overflow. */
    this.stats = {
      connections: 0,
      requests: 0,
      replies: 0,
      silent: 0,
      dropped: 0,
      garbage: 0,
      closed: 0,
      refused: 0,
      discardedFrames: 0,
      overflow: 0,
      idleClosed: 0,
      reboots: 0
    };
    /** @type {Set<SimConnection>} */
    this._conns = new Set();
    this._closePromise = null;
    this._server = net.createServer((socket) => this._accept(socket));
  }

  /** @returns {string} the target URL of this simulator, e.g. ascii://127.0.0.1:9500?address=01&checksum=off */
  get url () {
    return formatTarget({ protocol: 'ascii', host: this.host, port: this.port, address: this.device.address, checksum: this.device.checksum });
  }

  /** @returns {number} connections open now */
  get openConnections () {
    return this._conns.size;
  }

  /** @returns {Promise<this>} */
  _listen () {
    return new Promise((resolve, reject) => {
      const onError = (err) => {
        this._server.removeListener('listening', onListening);
        if (err.code === 'EADDRINUSE') {
          reject(new NinesError('NINES_ERR_PORT_IN_USE', `ASCII simulator cannot listen on ${this.host}:${this.port}: port ${this.port} is in use`,
            { host: this.host, port: this.port, cause: err.code }));
        } else {
          reject(toNinesError(err, 'NINES_ERR_INVALID_ARG'));
        }
      };
      const onListening = () => {
        this._server.removeListener('error', onError);
        // Later server errors (rare: EMFILE on accept) must not crash the process.
        this._server.on('error', () => {});
        this.port = /** @type {import('node:net').AddressInfo} */ (this._server.address()).port;
        this.faults.start();
        resolve(this);
      };
      this._server.once('error', onError);
      this._server.once('listening', onListening);
      this._server.listen({ host: this.host, port: this.port });
    });
  }

  /** @param {import('node:net').Socket} socket */
  _accept (socket) {
    socket.on('error', () => {}); // ECONNRESET and friends end the connection, nothing more
    if (this._closePromise || this.faults.refuse || this._conns.size >= this._opts.maxConnections) {
      this.stats.refused++;
      socket.destroy();
      return;
    }
    this.stats.connections++;
    socket.setNoDelay(true);
    const conn = new SimConnection(this, socket);
    this._conns.add(conn);
    socket.on('close', () => {
      conn.onClose();
      this._conns.delete(conn);
    });
    if (this._opts.idleTimeoutMs > 0) {
      socket.setTimeout(this._opts.idleTimeoutMs, () => {
        this.stats.idleClosed++;
        conn.destroy();
      });
    }
  }

  /** A reboot ($AARS, $AAS1): every connection is flushed and closed, as the device restarts [DOC]. */
  _reboot () {
    this.stats.reboots++;
    for (const conn of this._conns) conn.shutdown();
  }

  /** Cuts every open connection at once (a network failure); the server keeps listening. */
  dropConnections () {
    for (const conn of this._conns) conn.destroy();
  }

  /**
   * Stops listening, destroys every open socket and disarms the fault timers. Idempotent.
   * @returns {Promise<void>}
   */
  close () {
    if (this._closePromise) return this._closePromise;
    this.faults.stop();
    this._closePromise = new Promise((resolve) => {
      this._server.close(() => resolve());
    });
    this.dropConnections();
    return this._closePromise;
  }
}

/**
 * Starts an ASCII simulator.
 * @param {{model?: 'ED-588'|'ED-560', host?: string, port?: number, address?: string|number,
 *   checksum?: boolean, name?: string, faults?: string|object|FaultPlan, maxConnections?: number,
 *   idleTimeoutMs?: number|string, animate?: boolean, faultOptions?: {random?: () => number, now?: () => number}}} [options]
 *   port 0 picks a free port (tests); idleTimeoutMs 0 never closes idle connections (the device default [DOC]);
 *   faultOptions go to FaultPlan.parse (injected random source or clock), as in the Modbus simulator
 * @returns {Promise<AsciiSimulator>} listening; sim.port is the actual port
 * @throws {NinesError} NINES_ERR_INVALID_ARG for a bad option, NINES_ERR_PORT_IN_USE when the port is taken
 */
async function createAsciiSimulator (options = {}) {
  const opts = checkOptions(options);
  const device = createDevice({
    model: options.model,
    address: options.address,
    checksum: options.checksum,
    name: options.name,
    animate: options.animate
  });
  const faults = FaultPlan.parse(options.faults, options.faultOptions);
  const sim = new AsciiSimulator(device, faults, opts);
  return sim._listen();
}

module.exports = { createAsciiSimulator, AsciiSimulator };
