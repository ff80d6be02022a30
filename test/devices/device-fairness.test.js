'use strict';

const assert = require('node:assert/strict');
const { READ, startModbus, sendOrder, deviceFixture } = require('./helpers');

/**
 * Fairness is asserted on the order requests went on the wire (sentNs), which the device decides;
 * never on how long anything took, so a loaded machine cannot change the verdict.
 */
describe('Device: fairness', function () {
  const t = deviceFixture();

  /** Sends n requests as `user`, recording each send in `done`. */
  function flood (user, n, done) {
    return Array.from({ length: n }, () => user.request(READ).then((r) => { done.push({ user: user.name, sentNs: r.sentNs }); }));
  }

  for (const maxConnections of [1, 2, 4]) {
    it(`lets a user flooding 1000 requests delay another user's single request by at most one request per connection (${maxConnections})`, async function () {
      const { device } = await t.open(await startModbus(), { maxConnections, timeoutMs: 30000 });
      const done = [];
      const floods = flood(device.user('flood', { queueMax: 1000 }), 1000, done);
      const single = device.user('single').request(READ);
      const reply = await single;
      await Promise.all(floods);
      const ahead = done.filter((x) => x.sentNs < reply.sentNs).length;
      assert.ok(ahead <= maxConnections, `${ahead} flood requests went before the single one on ${maxConnections} connection(s)`);
      assert.equal(device.stats.users.flood.ok, 1000);
      assert.equal(device.stats.users.flood.dropped, 0);
    });
  }

  it('serves three flooding users in strict turns', async function () {
    const { device } = await t.open(await startModbus(), { timeoutMs: 30000 });
    const done = [];
    await Promise.all(['a', 'b', 'c'].flatMap((name) => flood(device.user(name), 50, done)));
    const order = sendOrder(done);
    for (let i = 0; i < order.length; i += 3) assert.deepEqual(order.slice(i, i + 3).sort(), ['a', 'b', 'c'], `turn ${i / 3}: ${order.slice(i, i + 3)}`);
  });

  it('gives a closed-loop user one request in three against two flooding users', async function () {
    const { device } = await t.open(await startModbus(), { timeoutMs: 30000 });
    const done = [];
    const loopUser = device.user('loop');
    const floods = [...flood(device.user('a'), 60, done), ...flood(device.user('b'), 60, done)];
    // One request at a time, the next asked only when the reply is in: it must still get its turn each round
    for (let i = 0; i < 30; i++) {
      const r = await loopUser.request(READ);
      done.push({ user: 'loop', sentNs: r.sentNs });
    }
    await Promise.all(floods);
    const order = sendOrder(done).slice(0, 90);
    const count = (name) => order.filter((u) => u === name).length;
    assert.equal(count('loop'), 30, `first 90 sends: ${order.join(' ')}`);
    assert.equal(count('a'), 30);
    assert.equal(count('b'), 30);
  });

  it('keeps each user in its own FIFO order', async function () {
    const { device } = await t.open(await startModbus(), { maxConnections: 1, timeoutMs: 30000 });
    const seen = { a: [], b: [] };
    const all = [];
    for (let i = 0; i < 40; i++) {
      for (const name of ['a', 'b']) all.push(device.user(name).request(READ).then((r) => seen[name].push([i, r.sentNs])));
    }
    await Promise.all(all);
    for (const name of ['a', 'b']) {
      const bySend = [...seen[name]].sort((x, y) => (x[1] < y[1] ? -1 : 1)).map((x) => x[0]);
      assert.deepEqual(bySend, Array.from({ length: 40 }, (_, i) => i));
    }
  });
});
