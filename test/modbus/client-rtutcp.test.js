'use strict';

// The Modbus client over RTU over TCP (modbus+rtutcp://): against the nines RTU-over-TCP simulator, then a
// scriptable RTU responder on a raw TCP socket for what a simulator does not do on demand (bad CRCs, foreign
// and late frames), the silence kept between frames, broadcasts, reconnects, and the probe.

const assert = require('node:assert/strict');
const net = require('node:net');
const { once } = require('node:events');
const { createClient } = require('../../gateway/drivers');
const { createModbusRtuTcpSimulator } = require('../../gateway/simulators/modbus');
const { rtuFrame, rtuRequestLength } = require('../../gateway/drivers/modbus/frame');
const { runProbe } = require('../../gateway/measure/probe');
const { registersPdu, rejectionOf, eventOf, freePort } = require('./helpers');

/**
 * A serial server stand-in: a TCP listener that parses RTU request frames and hands each to `onRequest`.
 * @param {(req: {unitId: number, pdu: Buffer, atNs: bigint, index: number}, r: object) => void} onRequest
 */
async function startRtuResponder (onRequest) {
  const sockets = new Set();
  const r = {
    requests: [],
    /** hrtime of each write */
    writes: [],
    socket: null,
    write (buf) { r.writes.push(process.hrtime.bigint()); r.socket.write(buf); },
    frame (unitId, pdu) { r.write(rtuFrame(unitId, pdu)); },
    connections: 0
  };
  const server = net.createServer((socket) => {
    r.connections++;
    r.socket = socket;
    sockets.add(socket);
    socket.setNoDelay(true);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
    let acc = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      acc = Buffer.concat([acc, chunk]);
      for (;;) {
        const n = rtuRequestLength(acc);
        if (n <= 0 || acc.length < n) break;
        const req = { unitId: acc[0], pdu: Buffer.from(acc.subarray(1, n - 2)), atNs: process.hrtime.bigint(), index: r.requests.length };
        acc = acc.subarray(n);
        r.requests.push(req);
        onRequest(req, r);
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  r.port = server.address().port;
  r.url = (q = '') => `modbus+rtutcp://127.0.0.1:${r.port}?unitId=1${q}`;
  r.dropAll = () => { for (const s of sockets) s.destroy(); };
  r.close = () => new Promise((resolve) => { r.dropAll(); server.close(() => resolve()); });
  return r;
}

const normal = (req, r) => r.frame(req.unitId, registersPdu(req.pdu));

describe('modbus client (RTU over TCP) vs the nines RTU-over-TCP simulator', function () {
  this.timeout(10000);
  let sim, client;
  before(async () => {
    sim = await createModbusRtuTcpSimulator({ port: 0, modelOptions: { unitIds: [1, 7], preset: 'pattern' } });
    client = createClient(sim.url, { timeoutMs: 1000 });
    await client.connect();
  });
  after(async () => {
    if (client) await client.close();
    if (sim) await sim.close();
  });

  it('reads all four tables and writes registers and coils that read back', async () => {
    assert.deepEqual((await client.request('3:10:3')).data, [10, 11, 12]);
    assert.deepEqual((await client.request('4:0:2')).data, [1000, 1001]);
    assert.deepEqual((await client.request('1:0:4')).data, [false, true, false, true]);
    assert.deepEqual((await client.request('2:0:4')).data, [true, false, false, true]);
    await client.request('16:200=4,5,6');
    await client.request('5:9=off');
    assert.deepEqual((await client.request('3:200:3')).data, [4, 5, 6]);
    assert.equal(sim.model.getBit('coils', 9), false);
  });

  it('talks to every unit of the line by unit id, and times out on one that is not there', async () => {
    const r = await client.request({ fc: 3, address: 1, quantity: 1, unitId: 7 });
    assert.equal(r.unitId, 7);
    assert.equal(r.raw[0], 7, 'an RTU frame: unit id first, no MBAP header');
    const err = await rejectionOf(client.request({ fc: 3, address: 1, quantity: 1, unitId: 8 }, { timeoutMs: 100 }));
    assert.equal(err.code, 'NINES_ERR_REPLY_TIMEOUT');
    assert.deepEqual((await client.request('3:2:1')).data, [2], 'the line is usable after its quiet period');
    const s = client.stats;
    assert.equal(s.badFrames + s.badReplies + s.lateReplies, 0);
  });

  it('refuses broadcast reads, as on a serial line', async () => {
    const err = await rejectionOf(client.request({ fc: 3, address: 0, quantity: 1, unitId: 0 }));
    assert.equal(err.code, 'NINES_ERR_INVALID_OP');
  });
});

describe('modbus client (RTU over TCP): the RTU line discipline over a socket', function () {
  this.timeout(10000);
  const cleanup = [];
  afterEach(async () => {
    while (cleanup.length) await cleanup.pop()();
  });

  async function setup (script, opts = {}, q = '') {
    const responder = await startRtuResponder(script);
    cleanup.push(() => responder.close());
    const client = createClient(responder.url(q), { timeoutMs: 1000, ...opts });
    cleanup.push(() => client.close());
    await client.connect();
    return { responder, client };
  }

  it('rejects a reply with a bad CRC as NINES_ERR_BAD_CHECKSUM with the raw bytes, then recovers', async () => {
    const { client } = await setup((req, r) => {
      const f = rtuFrame(req.unitId, registersPdu(req.pdu));
      if (req.index === 0) f[f.length - 1] ^= 0xFF;
      r.write(f);
    });
    const err = await rejectionOf(client.request('3:5:2'));
    assert.equal(err.code, 'NINES_ERR_BAD_CHECKSUM');
    assert.match(err.details.raw, /^01030400050006[0-9a-f]{4}$/);
    assert.deepEqual((await client.request('3:5:2')).data, [5, 6]);
  });

  it('submit(): the lent reply shows the RTU frame and its data bytes without the CRC, as request() does', async () => {
    const { client } = await setup(normal);
    const got = await new Promise((resolve, reject) => client.submit('3:5:2', undefined, {
      onReply: (r) => resolve({ data: r.data, buffer: Buffer.from(r.buffer), raw: Buffer.from(r.raw) }),
      onError: reject
    }));
    const viaPromise = await client.request('3:5:2');
    assert.deepEqual(got.data, [5, 6]);
    assert.deepEqual(got.buffer, Buffer.from([0, 5, 0, 6]));
    assert.deepEqual(got.buffer, viaPromise.buffer);
    assert.deepEqual(got.raw, viaPromise.raw);
  });

  it('drops a frame from another unit in the same TCP segment and still takes its own reply', async () => {
    const { client } = await setup((req, r) => {
      // a serial server packs what its line carried into one segment
      r.write(Buffer.concat([rtuFrame(9, registersPdu(req.pdu, () => 999)), rtuFrame(1, registersPdu(req.pdu))]));
    });
    assert.deepEqual((await client.request('3:1:1')).data, [1]);
    assert.equal(client.stats.lateReplies, 1);
  });

  it('never gives a late reply to the next request: it holds the line quiet after a timeout, and drops what comes', async () => {
    const { responder, client } = await setup((req, r) => {
      if (req.index === 0) setTimeout(() => normal(req, r), 100);
      else normal(req, r);
    }, { timeoutMs: 50, quietMs: 200 });
    assert.equal((await rejectionOf(client.request('3:0:1'))).code, 'NINES_ERR_REPLY_TIMEOUT');
    assert.deepEqual((await client.request('3:4:1', { timeoutMs: 2000 })).data, [4]);
    assert.equal(client.stats.lateReplies, 1);
    assert.ok(responder.requests[1].atNs > responder.writes[0], 'the next request went out after the late reply');
  });

  it('keeps 1.75 ms between a reply and the next request without a baud rate, t3.5 of the line with one, none when told', async () => {
    const gaps = async (q, opts) => {
      const { client } = await setup(normal, opts, q);
      const replies = [];
      for (let i = 0; i < 6; i++) replies.push(await client.request('3:0:1'));
      return replies.slice(1).map((r, i) => Number(r.sentNs - replies[i].doneNs) / 1e6);
    };
    for (const g of await gaps('')) assert.ok(g >= 1.75, `default: ${g} ms`);
    // 9600 baud, 11-bit characters: 3.5 × 11 / 9600 s = 4.01 ms
    for (const g of await gaps('&baudRate=9600')) assert.ok(g >= 4.01, `9600 baud: ${g} ms`);
    const none = await gaps('', { silenceUs: 0 });
    assert.ok(Math.min(...none) < 1.75, `silenceUs 0: ${none}`);
  });

  it('sends broadcast writes to unit 0 and resolves once they are sent', async () => {
    const { responder, client } = await setup(normal, { turnaroundMs: 5 });
    const r = await client.request('6:1=5@0');
    assert.equal(r.unitId, 0);
    assert.equal(r.raw.length, 0);
    assert.deepEqual((await client.request('3:0:1')).data, [0]);
    assert.equal(responder.requests[0].unitId, 0);
  });

  it('reconnects when the serial server drops the connection, and the device is polled again', async () => {
    const { responder, client } = await setup(normal, { backoff: { initialMs: 10, maxMs: 20 } });
    client.on('error', () => {});
    assert.deepEqual((await client.request('3:1:1')).data, [1]);
    const closed = eventOf(client, 'close');
    responder.dropAll();
    const [err] = await closed;
    assert.equal(err.code, 'NINES_ERR_CONNECTION_CLOSED');
    await eventOf(client, 'connect');
    assert.deepEqual((await client.request('3:2:1')).data, [2]);
    assert.equal(responder.connections, 2);
  });

  it('fails to connect where nothing listens with NINES_ERR_CONNECT_FAILED, and close() ends an attempt', async () => {
    const port = await freePort();
    const client = createClient(`modbus+rtutcp://127.0.0.1:${port}`, { reconnect: false });
    const err = await rejectionOf(client.connect());
    assert.equal(err.code, 'NINES_ERR_CONNECT_FAILED');
    assert.equal(err.details.cause, 'ECONNREFUSED');
    const again = client.connect();
    await client.close();
    assert.equal((await rejectionOf(again)).code, 'NINES_ERR_CLOSED');
  });

  it('refuses maxInflight above 1: RTU has no transaction id', () => {
    assert.throws(() => createClient('modbus+rtutcp://127.0.0.1:4001', { maxInflight: 2 }), { code: 'NINES_ERR_INVALID_ARG' });
  });
});

describe('nines probe modbus+rtutcp://', function () {
  this.timeout(20000);
  let sim;
  afterEach(async () => { if (sim) await sim.close(); sim = null; });

  it('measures a run on one connection, and refuses more than one (one serial line, one master)', async () => {
    sim = await createModbusRtuTcpSimulator({ port: 0, modelOptions: { preset: 'pattern' } });
    const { runs } = await runProbe({ target: sim.url, read: '3:0:10', count: 200 }).promise;
    assert.equal(runs.length, 1);
    assert.equal(runs[0].ok, 200);
    assert.equal(sim.stats.replies, 200);
    assert.throws(() => runProbe({ target: sim.url, read: '3:0:10', count: 10, connections: [1, 2] }),
      (e) => e.code === 'NINES_ERR_INVALID_ARG' && /connections must be 1 for a modbus\+rtutcp:\/\/ target/.test(e.message));
  });
});
