'use strict';

/**
 * Servers for the Modbus client tests: servers nobody here wrote (modbus-serial's ServerTCP, jsmodbus'
 * TCP server) for interop, and tiny raw TCP servers for the behaviours they cannot produce (exceptions on
 * demand, delayed or split replies, broken headers). Everything listens on 127.0.0.1 and a free port.
 */

const net = require('node:net');
const tls = require('node:tls');
const { once } = require('node:events');
const ServerTCP = require('modbus-serial').ServerTCP;
const Modbus = require('jsmodbus');
const { mbapFrame } = require('../../gateway/drivers/modbus/frame');
const { createClient } = require('../../gateway/drivers/modbus');

/**
 * A free TCP port (modbus-serial's ServerTCP treats port 0 as "use 502", so it cannot take 0 itself).
 * @returns {Promise<number>}
 */
async function freePort () {
  const s = net.createServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const { port } = s.address();
  await new Promise((resolve) => s.close(resolve));
  return port;
}

/**
 * modbus-serial's ServerTCP over a plain register/coil model.
 * @param {object} [o]
 * @param {number} [o.port] a port to listen on (default: a free one)
 * @param {object} [o.vector] overrides of the service vector
 * @returns {Promise<{port: number, regs: number[], input: number[], coils: boolean[], discrete: boolean[], close: () => Promise<void>}>}
 */
async function startServerTCP ({ port, vector = {} } = {}) {
  if (port === undefined) port = await freePort();
  const regs = Array.from({ length: 200 }, (_, i) => i * 3);
  const input = Array.from({ length: 200 }, (_, i) => 1000 + i);
  const coils = Array.from({ length: 200 }, () => false);
  const discrete = Array.from({ length: 200 }, (_, i) => i % 3 === 0);
  // ServerTCP answers exception N when a vector function throws {modbusErrorCode: N}
  const illegal = { modbusErrorCode: 2, msg: 'ILLEGAL DATA ADDRESS' };
  const server = new ServerTCP({
    getHoldingRegister: (a) => { if (a >= regs.length) throw illegal; return regs[a]; },
    getInputRegister: (a) => input[a],
    getCoil: (a) => coils[a],
    getDiscreteInput: (a) => discrete[a],
    setRegister: (a, v) => { regs[a] = v; },
    setCoil: (a, v) => { coils[a] = v; },
    ...vector
  }, { host: '127.0.0.1', port, unitID: 1 });
  server.on('socketError', () => {});
  await Promise.race([
    once(server, 'initialized'),
    once(server, 'serverError').then(([err]) => { throw err; })
  ]);
  return {
    port,
    regs,
    input,
    coils,
    discrete,
    server,
    close: () => new Promise((resolve) => server.close(() => resolve()))
  };
}

/**
 * jsmodbus' TCP server with 100 holding registers (register i holds 100 + i).
 * @returns {Promise<{port: number, holding: Buffer, close: () => Promise<void>}>}
 */
async function startJsmodbus () {
  const netServer = new net.Server();
  const holding = Buffer.alloc(200);
  for (let i = 0; i < 100; i++) holding.writeUInt16BE(100 + i, 2 * i);
  new Modbus.server.TCP(netServer, { holding });
  const sockets = new Set();
  netServer.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  netServer.listen(0, '127.0.0.1');
  await once(netServer, 'listening');
  return {
    port: netServer.address().port,
    holding,
    close: () => new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      netServer.close(() => resolve());
    })
  };
}

/**
 * A raw Modbus TCP server: parses MBAP requests and hands each to `onRequest`, which answers by
 * calling the given helpers (or not at all).
 * @param {(req: {tid: number, unitId: number, pdu: Buffer, socket: net.Socket, index: number}) => void} onRequest
 * @param {object} [o]
 * @param {number} [o.port]
 * @param {{cert: string, key: string, ca: string}} [o.tls] serve over TLS (Modbus/TCP Security), requiring a client
 *   certificate signed by ca
 * @returns {Promise<{port: number, requests: object[], sockets: Set<net.Socket>, close: () => Promise<void>}>}
 */
