'use strict';

/**
 * The line quirks every client shares (gateway/drivers/connection.js): delayAfterConnectMs and
 * interFrameDelayMs. Against simulators in their quirk modes (simulators/modbus/quirks.js), which drop a
 * request that comes too soon after the connect or after their last reply: a plain polling loop fails
 * without the setting (timeouts, the symptom users see) and succeeds with it. Then what the settings do
 * on every transport (ASCII included), how they fail when misused, and that a connection lost within
 * its delay after connect is a failed connect attempt.
 */

const assert = require('node:assert/strict');
const net = require('node:net');
const { createClient } = require('../../gateway/drivers');
const { createAsciiSimulator } = require('../../gateway/simulators/ascii');
const { createModbusTcpSimulator, createModbusRtuTcpSimulator, createModbusRtuSimulator } = require('../../gateway/simulators/modbus');
const { createPair } = require('../modbus/rtu-helpers');
const { eventOf } = require('../modbus/helpers');
const { tlsPair } = require('../helpers/tls-certs');

const NS_PER_MS = 1000000n;
const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls `n` reads one after the other, as a job on one connection does, and tallies the outcomes.
 * @returns {Promise<{ok: number, timeouts: number, replies: object[], codes: string[]}>}
 */
async function poll (client, n, op = { fc: 3, address: 0, quantity: 1 }) {
  const out = { ok: 0, timeouts: 0, replies: [], codes: [] };
  for (let i = 0; i < n; i++) {
    try {
      out.replies.push(await client.request(op));
      out.ok++;
    } catch (err) {
      out.codes.push(err.code);
      if (err.code === 'NINES_ERR_REPLY_TIMEOUT') out.timeouts++;
    }
  }
  return out;
}

/** The gaps (ms) between each reply and the next request's write. */
function gapsMs (replies) {
  const gaps = [];
  for (let i = 1; i < replies.length; i++) gaps.push(Number(replies[i].sentNs - replies[i - 1].doneNs) / 1e6);
  return gaps;
}

/**
 * The Modbus transports with a simulator in quirk mode: TCP, TCP over TLS (Modbus/TCP Security) and RTU over
 * TCP (connections), RTU on a PTY (a line). `client`: the client options a transport needs besides the URL.
 */
const TRANSPORTS = [
  { name: 'Modbus TCP', start: (quirks) => createModbusTcpSimulator({ port: 0, ...quirks }), connections: true },
  { name: 'Modbus/TCP Security (TLS)', start: (quirks) => createModbusTcpSimulator({ port: 0, tls: tlsPair().server, ...quirks }), client: () => ({ tls: tlsPair().client }), connections: true },
  { name: 'Modbus RTU over TCP', start: (quirks) => createModbusRtuTcpSimulator({ port: 0, ...quirks }), connections: true },
  {
    name: 'Modbus RTU on a serial line',
    connections: false,
    async start (quirks) {
      const pty = await createPair();
      try {
        const sim = await createModbusRtuSimulator({ path: pty.a, baudRate: 115200, ...quirks });
        return { stats: sim.stats, url: `modbus+rtu://${pty.b}?baudRate=115200&unitId=1`, close: async () => { await sim.close(); await pty.close(); } };
      } catch (err) {
        await pty.close();
        throw err;
      }
    }
  }
];

/** @returns {object} the client options transport t needs (TLS: the certificates) */
const clientOptions = (t) => (t.client ? t.client() : {});

for (const t of TRANSPORTS) {
  describe(`line quirks against a device that needs them: ${t.name}`, function () {
    this.timeout(20000);
    let sim, client;
    afterEach(async () => {
      if (client) await client.close();
      if (sim) await sim.close();
      sim = client = null;
    });

    it('without interFrameDelay, requests right behind a reply time out; with it, every poll succeeds and waits its pause', async () => {
      sim = await t.start({ needsInterFrameDelayMs: 40 });
      client = createClient(sim.url, { ...clientOptions(t), timeoutMs: 150 });
      const without = await poll(client, 6);
      assert.ok(without.timeouts >= 2, `timeouts without the setting: ${JSON.stringify(without.codes)}`);
      assert.ok(sim.stats.tooSoonAfterReply >= 2);
      await client.close();

      const dropped = sim.stats.tooSoonAfterReply;
      client = createClient(sim.url, { ...clientOptions(t), timeoutMs: 500, interFrameDelayMs: 60 });
      const wait60 = await poll(client, 6);
      assert.deepEqual([wait60.ok, wait60.timeouts], [6, 0], JSON.stringify(wait60.codes));
      assert.equal(sim.stats.tooSoonAfterReply, dropped, 'nothing came too soon');
      for (const gap of gapsMs(wait60.replies)) assert.ok(gap >= 60, `a reply and the next write ${gap} ms apart`);
    });

    if (t.connections) {
      it('without delayAfterConnect, the first request after a connect times out; with it, the first succeeds', async () => {
        sim = await t.start({ needsDelayAfterConnectMs: 150 });
        client = createClient(sim.url, { ...clientOptions(t), timeoutMs: 100 });
        const without = await poll(client, 3);
        assert.equal(without.codes[0], 'NINES_ERR_REPLY_TIMEOUT');
        // the next one may come too soon as well (Modbus TCP writes it at once; RTU waits out its quiet period)
        const dropped = sim.stats.tooSoonAfterConnect;
        assert.ok(dropped >= 1);
        await client.close();

        client = createClient(sim.url, { ...clientOptions(t), timeoutMs: 500, delayAfterConnectMs: 250 });
        const withIt = await poll(client, 3);
        assert.deepEqual([withIt.ok, withIt.timeouts], [3, 0], JSON.stringify(withIt.codes));
        assert.equal(sim.stats.tooSoonAfterConnect, dropped, 'the first request waited for the delay');
      });
    }
  });
}

