'use strict';

// Modbus TCP framing and correlation against raw servers that misbehave on purpose: exceptions, late
// replies, replies split at every byte, several frames in one chunk, broken MBAP headers, mismatches.

const assert = require('node:assert/strict');
const { parseOpString } = require('../../gateway/drivers/modbus');
const { mbapFrame } = require('../../gateway/drivers/modbus/frame');
const { rawClientSetup, registersPdu, answer, rejectionOf, eventOf } = require('./helpers');

const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Writes buf in pieces cut at `cuts`, a few ms apart, so the client reads them separately. */
async function writeInPieces (socket, buf, cuts) {
  let from = 0;
  for (const to of [...cuts, buf.length]) {
    socket.write(buf.subarray(from, to));
    from = to;
    await wait(2);
  }
}

describe('modbus client (TCP): framing and correlation', () => {
  const setup = rawClientSetup();

  it('rejects an exception reply with NINES_ERR_MODBUS_EXCEPTION, code and name, and stays usable', async () => {
    const { client } = await setup((req) => {
      const addr = req.pdu.readUInt16BE(1);
      req.socket.write(answer(req, addr === 40000 ? Buffer.from([req.pdu[0] | 0x80, 2]) : registersPdu(req.pdu)));
    });
    const err = await rejectionOf(client.request('3:40000:10'));
    assert.equal(err.code, 'NINES_ERR_MODBUS_EXCEPTION');
    assert.equal(err.message, 'unit 1 FC3 address 40000 quantity 10: exception 2 ILLEGAL DATA ADDRESS');
    assert.equal(err.details.exceptionCode, 2);
    assert.equal(err.details.exceptionName, 'ILLEGAL DATA ADDRESS');
    assert.equal(err.details.fc, 3);
    assert.equal(err.details.op.address, 40000);
    assert.match(err.details.raw, /^[0-9a-f]+8302$/);
    assert.equal(typeof err.sentNs, 'bigint');
    assert.deepEqual((await client.request('3:7:2')).data, [7, 8]);
    assert.equal(client.stats.exceptions, 1);
  });

  it('never gives a late reply to the next request: the answer to a timed-out request is dropped', async () => {
    let held = null;
    const { client } = await setup((req) => {
      if (req.index === 0) { held = req; return; }
      // Answer the timed-out first request now, then the second, in two separate writes
      req.socket.write(answer(held, registersPdu(held.pdu, () => 111)));
      setTimeout(() => req.socket.write(answer(req, registersPdu(req.pdu, () => 222))), 5);
    }, { timeoutMs: 100 });
    const op = parseOpString('3:0:1');
    const first = await rejectionOf(client.request(op));
    assert.equal(first.code, 'NINES_ERR_REPLY_TIMEOUT');
    assert.equal(typeof first.sentNs, 'bigint');
    const second = await client.request(op);
    assert.deepEqual(second.data, [222]);
    assert.equal(client.stats.lateReplies, 1);
    assert.equal(client.stats.timeouts, 1);
  });

  it('drops a late reply that arrives in the same chunk as the right one', async () => {
    let held = null;
    const { client } = await setup((req) => {
      if (req.index === 0) { held = req; return; }
      req.socket.write(Buffer.concat([answer(held, registersPdu(held.pdu, () => 111)), answer(req, registersPdu(req.pdu, () => 222))]));
    }, { timeoutMs: 100 });
    const op = parseOpString('3:0:1');
    assert.equal((await rejectionOf(client.request(op))).code, 'NINES_ERR_REPLY_TIMEOUT');
    assert.deepEqual((await client.request(op)).data, [222]);
    assert.equal(client.stats.lateReplies, 1);
  });

  it('takes the right reply when a stray frame follows it in the same chunk', async () => {
    const { client } = await setup((req) => {
      const stray = mbapFrame((req.tid + 100) & 0xFFFF, 1, Buffer.from([3, 2, 0, 9]));
      req.socket.write(Buffer.concat([answer(req, registersPdu(req.pdu, () => 5)), stray]));
    });
    assert.deepEqual((await client.request('3:0:2')).data, [5, 5]);
    assert.deepEqual((await client.request('3:0:1')).data, [5]);
    assert.equal(client.stats.lateReplies, 2);
  });

  it('assembles a reply written one byte at a time', async () => {
    const { client } = await setup((req) => {
      const buf = answer(req, registersPdu(req.pdu));
      writeInPieces(req.socket, buf, Array.from({ length: buf.length - 1 }, (_, i) => i + 1));
    });
    const r = await client.request('3:10:3');
    assert.deepEqual(r.data, [10, 11, 12]);
    assert.equal(r.raw.length, 7 + 2 + 6);
    assert.deepEqual(r.buffer, Buffer.from([0, 10, 0, 11, 0, 12]));
  });

  it('assembles a reply split in two at every offset', async () => {
    let cut = 1;
    const { client } = await setup((req) => {
      const buf = answer(req, registersPdu(req.pdu));
      writeInPieces(req.socket, buf, [cut]);
    });
    const op = parseOpString('3:20:2');
    for (cut = 1; cut < 7 + 2 + 4; cut++) assert.deepEqual((await client.request(op)).data, [20, 21], `cut at ${cut}`);
    assert.equal(client.stats.badFrames, 0);
  });

  it('reads a reply whose tail arrives with the head of a stray frame', async () => {
    let chain = Promise.resolve();
    const { client } = await setup((req) => {
      const buf = answer(req, registersPdu(req.pdu));
      const stray = mbapFrame((req.tid + 7) & 0xFFFF, 1, Buffer.from([3, 2, 0, 9]));
      const all = Buffer.concat([buf, stray]);
      // One writer at a time: the next answer must not land inside the unfinished stray frame
      chain = chain.then(() => writeInPieces(req.socket, all, [5, buf.length + 3]));
    });
    assert.deepEqual((await client.request('3:1:1')).data, [1]);
    assert.deepEqual((await client.request('3:2:1')).data, [2]);
  });

  it('fails the request with NINES_ERR_BAD_REPLY on a bad protocol id, then reconnects', async () => {
    const { srv, client } = await setup((req) => {
      const buf = answer(req, registersPdu(req.pdu));
      if (req.index === 0) buf.writeUInt16BE(0x1234, 2);
      req.socket.write(buf);
    });
    const closed = eventOf(client, 'close');
    const err = await rejectionOf(client.request('3:0:1'));
    assert.equal(err.code, 'NINES_ERR_BAD_REPLY');
    assert.match(err.message, /protocol id 4660/);
    assert.equal(typeof err.details.raw, 'string');
    const [closeErr] = await closed;
    assert.equal(closeErr.code, 'NINES_ERR_CONNECTION_CLOSED');
    assert.deepEqual((await client.request('3:4:1')).data, [4]);
    assert.equal(client.stats.connects, 2);
    assert.equal(srv.requests.length, 2);
  });

  it('fails the request with NINES_ERR_BAD_REPLY on an absurd MBAP length, then reconnects', async () => {
    const { client } = await setup((req) => {
      const buf = answer(req, registersPdu(req.pdu));
      if (req.index === 0) buf.writeUInt16BE(600, 4);
      if (req.index === 1) buf.writeUInt16BE(1, 4);
      req.socket.write(buf);
    });
    assert.equal((await rejectionOf(client.request('3:0:1'))).code, 'NINES_ERR_BAD_REPLY');
    assert.equal((await rejectionOf(client.request('3:0:1'))).code, 'NINES_ERR_BAD_REPLY');
    assert.deepEqual((await client.request('3:9:1')).data, [9]);
    assert.equal(client.stats.badFrames, 2);
  });

  it('rejects a reply from another unit id or with another function code as NINES_ERR_BAD_REPLY', async () => {
    const { client } = await setup((req) => {
      if (req.index === 0) req.socket.write(mbapFrame(req.tid, 9, registersPdu(req.pdu)));
      else if (req.index === 1) req.socket.write(answer(req, Buffer.from([4, 2, 0, 1])));
      else req.socket.write(answer(req, registersPdu(req.pdu)));
    });
    const a = await rejectionOf(client.request('3:0:1'));
    assert.equal(a.code, 'NINES_ERR_BAD_REPLY');
    assert.match(a.message, /unit 9/);
    const b = await rejectionOf(client.request('3:0:1'));
    assert.equal(b.code, 'NINES_ERR_BAD_REPLY');
    assert.match(b.message, /function code 4, expected 3/);
    assert.match(b.details.raw, /0401$|04020001$/);
    assert.deepEqual((await client.request('3:3:1')).data, [3]);
    assert.equal(client.stats.badReplies, 2);
  });

  it('rejects a write whose echo does not match, with the raw bytes', async () => {
    const { client } = await setup((req) => {
      const echo = Buffer.from(req.pdu.subarray(0, 5));
      echo.writeUInt16BE(echo.readUInt16BE(3) + 1, 3);
      req.socket.write(answer(req, echo));
    });
    const err = await rejectionOf(client.request('16:0=1,2'));
    assert.equal(err.code, 'NINES_ERR_BAD_REPLY');
    assert.match(err.message, /echoes quantity 3/);
    assert.equal(err.details.raw.slice(-10), '1000000003');
  });

  it('writes the request synchronously inside request() when the connection is idle', async () => {
    const { srv, client } = await setup((req) => req.socket.write(answer(req, registersPdu(req.pdu))));
    const p = client.request('3:0:1');
    assert.equal(client.stats.inFlight, 1);
    assert.equal(client.stats.queued, 0);
    await p;
    assert.equal(srv.requests.length, 1);
  });

  it('uses the target unit id by default and the op\'s when given', async () => {
    const { srv, client } = await setup((req) => req.socket.write(answer(req, registersPdu(req.pdu))));
    await client.request('3:0:1');
    const r = await client.request('3:0:1@7');
    assert.equal(r.unitId, 7);
    assert.deepEqual(srv.requests.map((q) => q.unitId), [1, 7]);
  });

  it('increments the transaction id per request and wraps at 16 bits', async () => {
    const { srv, client } = await setup((req) => req.socket.write(answer(req, registersPdu(req.pdu))));
    client._transport._tid = 65533; // white box: start near the wrap instead of sending 65,000 requests
    const op = parseOpString('3:0:1');
    for (let i = 0; i < 4; i++) await client.request(op);
    assert.deepEqual(srv.requests.map((q) => q.tid), [65534, 65535, 0, 1]);
  });

  it('never reuses the transaction id of a timed-out request while its reply is owed, even after the wrap', async () => {
    let held = null;
    const { srv, client } = await setup((req) => {
      if (req.index === 0) { held = req; return; }
      if (req.index === 2) {
        // the owed reply (value 111) comes late, then this request's own
        req.socket.write(answer(held, registersPdu(held.pdu, () => 111)));
        setTimeout(() => req.socket.write(answer(req, registersPdu(req.pdu, () => 222))), 5);
        return;
      }
      req.socket.write(answer(req, registersPdu(req.pdu, () => 333)));
    }, { timeoutMs: 100 });
    const op = parseOpString('3:0:1');
    client._transport._tid = 4; // white box: the first request gets id 5
    assert.equal((await rejectionOf(client.request(op))).code, 'NINES_ERR_REPLY_TIMEOUT');
    client._transport._tid = 3; // as if 65,534 requests had gone by: the ids come round to 5 again
    assert.deepEqual((await client.request(op)).data, [333]);
    assert.deepEqual((await client.request(op)).data, [222], 'id 5 was skipped, so the late reply to it is dropped');
    assert.deepEqual(srv.requests.map((q) => q.tid), [5, 4, 6]);
    assert.equal(client.stats.lateReplies, 1);
    // Its reply has come: id 5 is free again
    client._transport._tid = 4;
    assert.deepEqual((await client.request(op)).data, [333]);
    assert.deepEqual(srv.requests.map((q) => q.tid), [5, 4, 6, 5]);
  });
});
