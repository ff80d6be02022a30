'use strict';

// Modbus RTU through a socat PTY pair: interop with modbus-serial's ServerSerial (FC3, FC6, FC16), then a
// scriptable responder for what ServerSerial cannot do: bad CRCs, late and foreign frames, garbage, the
// t3.5 gap, broadcast. Then a port that disappears and comes back, and the serialport loader seam.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const ServerSerial = require('modbus-serial').ServerSerial;
const { createClient, parseOpString } = require('../../gateway/drivers/modbus');
const { startResponder, socatPair, createPair } = require('./rtu-helpers');
const { registersPdu, rejectionOf, eventOf } = require('./helpers');

const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const rtuUrl = (p, q = '') => `modbus+rtu://${p}?baudRate=115200&unitId=1${q}`;

describe('modbus client (RTU) vs modbus-serial ServerSerial over a PTY pair', () => {
  let pty, server, client;
  const regs = Array.from({ length: 100 }, (_, i) => 10 * i);
  before(async () => {
    pty = await createPair();
    server = new ServerSerial({
      getHoldingRegister: (a) => regs[a],
      setRegister: (a, v) => { regs[a] = v; }
    }, { path: pty.a, baudRate: 115200, unitID: 1 });
    await eventOf(server, 'initialized');
    client = createClient(rtuUrl(pty.b), { timeoutMs: 2000 });
    await client.connect();
  });
  after(async () => {
    if (client) await client.close();
    if (server) await new Promise((resolve) => server.close(() => resolve()));
    if (pty) await pty.close();
  });

  it('reads holding registers (FC3)', async () => {
    const r = await client.request('3:2:4');
    assert.deepEqual(r.data, [20, 30, 40, 50]);
    assert.equal(r.raw.length, 1 + 2 + 8 + 2);
    assert.equal(r.unitId, 1);
  });

  it('writes a single register (FC6) that reads back', async () => {
    assert.equal((await client.request('6:7=-3')).data, 65533);
    assert.equal(regs[7], 65533);
    assert.deepEqual((await client.request('3:7:1')).data, [65533]);
  });

  it('writes multiple registers (FC16) that read back', async () => {
    assert.equal((await client.writeRegisters(20, [1, 2, 3])).data, 3);
    assert.deepEqual(regs.slice(20, 23), [1, 2, 3]);
    assert.deepEqual((await client.readHoldingRegisters(20, 3)).data, [1, 2, 3]);
    const s = client.stats;
    assert.equal(s.errors + s.timeouts + s.lateReplies + s.badFrames, 0);
  });
});