describe('line quirks on every client', function () {
  this.timeout(20000);
  const cleanup = [];
  afterEach(async () => {
    while (cleanup.length) await cleanup.pop()();
  });

  /** @returns {Promise<{url: string}>} */
  async function start (make) {
    const sim = await make();
    cleanup.push(() => sim.close());
    return sim;
  }

  function client (url, opts) {
    const c = createClient(url, opts);
    cleanup.push(() => c.close());
    return c;
  }

  const CLIENTS = [
    { name: 'ASCII', sim: () => createAsciiSimulator({ port: 0 }), op: '@01' },
    { name: 'Modbus TCP', sim: () => createModbusTcpSimulator({ port: 0 }), op: '3:0:1' }
  ];

  for (const c of CLIENTS) {
    it(`${c.name}: interFrameDelayMs keeps the line free that long after each reply, requests queued meanwhile included`, async () => {
      const sim = await start(c.sim);
      const cl = client(sim.url, { timeoutMs: 1000, interFrameDelayMs: 30 });
      // five at once: each waits in the queue for the pause after the one before
      const replies = await Promise.all(Array.from({ length: 5 }, () => cl.request(c.op)));
      for (const gap of gapsMs(replies)) assert.ok(gap >= 30, `gap ${gap} ms`);
      assert.equal(cl.stats.ok, 5);
    });

    it(`${c.name}: delayAfterConnectMs holds the connection in 'connecting' until the delay has passed, then 'connect'`, async () => {
      const sim = await start(c.sim);
      const cl = client(sim.url, { timeoutMs: 1000, delayAfterConnectMs: 120 });
      const events = [];
      cl.on('connect', () => events.push('connect'));
      const t0 = process.hrtime.bigint();
      const first = cl.request(c.op);
      const connected = cl.connect();
      await wait(40);
      assert.equal(cl.state, 'connecting');
      assert.deepEqual(events, []);
      await connected;
      assert.ok(process.hrtime.bigint() - t0 >= 120n * NS_PER_MS);
      const reply = await first;
      assert.ok(reply.sentNs - t0 >= 120n * NS_PER_MS, 'the request asked for during the delay waited for it');
      assert.deepEqual(events, ['connect']);
      assert.equal(cl.stats.connects, 1);
    });
  }

  it('a connection lost within its delay after connect is a failed connect attempt (NINES_ERR_CONNECT_FAILED), retried with backoff', async () => {
    // a serial server at its client limit: it accepts, then closes at once
    let accepted = 0;
    const server = net.createServer((s) => { accepted++; s.destroy(); });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => new Promise((resolve) => server.close(resolve)));
    const cl = client(`modbus+rtutcp://127.0.0.1:${server.address().port}`, { timeoutMs: 500, delayAfterConnectMs: 300, backoff: { initialMs: 20, maxMs: 40 } });
    const closes = [];
    cl.on('close', (err) => closes.push(err));
    cl.on('error', () => {});
    await assert.rejects(cl.connect(), (e) => e.code === 'NINES_ERR_CONNECT_FAILED' && /within the 300 ms delay after connect/.test(e.message) && e.details.delayAfterConnectMs === 300);
    await eventOf(cl, 'reconnecting');
    assert.equal(cl.stats.connects, 0);
    assert.equal(cl.stats.drops, 0);
    assert.ok(cl.stats.connectFailures >= 1);
    assert.deepEqual(closes, [], 'no close for a connection that never was up');
    assert.ok(accepted >= 1);
  });

  it('checks the options: whole ms from 0 to 60000, the pause shorter than the timeout, and one request in flight', () => {
    const url = 'modbus+tcp://127.0.0.1:1';
    const bad = [
      [{ interFrameDelayMs: -1 }, /interFrameDelayMs is not a duration/],
      [{ delayAfterConnectMs: 60001 }, /delayAfterConnectMs must be a whole number of ms from 0ms to 1m/],
      [{ interFrameDelayMs: 1.5 }, /interFrameDelayMs must be a whole number of ms/],
      [{ timeoutMs: 100, interFrameDelayMs: 100 }, /interFrameDelayMs must be shorter than timeoutMs \(100\)/],
      [{ maxInflight: 4, interFrameDelayMs: 10 }, /interFrameDelayMs must be 0 with maxInflight 4/]
    ];
    for (const [opts, re] of bad) {
      assert.throws(() => createClient(url, opts), (e) => e.code === 'NINES_ERR_INVALID_ARG' && re.test(e.message), JSON.stringify(opts));
    }
    // the ASCII client reads durations as it does its other options
    const a = createClient('ascii://127.0.0.1:1', { interFrameDelayMs: '20ms', delayAfterConnectMs: '1s' });
    assert.equal(a._ifdMs, 20);
    assert.equal(a._dacMs, 1000);
  });
});
