'use strict';

/**
 * Shared pieces of the device tests: real simulators on 127.0.0.1 port 0, a createClient that
 * records what the device does with its clients, and waits that fail instead of hanging.
 */

const net = require('node:net');
const { once } = require('node:events');
const { createClient } = require('../../gateway/drivers');
const { Device } = require('../../gateway/devices');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { createAsciiSimulator } = require('../../gateway/simulators/ascii');

/** A holding-register read the Modbus simulator answers. */
const READ = Object.freeze({ fc: 3, address: 0, quantity: 2 });

/** @param {object} [opts] createModbusTcpSimulator options @returns {Promise<any>} */
function startModbus (opts = {}) {
  return createModbusTcpSimulator({ port: 0, ...opts });
}

/** @param {object} [opts] createAsciiSimulator options @returns {Promise<any>} */
function startAscii (opts = {}) {
  return createAsciiSimulator({ port: 0, ...opts });
}

/** @returns {Promise<number>} a port nobody listens on (for a device that is down at start) */
async function freePort () {
  const s = net.createServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const { port } = s.address();
  await new Promise((resolve) => s.close(resolve));
  return port;
}

/**
 * A createClient for Device that builds real clients and records, per client, every hand-over:
 * the timeoutMs it got, and whether the client had no free slot (as many requests in flight as its
 * effective maxInflight, or its own queue in use), and the most requests in flight it was handed.
 * @returns {{createClient: Function, clients: object[], calls: Array<{timeoutMs: number}>, busyHandOvers: number,
 *   opts: object[], most: number[]}}
 */
function recordingFactory () {
  const rec = { clients: [], calls: [], busyHandOvers: 0, opts: [], most: [] };
  rec.createClient = (target, opts) => {
    const client = createClient(target, opts);
    const i = rec.clients.length;
    rec.clients.push(client);
    rec.opts.push(opts);
    rec.most.push(0);
    const request = client.request.bind(client);
    client.request = (op, o) => {
      const s = client.stats;
      if (s.inFlight >= client.effectiveInflight || s.queued !== 0) rec.busyHandOvers++;
      rec.calls.push({ timeoutMs: o ? o.timeoutMs : undefined });
      const p = request(op, o);
      rec.most[i] = Math.max(rec.most[i], client.inFlight);
      return p;
    };
    // the path without a promise (submit(), what the scheduler's lanes use), held to the same rules
    if (typeof client.submit === 'function') {
      const submit = client.submit.bind(client);
      client.submit = (op, timeoutMs, handler) => {
        const s = client.stats;
        if (s.inFlight >= client.effectiveInflight || s.queued !== 0) rec.busyHandOvers++;
        rec.calls.push({ timeoutMs, submit: true });
        submit(op, timeoutMs, handler);
        rec.most[i] = Math.max(rec.most[i], client.inFlight);
      };
    }
    return client;
  };
  return rec;
}

/**
 * The setup most device tests share, for a describe(): `t.open(sim, spec)` builds a Device on the
 * simulator's url (named 'plc' unless spec names it) with a recordingFactory and opens it (not with
 * {open: false}); after each test the device, then the simulator, are closed.
 * @returns {{open: (sim: any, spec?: object, opts?: {open?: boolean}) => Promise<{sim: any, device: Device, rec: object}>}}
 */
function deviceFixture () {
  const kept = [];
  afterEach(async function () {
    for (const x of kept.splice(0).reverse()) await x.close();
  });
  return {
    async open (sim, spec = {}, { open = true } = {}) {
      kept.push(sim);
      const rec = recordingFactory();
      const device = new Device({ name: 'plc', target: sim.url, ...spec }, { createClient: rec.createClient });
      kept.push(device);
      if (open) await device.open();
      return { sim, device, rec };
    }
  };
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
 * Collects a device's 'health' events.
 * @param {import('node:events').EventEmitter} device
 * @returns {object[]} filled as events come
 */
function healthLog (device) {
  const log = [];
  device.on('health', (h) => log.push(h));
  return log;
}

/**
 * Orders settled requests by the time they went on the wire (sentNs).
 * @param {Array<{user: string, sentNs: bigint}>} done
 * @returns {string[]} user names in send order
 */
function sendOrder (done) {
  return [...done].sort((a, b) => (a.sentNs < b.sentNs ? -1 : a.sentNs > b.sentNs ? 1 : 0)).map((x) => x.user);
}

module.exports = { READ, startModbus, startAscii, freePort, recordingFactory, deviceFixture, rejectionOf, healthLog, sendOrder };