async function startRawServer (onRequest, { port = 0, tls: secure } = {}) {
  const sockets = new Set();
  const requests = [];
  const serve = (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let acc = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      acc = Buffer.concat([acc, chunk]);
      while (acc.length >= 7) {
        const end = 6 + acc.readUInt16BE(4);
        if (acc.length < end) break;
        const req = { tid: acc.readUInt16BE(0), unitId: acc[6], pdu: Buffer.from(acc.subarray(7, end)), socket, index: requests.length };
        requests.push(req);
        acc = acc.subarray(end);
        onRequest(req);
      }
    });
  };
  const server = secure === undefined ? net.createServer(serve)
    : tls.createServer({ ...secure, requestCert: true, rejectUnauthorized: true }, serve);
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: server.address().port,
    requests,
    sockets,
    close: () => new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    })
  };
}

/**
 * For a describe block of client tests against raw servers: registers an afterEach that closes what each
 * test opened, and returns setup(onRequest, opts), which starts a raw server (startRawServer) and a
 * connected modbus+tcp client of unit 1 on it (short reconnect backoff; opts are the client's options).
 * @param {() => {server: object, client: object}} [tlsPair] over TLS instead (Modbus/TCP Security): both ends'
 *   TLS options (test/helpers/tls-certs.js tlsPair), asked for when a test starts
 * @returns {(onRequest: (req: object) => void, opts?: object) => Promise<{srv: Awaited<ReturnType<typeof startRawServer>>, client: any}>}
 */
function rawClientSetup (tlsPair) {
  const cleanup = [];
  afterEach(async () => {
    while (cleanup.length) await cleanup.pop()();
  });
  return async function setup (onRequest, opts = {}) {
    const pair = tlsPair ? tlsPair() : null;
    const srv = await startRawServer(onRequest, pair ? { tls: pair.server } : {});
    const client = pair
      ? createClient(`modbus+tls://127.0.0.1:${srv.port}?unitId=1`, { backoff: { initialMs: 10, maxMs: 50 }, tls: pair.client, ...opts })
      : createClient(`modbus+tcp://127.0.0.1:${srv.port}?unitId=1`, { backoff: { initialMs: 10, maxMs: 50 }, ...opts });
    cleanup.push(() => srv.close(), () => client.close());
    await client.connect();
    return { srv, client };
  };
}

/**
 * The normal FC3/FC4 response PDU for a request PDU, register i holding `value(i)`.
 * @param {Buffer} reqPdu
 * @param {(address: number) => number} [value]
 * @returns {Buffer}
 */
function registersPdu (reqPdu, value = (a) => a) {
  const address = reqPdu.readUInt16BE(1);
  const quantity = reqPdu.readUInt16BE(3);
  const pdu = Buffer.alloc(2 + 2 * quantity);
  pdu[0] = reqPdu[0];
  pdu[1] = 2 * quantity;
  for (let i = 0; i < quantity; i++) pdu.writeUInt16BE(value(address + i) & 0xFFFF, 2 + 2 * i);
  return pdu;
}

/**
 * A full MBAP response answering `req` with `pdu`.
 * @param {{tid: number, unitId: number}} req
 * @param {Buffer} pdu
 * @returns {Buffer}
 */
function answer (req, pdu) {
  return mbapFrame(req.tid, req.unitId, pdu);
}

/**
 * Resolves with the rejection of a promise that must reject.
 * @param {Promise<unknown>} promise
 * @returns {Promise<any>}
 */
async function rejectionOf (promise) {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection, got a resolution');
}

/**
 * Waits for an event with a safety timeout (the test fails rather than hangs). Unlike events.once it
 * neither listens for 'error' nor rejects on it: the client only emits 'error' when someone listens.
 * @param {import('node:events').EventEmitter} emitter
 * @param {string} event
 * @param {number} [ms=5000]
 * @returns {Promise<any[]>}
 */
function eventOf (emitter, event, ms = 5000) {
  return new Promise((resolve, reject) => {
    const onEvent = (...args) => {
      clearTimeout(timer);
      resolve(args);
    };
    const timer = setTimeout(() => {
      emitter.removeListener(event, onEvent);
      reject(new Error(`no '${event}' event within ${ms} ms`));
    }, ms);
    emitter.once(event, onEvent);
  });
}

module.exports = { freePort, startServerTCP, startJsmodbus, startRawServer, rawClientSetup, registersPdu, answer, rejectionOf, eventOf };
