'use strict';

/**
 * One driver contract, four transports (MQTT.js runs its abstract client suite per transport):
 * the ASCII client against the ED-588 simulator, the Modbus client against the Modbus TCP simulator,
 * in clear and over TLS (Modbus/TCP Security), and the Modbus client over RTU through a socat PTY pair against the RTU simulator. Whatever the
 * transport, the scheduler, the gateway and the Node-RED nodes get the same behaviour.
 */

const assert = require('node:assert/strict');
const { createClient } = require('../../gateway/drivers');
const { createAsciiSimulator } = require('../../gateway/simulators/ascii');
const { createModbusTcpSimulator, createModbusRtuSimulator } = require('../../gateway/simulators/modbus');
const { createPtyPair } = require('../helpers/pty');
const { tlsPair } = require('../helpers/tls-certs');

const TRANSPORTS = [
  {
    name: 'ASCII over TCP (ED-588 simulator)',
    async setup () {
      const sim = await createAsciiSimulator({ port: 0 });
      return { sim, url: sim.url, close: () => sim.close() };
    },
    opA: '@01',
    opB: '$01M',
    checkA: (r) => assert.deepEqual(r.inputs, Array(8).fill(true)),
    checkB: (r) => assert.equal(r.name, 'ED-588')
  },
  {
    name: 'Modbus TCP (simulator)',
    async setup () {
      const sim = await createModbusTcpSimulator({ port: 0 });
      sim.model.setRegisters('holdingRegisters', 5, [1234, 5678]);
      return { sim, url: sim.url, close: () => sim.close() };
    },
    opA: { fc: 3, address: 0, quantity: 1 },
    opB: { fc: 3, address: 5, quantity: 2 },
    checkA: (r) => assert.deepEqual(r.data, [0]),
    checkB: (r) => assert.deepEqual(r.data, [1234, 5678])
  },
  {
    name: 'Modbus/TCP Security, MBAP over TLS (simulator)',
    async setup () {
      const pair = tlsPair();
      const sim = await createModbusTcpSimulator({ port: 0, tls: pair.server });
      sim.model.setRegisters('holdingRegisters', 5, [1234, 5678]);
      return { sim, url: sim.url, options: { tls: pair.client }, close: () => sim.close() };
    },
    opA: { fc: 3, address: 0, quantity: 1 },
    opB: { fc: 3, address: 5, quantity: 2 },
    checkA: (r) => assert.deepEqual(r.data, [0]),
    checkB: (r) => assert.deepEqual(r.data, [1234, 5678])
  },
  {
    name: 'Modbus RTU over a PTY pair (simulator)',
    async setup () {
      const pty = await createPtyPair();
      const sim = await createModbusRtuSimulator({ path: pty.a, baudRate: 115200 });
      sim.model.setRegisters('holdingRegisters', 5, [1234, 5678]);
      return { sim, url: `modbus+rtu://${pty.b}?baudRate=115200&unitId=1`, close: async () => { await sim.close(); await pty.close(); } };
    },
    opA: { fc: 3, address: 0, quantity: 1 },
    opB: { fc: 3, address: 5, quantity: 2 },
    checkA: (r) => assert.deepEqual(r.data, [0]),
    checkB: (r) => assert.deepEqual(r.data, [1234, 5678])
  }
];

for (const t of TRANSPORTS) {
  describe(`driver contract: ${t.name}`, function () {
    this.timeout(15000);
    let env;
    let client;
    beforeEach(async () => { env = await t.setup(); });
    afterEach(async () => {
      if (client) await client.close();
      client = null;
      if (env) await env.close();
      env = null;
    });

    it('connects, answers, and stamps sentNs < doneNs on the reply', async () => {
      client = createClient(env.url, { ...env.options, timeoutMs: 1000 });
      assert.equal(client.state, 'idle');
      await client.connect();
      assert.equal(client.state, 'connected');
      const r = await client.request(t.opA);
      assert.equal(r.ok, true);
      t.checkA(r);
      assert.equal(typeof r.sentNs, 'bigint');
      assert.ok(r.doneNs > r.sentNs);
    });

    it('starts connecting by itself on the first request', async () => {
      client = createClient(env.url, { ...env.options, timeoutMs: 1000 });
      t.checkB(await client.request(t.opB));
    });

    it('keeps one request on the wire, serves the queue in order, and refuses past queueMax', async () => {
      client = createClient(env.url, { ...env.options, timeoutMs: 2000, queueMax: 2 });
      await client.connect();
      const p = [client.request(t.opA), client.request(t.opB), client.request(t.opA), client.request(t.opB)];
      const settled = await Promise.allSettled(p);
      // served in order up to the bound, refused after it: on RTU the first request waits for the
      // line's t3.5 gap in the queue, so one fewer fits than on TCP
      const served = settled.filter((s) => s.status === 'fulfilled').length;
      assert.ok(served >= 2 && served <= 3, `${served} served`);
      settled.slice(0, served).forEach((s, i) => (i % 2 === 0 ? t.checkA(s.value) : t.checkB(s.value)));
      for (const s of settled.slice(served)) {
        assert.equal(s.status, 'rejected');
        assert.equal(s.reason.code, 'NINES_ERR_QUEUE_FULL');
      }
    });

    it('times out a silent device with sentNs on the error, and stays usable', async () => {
      client = createClient(env.url, { ...env.options, timeoutMs: 150 });
      await client.connect();
      env.sim.faults.set('drop=1');
      const err = await client.request(t.opA).then(() => null, (e) => e);
      assert.equal(err.code, 'NINES_ERR_REPLY_TIMEOUT');
      assert.equal(typeof err.sentNs, 'bigint');
      env.sim.faults.clear();
      t.checkB(await client.request(t.opB, { timeoutMs: 2000 }));
    });

    it('never takes a late reply as the next request\'s', async () => {
      client = createClient(env.url, { ...env.options, timeoutMs: 100 });
      await client.connect();
      env.sim.faults.set('latency=300ms');
      const err = await client.request(t.opA).then(() => null, (e) => e);
      assert.equal(err.code, 'NINES_ERR_REPLY_TIMEOUT');
      env.sim.faults.clear();
      // the late reply to opA arrives while opB waits: opB must get its own reply
      const r = await client.request(t.opB, { timeoutMs: 3000 });
      t.checkB(r);
      await new Promise((resolve) => setTimeout(resolve, 350));
      t.checkA(await client.request(t.opA, { timeoutMs: 3000 }));
    });

    it('close() rejects what is pending with NINES_ERR_CLOSED and refuses new requests', async () => {
      client = createClient(env.url, { ...env.options, timeoutMs: 2000 });
      await client.connect();
      env.sim.faults.set('latency=500ms');
      const pending = client.request(t.opA).then(() => null, (e) => e);
      const queued = client.request(t.opB).then(() => null, (e) => e);
      await new Promise((resolve) => setTimeout(resolve, 20));
      await client.close();
      assert.equal((await pending).code, 'NINES_ERR_CLOSED');
      assert.equal((await queued).code, 'NINES_ERR_CLOSED');
      const after = await client.request(t.opA).then(() => null, (e) => e);
      assert.equal(after.code, 'NINES_ERR_CLOSED');
      assert.equal(client.state, 'closed');
      client = null;
    });
  });
}
