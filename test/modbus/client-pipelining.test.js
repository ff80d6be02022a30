'use strict';

// Modbus TCP with several requests in flight on one connection (maxInflight > 1), against scripted raw
// servers: replies in any order go to their own request, anything that does not fit resets the
// connection, and late replies never reach another request. Each runs in clear and over TLS (Modbus/TCP
// Security): the framing inside TLS is the same, and so must be every guarantee.

const assert = require('node:assert/strict');
const { createClient } = require('../../gateway/drivers/modbus');
const { mbapFrame } = require('../../gateway/drivers/modbus/frame');
const { rawClientSetup, registersPdu, answer, rejectionOf, eventOf } = require('./helpers');
const { tlsPair } = require('../helpers/tls-certs');

/** What the scripted servers put in register a, so a reply names the address it answers */
const valueAt = (a) => (a * 7 + 3) & 0xFFFF;
const read = (address) => ({ fc: 3, address, quantity: 1 });

/** The same MBAP frames, in clear and inside TLS */
const TRANSPORTS = [{ name: 'TCP', tls: undefined }, { name: 'TLS', tls: tlsPair }];

for (const t of TRANSPORTS) {
  describe(`modbus client (${t.name}): pipelined requests`, () => {
    const setup = rawClientSetup(t.tls);

    it('matches replies that come in reverse order to their own requests by transaction id', async () => {
      const held = [];
      const { srv, client } = await setup((req) => {
        held.push(req);
        if (held.length < 8) return;
        // all eight are on the wire before any reply: answer them last first
        for (const r of held.splice(0).reverse()) r.socket.write(answer(r, registersPdu(r.pdu, valueAt)));
      }, { maxInflight: 8 });
      const addresses = [10, 20, 30, 40, 50, 60, 70, 80];
      const replies = await Promise.all(addresses.map((a) => client.request(read(a))));
      assert.deepEqual(replies.map((r) => r.data[0]), addresses.map(valueAt));
      assert.deepEqual(replies.map((r) => r.address), addresses);
      assert.equal(srv.requests.length, 8);
      assert.equal(new Set(srv.requests.map((r) => r.tid)).size, 8, 'eight distinct transaction ids on the wire at once');
      assert.equal(client.stats.resets, 0);
    });

    it('writes at most maxInflight requests before replies come, and queues the rest', async () => {
      let outstanding = 0;
      let most = 0;
      const held = [];
      const { client } = await setup((req) => {
        outstanding++;
        most = Math.max(most, outstanding);
        held.push(req);
        if (held.length < 4) return;
        for (const r of held.splice(0)) {
          outstanding--;
          r.socket.write(answer(r, registersPdu(r.pdu, valueAt)));
        }
      }, { maxInflight: 4 });
      const all = Array.from({ length: 20 }, (_, i) => client.request(read(i)));
      assert.equal(client.stats.inFlight, 4);
      assert.equal(client.stats.queued, 16);
      const replies = await Promise.all(all);
      assert.deepEqual(replies.map((r) => r.data[0]), Array.from({ length: 20 }, (_, i) => valueAt(i)));
      assert.equal(most, 4);
    });

    it('resets the connection and fails every request in flight with NINES_ERR_BAD_REPLY on a reply with a transaction id nobody waits for', async () => {
      const held = [];
      const { srv, client } = await setup((req) => {
        if (srv.sockets.size === 1 && srv.requests.length <= 3) {
          held.push(req);
          if (held.length === 3) req.socket.write(mbapFrame((req.tid + 1000) & 0xFFFF, 1, registersPdu(req.pdu, valueAt)));
          return;
        }
        req.socket.write(answer(req, registersPdu(req.pdu, valueAt)));
      }, { maxInflight: 4 });
      const closed = eventOf(client, 'close');
      const errs = await Promise.all([1, 2, 3].map((a) => rejectionOf(client.request(read(a)))));
      for (const err of errs) {
        assert.equal(err.code, 'NINES_ERR_BAD_REPLY');
        assert.equal(err.details.reset, true);
        assert.match(err.message, /transaction id \d+, which no request in flight or owed/);
      }
      const [closeErr] = await closed;
      assert.equal(closeErr.code, 'NINES_ERR_CONNECTION_CLOSED');
      assert.match(closeErr.message, /unknown transaction id/);
      assert.equal(client.stats.resets, 1);
      assert.equal(client.stats.badReplies, 3);
      // a fresh connection, and the device is used again
      assert.deepEqual((await client.request(read(9))).data, [valueAt(9)]);
      assert.equal(client.stats.connects, 2);
    });

    it('resets on a reply with the right transaction id from another unit, and gives it to nobody', async () => {
      const held = [];
      const { srv, client } = await setup((req) => {
        if (srv.requests.length <= 2) {
          held.push(req);
          // the second request's id, with unit 9's answer; then the first's proper answer, which must not be taken either
          if (held.length === 2) req.socket.write(Buffer.concat([mbapFrame(held[1].tid, 9, registersPdu(held[1].pdu, valueAt)), answer(held[0], registersPdu(held[0].pdu, valueAt))]));
          return;
        }
        req.socket.write(answer(req, registersPdu(req.pdu, valueAt)));
      }, { maxInflight: 4 });
      const [a, b] = await Promise.all([rejectionOf(client.request(read(1))), rejectionOf(client.request(read(2)))]);
      assert.equal(a.code, 'NINES_ERR_BAD_REPLY');
      assert.equal(b.code, 'NINES_ERR_BAD_REPLY');
      assert.match(b.message, /^reply to unit 1 FC3 address 2 quantity 1: .*comes from unit 9, not 1/);
      assert.match(a.message, /got no reply it could trust/);
      assert.equal(client.stats.resets, 1);
      assert.equal(client.stats.ok, 0);
      assert.deepEqual((await client.request(read(5))).data, [valueAt(5)]);
    });

    it('resets on a reply whose function code does not fit its request, and never hands it to another', async () => {
      const held = [];
      const { srv, client } = await setup((req) => {
        if (srv.requests.length <= 2) {
          held.push(req);
          // the FC3 request's id with an FC4 answer (as if the device swapped two replies)
          if (held.length === 2) req.socket.write(answer(held[0], Buffer.from([4, 2, 0, 1])));
          return;
        }
        req.socket.write(answer(req, req.pdu[0] === 4 ? Buffer.from([4, 2, 0, 4]) : registersPdu(req.pdu, valueAt)));
      }, { maxInflight: 4 });
      const [a, b] = await Promise.all([rejectionOf(client.request(read(1))), rejectionOf(client.request({ fc: 4, address: 0, quantity: 1 }))]);
      assert.equal(a.code, 'NINES_ERR_BAD_REPLY');
      assert.match(a.message, /function code 4, expected 3/);
      assert.equal(a.details.reset, true);
      assert.equal(b.code, 'NINES_ERR_BAD_REPLY');
      assert.match(b.message, /got no reply it could trust: the reply to unit 1 FC3 address 1 quantity 1 does not fit it/);
      assert.equal(client.stats.resets, 1);
      assert.deepEqual((await client.request({ fc: 4, address: 0, quantity: 1 })).data, [4]);
    });

    it('takes an exception as its own request\'s answer and keeps the connection and the others', async () => {
      const held = [];
      const { client } = await setup((req) => {
        held.push(req);
        if (held.length < 3) return;
        for (const r of held.splice(0).reverse()) {
          r.socket.write(answer(r, r.pdu.readUInt16BE(1) === 2 ? Buffer.from([0x83, 2]) : registersPdu(r.pdu, valueAt)));
        }
      }, { maxInflight: 4 });
      const [a, b, c] = await Promise.all([client.request(read(1)), rejectionOf(client.request(read(2))), client.request(read(3))]);
      assert.deepEqual([a.data[0], c.data[0]], [valueAt(1), valueAt(3)]);
      assert.equal(b.code, 'NINES_ERR_MODBUS_EXCEPTION');
      assert.equal(client.stats.resets, 0);
      assert.equal(client.stats.connects, 1);
    });

    it('drops the late reply to a timed-out request and keeps its id out of use while it is owed', async () => {
      let late = null;
      const { srv, client } = await setup((req) => {
        if (req.index === 0) { late = req; return; }
        if (req.index === 2) {
          // the owed reply first, then this request's own: the late one is dropped, not reset over
          req.socket.write(Buffer.concat([answer(late, registersPdu(late.pdu, () => 111)), answer(req, registersPdu(req.pdu, valueAt))]));
          return;
        }
        req.socket.write(answer(req, registersPdu(req.pdu, valueAt)));
      }, { maxInflight: 4, timeoutMs: 100 });
      const first = client.request(read(1));
      const second = client.request(read(2));
      assert.deepEqual((await second).data, [valueAt(2)]);
      assert.equal((await rejectionOf(first)).code, 'NINES_ERR_REPLY_TIMEOUT');
      assert.deepEqual((await client.request(read(3))).data, [valueAt(3)]);
      assert.equal(client.stats.lateReplies, 1);
      assert.equal(client.stats.resets, 0);
      assert.equal(new Set(srv.requests.map((r) => r.tid)).size, 3);
    });

    it('never hands a late reply to another request at maxInflight 16, across the transaction id wrap: every reply holds what its request asked', async function () {
      this.timeout(20000);
      const LATE_MS = 350;
      let replies = 0;
      const { client } = await setup((req) => {
        // every 50th request is answered after its timeout, the rest at once (several per chunk, in any order)
        const pdu = registersPdu(req.pdu, valueAt);
        if (req.index % 50 === 49) setTimeout(() => { if (!req.socket.destroyed) req.socket.write(answer(req, pdu)); }, LATE_MS);
        else req.socket.write(answer(req, pdu));
        replies++;
      }, { maxInflight: 16, timeoutMs: 250 });
      client._transport._tid = 65536 - 1500; // white box: the ids wrap half way through, with replies owed
      const COUNT = 3000;
      let next = 0;
      let ok = 0;
      let timeouts = 0;
      let sentTimeouts = 0; // written, then timed out: each one's reply comes late
      const wrong = [];
      const stopAt = Date.now() + 15000;
      const lane = async () => {
        while (next < COUNT && Date.now() < stopAt) {
          const address = (next++ * 37) % 5000;
          try {
            const r = await client.request(read(address));
            if (r.data[0] !== valueAt(address) || r.address !== address) wrong.push({ address, got: r.data[0] });
            ok++;
          } catch (err) {
            assert.equal(err.code, 'NINES_ERR_REPLY_TIMEOUT', err.message);
            timeouts++;
            if (!err.details.queued) sentTimeouts++;
          }
        }
      };
      await Promise.all(Array.from({ length: 16 }, lane));
      assert.deepEqual(wrong, []);
      assert.equal(ok + timeouts, COUNT);
      assert.ok(timeouts >= 30, `timeouts ${timeouts}`);
      // every timed-out request's reply comes late and is dropped as owed; none resets the connection
      const until = Date.now() + 5000;
      while (client.stats.lateReplies < sentTimeouts && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(client.stats.lateReplies, sentTimeouts, JSON.stringify(client.stats));
      assert.equal(client.stats.resets, 0);
      assert.equal(client.stats.connects, 1);
      assert.ok(replies >= COUNT);
    });

    it('counts three peer closes with several requests in flight against pipelining and falls back to one, with a warning', async function () {
      this.timeout(10000);
      // a device that closes the connection when a second request arrives while it serves one
      const busy = new WeakMap();
      const { client } = await setup((req) => {
        if (busy.get(req.socket)) { req.socket.destroy(); return; }
        busy.set(req.socket, true);
        setTimeout(() => {
          busy.set(req.socket, false);
          if (!req.socket.destroyed) req.socket.write(answer(req, registersPdu(req.pdu, valueAt)));
        }, 5);
      }, { maxInflight: 4 });
      const warned = eventOf(client, 'warning', 8000);
      client.on('error', () => {});
      let stop = false;
      const lane = async (k) => {
        while (!stop) {
          try { await client.request(read(k)); } catch { await new Promise((resolve) => setTimeout(resolve, 2)); }
        }
      };
      const lanes = Array.from({ length: 4 }, (_, k) => lane(k));
      const [warning] = await warned;
      stop = true;
      await Promise.all(lanes);
      assert.equal(warning.code, 'NINES_ERR_PIPELINE_UNSUPPORTED');
      assert.equal(warning.details.peerCloses, 3);
      assert.equal(client.effectiveInflight, 1);
      assert.equal(client.maxInflight, 4);
      // one at a time, the device answers every request
      const replies = await Promise.all([1, 2, 3, 4, 5].map((a) => client.request(read(a))));
      assert.deepEqual(replies.map((r) => r.data[0]), [1, 2, 3, 4, 5].map(valueAt));
      assert.equal(client.stats.pipelinePeerCloses, 3);
    });
  });
}

describe('modbus client: pipelining options', () => {
  it('refuses maxInflight outside 1-64, and above 1 on anything but modbus+tcp', () => {
    for (const bad of [0, 65, 1.5, '4']) {
      assert.throws(() => createClient('modbus+tcp://127.0.0.1:5020', { maxInflight: bad }), (err) => err.code === 'NINES_ERR_INVALID_ARG' && err.details.field === 'maxInflight');
    }
    assert.throws(() => createClient('modbus+rtu:///dev/ttyUSB0', { maxInflight: 2 }), (err) => err.code === 'NINES_ERR_INVALID_ARG' && /modbus\+tcp/.test(err.message));
    const { AsciiClient } = require('../../gateway/drivers/ascii');
    assert.throws(() => new AsciiClient('ascii://127.0.0.1:9500', { maxInflight: 2 }), (err) => err.details.field === 'maxInflight');
    const c = createClient('modbus+tcp://127.0.0.1:5020', { maxInflight: 64 });
    assert.equal(c.maxInflight, 64);
    assert.equal(c.effectiveInflight, 64);
    assert.equal(createClient('modbus+rtu:///dev/ttyUSB0', { maxInflight: 1 }).maxInflight, 1);
  });
});
