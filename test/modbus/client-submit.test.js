'use strict';

// submit(): request() without a promise, for the loops that send one request after another (issue 11).
// The same checks and the same correlation as request(); the reply is the client's own, lent to the
// handler until onReply returns; failures never reach the handler from within submit().

const assert = require('node:assert/strict');
const { validateOp } = require('../../gateway/drivers/modbus');
const { rawClientSetup, registersPdu, answer } = require('./helpers');

const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A handler that records what it was told, and a promise for its next outcome.
 * @param {boolean} [wantsData]
 */
function recorder (wantsData) {
  const h = {
    wantsData,
    replies: [],
    errors: [],
    waiting: null,
    onReply (reply) {
      // what the lent reply says now, copied: it changes with the next reply
      h.replies.push({ data: reply.data, raw: Buffer.from(reply.raw), buffer: reply.buffer && Buffer.from(reply.buffer), fc: reply.fc, unitId: reply.unitId, address: reply.address, sentNs: reply.sentNs, doneNs: reply.doneNs, reply });
      h.settle();
    },
    onError (err) {
      h.errors.push(err);
      h.settle();
    },
    settle () {
      const w = h.waiting;
      h.waiting = null;
      if (w) w();
    },
    next () {
      return new Promise((resolve) => { h.waiting = resolve; });
    }
  };
  return h;
}

describe('modbus client (TCP): submit()', () => {
  const setup = rawClientSetup();

  const echo = (req) => req.socket.write(answer(req, registersPdu(req.pdu, (a) => a * 10)));

  it('answers with the same values, frame and stamps as request(), in the client\'s own reply', async () => {
    const { client } = await setup(echo);
    const op = validateOp({ fc: 3, address: 5, quantity: 3 });
    const h = recorder();
    let next = h.next();
    client.submit(op, undefined, h);
    await next;
    const a = h.replies[0];
    assert.deepEqual(a.data, [50, 60, 70]);
    assert.equal(a.fc, 3);
    assert.equal(a.unitId, 1);
    assert.equal(a.address, 5);
    assert.deepEqual(a.buffer, Buffer.from([0, 50, 0, 60, 0, 70]));
    assert.equal(a.raw.length, 7 + 2 + 6);
    assert.ok(typeof a.sentNs === 'bigint' && a.sentNs > 0n && a.doneNs > a.sentNs);
    const viaPromise = await client.request(op);
    assert.deepEqual(viaPromise.data, a.data);
    assert.deepEqual(viaPromise.buffer, a.buffer);
    // the next submitted request's reply is the same object, refilled; data is a new array each time
    next = h.next();
    client.submit(validateOp({ fc: 3, address: 1, quantity: 2 }), undefined, h);
    await next;
    const b = h.replies[1];
    assert.equal(b.reply, a.reply, 'one reply object per client');
    assert.notEqual(b.data, a.data);
    assert.deepEqual(a.data, [50, 60, 70], 'the data a handler kept stays as it was');
    assert.deepEqual(b.data, [10, 20]);
    assert.deepEqual(b.buffer, Buffer.from([0, 10, 0, 20]));
    assert.equal(b.raw.length, 7 + 2 + 4);
    assert.equal(client.stats.ok, 3);
  });

  it('decodes no values when the handler does not want them, and still checks the reply', async () => {
    let bad = false;
    const { client } = await setup((req) => {
      const pdu = registersPdu(req.pdu);
      if (bad) pdu[1] = 4; // a byte count that does not fit the request
      req.socket.write(answer(req, pdu));
    });
    const h = recorder(false);
    let next = h.next();
    client.submit('3:0:4', undefined, h);
    await next;
    assert.equal(h.replies[0].data, undefined);
    assert.deepEqual(h.replies[0].buffer, Buffer.from([0, 0, 0, 1, 0, 2, 0, 3]));
    bad = true;
    next = h.next();
    client.submit('3:0:4', undefined, h);
    await next;
    assert.equal(h.errors[0].code, 'NINES_ERR_BAD_REPLY');
    assert.match(h.errors[0].message, /byte count 4/);
    assert.equal(typeof h.errors[0].sentNs, 'bigint');
  });

  it('never calls the handler back from within submit(): refusals come on a microtask', async () => {
    const { client } = await setup(echo);
    const h = recorder();
    const seen = [];
    h.onError = (err) => { seen.push(err.code); };
    client.submit({ fc: 3, address: 0, quantity: 0 }, undefined, h); // invalid op
    client.submit('3:0:1', 0, h); // invalid timeout
    assert.equal(seen.length, 0, 'nothing within submit()');
    await wait(0);
    await client.close();
    client.submit('3:0:1', undefined, h); // closed
    assert.equal(seen.length, 2, 'nothing within submit()');
    await wait(0);
    assert.deepEqual(seen, ['NINES_ERR_INVALID_OP', 'NINES_ERR_INVALID_ARG', 'NINES_ERR_CLOSED']);
  });

  it('times out with sentNs on the error, and never takes the late reply for the next request', async () => {
    let held = null;
    const { client } = await setup((req) => {
      if (req.index === 0) { held = req; return; }
      // the late answer to the first request, then the second's, in separate writes
      held.socket.write(answer(held, registersPdu(held.pdu, () => 111)));
      setTimeout(() => req.socket.write(answer(req, registersPdu(req.pdu, () => 222))), 5);
    }, { timeoutMs: 50 });
    const h = recorder();
    let next = h.next();
    client.submit('3:0:2', undefined, h);
    await next;
    assert.equal(h.errors[0].code, 'NINES_ERR_REPLY_TIMEOUT');
    assert.equal(typeof h.errors[0].sentNs, 'bigint');
    next = h.next();
    client.submit('3:0:2', undefined, h);
    await next;
    assert.deepEqual(h.replies[0].data, [222, 222], 'the second request got its own answer');
    assert.equal(client.stats.lateReplies, 1);
    assert.equal(client.stats.timeouts, 1);
  });

  it('queues behind the request in flight, in order, with request() callers alike', async () => {
    const { client } = await setup((req) => setTimeout(() => echo(req), 2));
    const h = recorder();
    const order = [];
    h.onReply = (reply) => { order.push(`s${reply.address}`); };
    client.submit('3:1:1', undefined, h);
    const p = client.request('3:2:1').then((r) => order.push(`r${r.address}`));
    client.submit('3:3:1', undefined, h);
    await p;
    await wait(20);
    assert.deepEqual(order, ['s1', 'r2', 's3']);
  });

  it('fails what it carries when the connection drops, and works again after the reconnect', async () => {
    let drop = true;
    const { srv, client } = await setup((req) => {
      if (drop) { drop = false; req.socket.destroy(); return; }
      echo(req);
    });
    const h = recorder();
    let next = h.next();
    client.submit('3:0:1', undefined, h);
    await next;
    assert.equal(h.errors[0].code, 'NINES_ERR_CONNECTION_CLOSED');
    await new Promise((resolve) => client.once('connect', resolve));
    next = h.next();
    client.submit('3:4:1', undefined, h);
    await next;
    assert.deepEqual(h.replies[0].data, [40]);
    assert.equal(srv.requests.length, 2);
  });
});