describe('modbus client (RTU) line discipline, against a scriptable responder', () => {
  let pty;
  const cleanup = [];
  before(async () => { pty = await createPair(); });
  after(async () => { if (pty) await pty.close(); });
  afterEach(async () => {
    while (cleanup.length) await cleanup.pop()();
  });

  /** Responder on pty.a running `script`, client on pty.b; both closed after the test. */
  async function setup (script, opts = {}) {
    const responder = await startResponder(pty.a, script);
    cleanup.push(() => responder.close());
    const client = createClient(rtuUrl(pty.b), { timeoutMs: 1000, ...opts });
    cleanup.push(() => client.close());
    await client.connect();
    return { responder, client };
  }

  const normal = (req, r) => r.frame(req.unitId, registersPdu(req.pdu));

  it('rejects a reply with a bad CRC as NINES_ERR_BAD_CHECKSUM with the raw bytes, then recovers', async () => {
    const { client } = await setup((req, r) => {
      if (req.index === 0) {
        const { rtuFrame } = require('../../gateway/drivers/modbus/frame');
        const f = rtuFrame(req.unitId, registersPdu(req.pdu));
        f[f.length - 1] ^= 0xFF;
        r.write(f);
      } else {
        normal(req, r);
      }
    });
    const err = await rejectionOf(client.request('3:5:2'));
    assert.equal(err.code, 'NINES_ERR_BAD_CHECKSUM');
    assert.match(err.details.raw, /^01030400050006[0-9a-f]{4}$/);
    assert.equal(typeof err.sentNs, 'bigint');
    assert.deepEqual((await client.request('3:5:2')).data, [5, 6]);
    assert.equal(client.stats.badReplies, 1);
  });

  it('answers Modbus exceptions over RTU with NINES_ERR_MODBUS_EXCEPTION', async () => {
    const { client } = await setup((req, r) => r.frame(req.unitId, Buffer.from([req.pdu[0] | 0x80, 3])));
    const err = await rejectionOf(client.request('16:0=1,2'));
    assert.equal(err.code, 'NINES_ERR_MODBUS_EXCEPTION');
    assert.equal(err.details.exceptionName, 'ILLEGAL DATA VALUE');
    assert.match(err.message, /^unit 1 FC16 address 0 quantity 2: exception 3/);
  });

  it('drops a frame from another unit id and still takes the right reply', async () => {
    const { client } = await setup((req, r) => {
      r.frame(9, registersPdu(req.pdu, () => 999));
      setTimeout(() => normal(req, r), 15);
    });
    assert.deepEqual((await client.request('3:1:1')).data, [1]);
    assert.equal(client.stats.lateReplies, 1);
  });

  it('never gives a late reply to the next request: a reply that arrives after the timeout is dropped', async () => {
    // The first reply comes after the timeout and after the drain window, while the second request is in
    // flight; its byte count does not fit the second request, so it is dropped and the second gets its own.
    const { client } = await setup((req, r) => {
      if (req.index === 0) return;
      r.frame(1, registersPdu(Buffer.from([3, 0, 0, 0, 2]), () => 111));
      setTimeout(() => r.frame(1, registersPdu(req.pdu, () => 222)), 20);
    }, { timeoutMs: 80, quietMs: 10 });
    assert.equal((await rejectionOf(client.request('3:0:2'))).code, 'NINES_ERR_REPLY_TIMEOUT');
    const r = await client.request('3:0:1', { timeoutMs: 2000 });
    assert.deepEqual(r.data, [222]);
    assert.equal(client.stats.lateReplies, 1);
  });

  it('discards input that arrives while nothing is asked, and waits for quiet before the next request', async () => {
    const { responder, client } = await setup((req, r) => {
      if (req.index === 0) setTimeout(() => normal(req, r), 100);
      else normal(req, r);
    }, { timeoutMs: 50, quietMs: 200 });
    assert.equal((await rejectionOf(client.request('3:0:1'))).code, 'NINES_ERR_REPLY_TIMEOUT');
    const second = client.request('3:4:1', { timeoutMs: 2000 });
    assert.deepEqual((await second).data, [4]);
    assert.equal(client.stats.lateReplies, 1);
    // The second request went out only after the late reply had been written and the line was quiet
    assert.ok(responder.requests[1].atNs > responder.writes[0]);
  });

  it('counts bytes trailing a complete reply as a bad frame and keeps working', async () => {
    const { client } = await setup((req, r) => {
      const { rtuFrame } = require('../../gateway/drivers/modbus/frame');
      r.write(Buffer.concat([rtuFrame(1, registersPdu(req.pdu)), Buffer.from([0xDE, 0xAD])]));
    });
    assert.deepEqual((await client.request('3:3:1')).data, [3]);
    await wait(10);
    assert.deepEqual((await client.request('3:4:1')).data, [4]);
    assert.ok(client.stats.badFrames >= 1);
  });

  it('assembles a reply delivered one byte at a time', async () => {
    const { client } = await setup(async (req, r) => {
      const { rtuFrame } = require('../../gateway/drivers/modbus/frame');
      const f = rtuFrame(1, registersPdu(req.pdu));
      // Bytes 1 ms apart stay within the default 1.75 ms t3.5 only loosely, so use silenceUs 20000 below
      for (let i = 0; i < f.length; i++) { r.write(f.subarray(i, i + 1)); await wait(1); }
    }, { silenceUs: 20000 });
    assert.deepEqual((await client.request('3:8:3')).data, [8, 9, 10]);
  });

  it('leaves at least t3.5 of silence between a reply and the next request', async () => {
    const silenceUs = 5000;
    const { responder, client } = await setup(normal, { silenceUs });
    const op = parseOpString('3:0:1');
    for (let i = 0; i < 10; i++) await client.request(op);
    for (let i = 1; i < 10; i++) {
      const gapNs = responder.requests[i].atNs - responder.writes[i - 1];
      // Lower bound only (the responder sees bytes a little after the client wrote them)
      assert.ok(gapNs >= BigInt(silenceUs - 500) * 1000n, `gap ${i}: ${gapNs} ns`);
    }
  });

  it('sends broadcast writes to unit 0 without waiting for a reply, and refuses broadcast reads', async () => {
    const { responder, client } = await setup(normal, { turnaroundMs: 5 });
    const r = await client.request('6:1=5@0');
    assert.equal(r.unitId, 0);
    assert.equal(r.data, undefined);
    assert.equal(r.raw.length, 0);
    while (responder.requests.length === 0) await wait(1);
    assert.equal(responder.requests[0].unitId, 0);
    const err = await rejectionOf(client.request('3:0:1@0'));
    assert.equal(err.code, 'NINES_ERR_INVALID_OP');
    assert.equal(err.details.field, 'unitId');
    assert.deepEqual((await client.request('3:2:1')).data, [2]);
  });
});

describe('modbus client (RTU): the port disappears and comes back', () => {
  it('fails the request in flight with NINES_ERR_CONNECTION_CLOSED, retries, and recovers at the same path', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-rtu-'));
    let pair = await socatPair(dir);
    let responder = await startResponder(pair.a, () => {}); // never answers: the request stays in flight
    const client = createClient(rtuUrl(pair.b), { timeoutMs: 5000, backoff: { initialMs: 20, maxMs: 100 } });
    try {
      await client.connect();
      // Its reply is owed after the port comes back: the line is held for its timeout and a quiet period
      const inflight = rejectionOf(client.request('3:0:1', { timeoutMs: 1000 }));
      while (responder.requests.length === 0) await wait(1);
      const sentAt = responder.requests[0].atNs;
      const closed = eventOf(client, 'close');
      await responder.close();
      await pair.close();
      const err = await inflight;
      assert.equal(err.code, 'NINES_ERR_CONNECTION_CLOSED');
      assert.equal((await closed)[0].code, 'NINES_ERR_CONNECTION_CLOSED');
      await eventOf(client, 'reconnecting');
      await eventOf(client, 'reconnecting'); // the path is gone: attempts fail and back off
      assert.ok(client.stats.connectFailures >= 1);

      const queued = client.request('3:6:1');
      pair = await socatPair(dir);
      responder = await startResponder(pair.a, (req, r) => r.frame(req.unitId, registersPdu(req.pdu)));
      assert.deepEqual((await queued).data, [6]);
      // not before the lost request's timeout plus the quiet period (1000 + 1000 ms) had passed
      assert.ok(responder.requests[0].atNs - sentAt >= 1990000000n, `${(responder.requests[0].atNs - sentAt) / 1000000n} ms`);
      assert.equal(client.state, 'connected');
      assert.equal(client.stats.connects, 2);
    } finally {
      await client.close();
      await responder.close();
      await pair.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('modbus client (RTU): serialport loading and opening', () => {
  it('fails with NINES_ERR_SERIAL_UNAVAILABLE, without retrying, when serialport cannot be loaded (loadSerialPort seam)', async () => {
    const client = createClient('modbus+rtu:///dev/ttyNINES0', {
      loadSerialPort: () => { const e = new Error("Cannot find module 'serialport'"); e.code = 'MODULE_NOT_FOUND'; throw e; }
    });
    client.on('reconnecting', () => assert.fail('must not retry'));
    try {
      const req = rejectionOf(client.request('3:0:1'));
      const err = await rejectionOf(client.connect());
      assert.equal(err.code, 'NINES_ERR_SERIAL_UNAVAILABLE');
      assert.equal(err.details.cause, 'MODULE_NOT_FOUND');
      assert.equal((await req).code, 'NINES_ERR_SERIAL_UNAVAILABLE');
      assert.equal(client.state, 'idle');
    } finally {
      await client.close();
    }
  });

  it('fails with NINES_ERR_CONNECT_TIMEOUT when the port does not open in time', async () => {
    class StuckPort {
      constructor () { this.isOpen = false; }
      on () { return this; }
      open () {} // never calls back
      close (cb) { cb(); }
    }
    const client = createClient('modbus+rtu:///dev/ttyNINES0', { connectTimeoutMs: 30, reconnect: false, loadSerialPort: () => StuckPort });
    try {
      assert.equal((await rejectionOf(client.connect())).code, 'NINES_ERR_CONNECT_TIMEOUT');
    } finally {
      await client.close();
    }
  });

  it('fails with NINES_ERR_CONNECT_FAILED naming the path when it does not exist, and retries', async () => {
    const client = createClient('modbus+rtu:///dev/nines-no-such-port', { backoff: { initialMs: 10, maxMs: 20 } });
    try {
      const reconnecting = eventOf(client, 'reconnecting');
      const err = await rejectionOf(client.connect());
      assert.equal(err.code, 'NINES_ERR_CONNECT_FAILED');
      assert.match(err.message, /nines-no-such-port/);
      await reconnecting;
    } finally {
      await client.close();
    }
  });
});
