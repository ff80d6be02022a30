'use strict';

const assert = require('node:assert/strict');
const { AsciiClient } = require('../../gateway/drivers/ascii/client');
const { startScriptedServer, ED588 } = require('./scripted-server');
const { rejectsWith } = require('./helpers');
const { until } = require('../helpers/wait');

// Timeouts here are short on purpose; every late reply comes well after its request's timeout, and
// every "fast" reply is immediate, so the margins are wide on a busy machine.
describe('ascii client: timeouts and late replies never mis-correlate', function () {
  let server;
  let client;

  afterEach(async () => {
    if (client) await client.close();
    if (server) await server.close();
    client = null;
    server = null;
  });

  async function start (answer, opts) {
    server = await startScriptedServer(answer);
    client = new AsciiClient(`ascii://127.0.0.1:${server.port}`, opts);
    await client.connect();
  }

  it('after a timeout, the late reply is not taken by the next command (reconnect policy)', async () => {
    let n = 0;
    // 1st @01: answered >AAAA long after the timeout; every later @01: >0001 at once
    await start(() => (++n === 1 ? { delayMs: 400, then: '>AAAA' } : '>0001'), { timeoutMs: 100 });
    const err = await rejectsWith(client.request('@01'), 'NINES_ERR_REPLY_TIMEOUT');
    assert.equal(typeof err.sentNs, 'bigint');
    assert.equal(err.details.written, true);
    const r = await client.request('@01');
    assert.equal(r.value, 1, 'the second @01 gets its own reply');
    assert.equal(client.stats.resyncs, 1, 'the unanswered line was replaced by a fresh connection');
    assert.equal(server.connections, 2);
    // the late >AAAA went to the old connection; wait past it and check nothing changed
    await new Promise((resolve) => setTimeout(resolve, 450));
    assert.equal((await client.request('@01')).value, 1);
    assert.equal(client.stats.timeouts, 1);
  });

  it('a late reply that arrives during the drain is counted and dropped, and the connection is kept', async () => {
    let n = 0;
    await start(() => (++n === 1 ? { delayMs: 150, then: '>AAAA' } : '>0001'), { timeoutMs: 100, drainMs: 2000 });
    const t0 = Date.now();
    await rejectsWith(client.request('@01'), 'NINES_ERR_REPLY_TIMEOUT');
    const r = await client.request('@01');
    assert.equal(r.value, 1);
    assert.equal(client.stats.lateReplies, 1);
    assert.equal(client.stats.resyncs, 0);
    assert.equal(server.connections, 1);
    assert.ok(Date.now() - t0 < 1500, 'the drain ended when the owed line came, not after drainMs');
  });

  it('a late reply that arrives while the client is idle cleans the line without a reconnect', async () => {
    let n = 0;
    await start(() => (++n === 1 ? { delayMs: 200, then: '>AAAA' } : '>0001'), { timeoutMs: 50, drainMs: 10 });
    await rejectsWith(client.request('@01'), 'NINES_ERR_REPLY_TIMEOUT');
    await until(() => client.stats.lateReplies === 1);
    assert.equal((await client.request('@01')).value, 1);
    assert.equal(client.stats.resyncs, 0);
  });

  it('a second reply in the same chunk is unsolicited: counted, dropped, never given to the next command', async () => {
    let n = 0;
    await start(() => (++n === 1 ? { raw: '>00FF\r>1234\r' } : '>0001'), { timeoutMs: 2000 });
    const [a, b] = await Promise.all([client.request('@01'), client.request('@01')]);
    assert.equal(a.value, 0xff);
    assert.equal(b.value, 1);
    assert.equal(client.stats.lateReplies, 1);
  });

  it('bytes of an unfinished line received before a command is written are not part of its reply', async () => {
    let n = 0;
    await start(() => (++n === 1 ? { raw: '>00FF\r>12' } : '>0001'), { timeoutMs: 2000 });
    assert.equal((await client.request('@01')).value, 0xff);
    await new Promise((resolve) => setTimeout(resolve, 50)); // let the stray bytes arrive first
    assert.equal((await client.request('@01')).value, 1);
    assert.equal(client.stats.discardedBytes, 3);
  });

  it('recovers after silence on an invalid command: timeout, then the next command is answered [HW E1/E2]', async () => {
    await start((line) => ED588[line], { timeoutMs: 150 });
    await rejectsWith(client.request({ command: 'INVALIDCOMMAND', unchecked: true }), 'NINES_ERR_REPLY_TIMEOUT');
    assert.equal((await client.request('$01M')).name, 'ED-588');
    await rejectsWith(client.request('@02'), 'NINES_ERR_REPLY_TIMEOUT'); // wrong address: silence [DOC]
    assert.equal((await client.request('@01')).value, 0xff);
  });

  it('a line that does not answer the timed-out command leaves its reply owed: the next command goes on a fresh connection', async () => {
    // $01M goes unanswered; a stray ">00FF" (no answer to $01M) arrives during the drain
    await start((line, conn) => {
      if (line === '$01M' && conn.id === 1) return { delayMs: 130, then: '>00FF' };
      return ED588[line];
    }, { timeoutMs: 100, drainMs: 50 });
    await rejectsWith(client.request('$01M'), 'NINES_ERR_REPLY_TIMEOUT');
    assert.equal((await client.request('$01M', { timeoutMs: 2000 })).name, 'ED-588');
    assert.equal(client.stats.lateReplies, 1);
    assert.equal(client.stats.resyncs, 1);
    assert.equal(server.connections, 2);
  });

  it('has no afterTimeout option: keeping the connection after silence could mis-correlate', () => {
    assert.throws(() => new AsciiClient('ascii://127.0.0.1:9500', { afterTimeout: 'drain' }),
      (err) => err.code === 'NINES_ERR_INVALID_ARG' && err.details.field === 'afterTimeout');
  });

  it('times out a queued request with NINES_ERR_REPLY_TIMEOUT (not written) while connected', async () => {
    await start((line) => (line === '$01M' ? { delayMs: 300, then: '!01ED-588' } : ED588[line]), { timeoutMs: 2000 });
    const slow = client.request('$01M');
    const err = await rejectsWith(client.request('@01', { timeoutMs: 50 }), 'NINES_ERR_REPLY_TIMEOUT');
    assert.equal(err.details.written, false);
    assert.equal(err.sentNs, undefined);
    assert.equal((await slow).name, 'ED-588');
    assert.deepEqual(server.lines, ['$01M'], 'the timed-out request was never sent');
  });

  it('holds the queue after $AARS until the device drops the connection, then reconnects', async () => {
    await start((line) => (line === '$01RS' ? { delayMs: 20, then: { destroy: true } } : ED588[line]),
      { timeoutMs: 2000, backoff: { initialMs: 10, maxMs: 50 } });
    const closes = [];
    client.on('close', (e) => closes.push(e));
    const r = await client.request('$01RS');
    assert.equal(r.noReply, true);
    const name = await client.request('$01M');
    assert.equal(name.name, 'ED-588');
    assert.deepEqual(closes, [undefined], 'an expected drop is not an error');
    assert.equal(server.connections, 2);
    assert.deepEqual(server.received.map((x) => `${x.conn}:${x.line}`), ['1:$01RS', '2:$01M']);
  });

  it('reconnects by itself when the device does not drop the connection after $AARS', async () => {
    await start((line) => ED588[line], { timeoutMs: 100 });
    await client.request('$01RS');
    assert.equal((await client.request('$01M', { timeoutMs: 2000 })).name, 'ED-588');
    assert.equal(client.stats.resyncs, 1);
    assert.equal(server.connections, 2);
  });
});

// Story (issue 12, item 5): many commands, each answered by a reply that names it, a few of them later
// than timeout + drainMs. Command k is `@AA` with AA = k mod 256 (any address: the scripted device
// answers them all), and the device answers `>00AA`: `@AA` replies carry no address, so only the
// value tells which command a reply answers, as when a loop polls one device.
describe('ascii client: numbered replies, some later than timeout + drainMs, never mis-correlate', function () {
  this.timeout(60000);
  const COUNT = 2000;
  const TIMEOUT_MS = 60;
  let server;
  let client;

  afterEach(async () => {
    if (client) await client.close();
    if (server) await server.close();
    client = null;
    server = null;
  });

  /** A seeded PRNG (mulberry32): the same late replies on every run. @param {number} seed */
  function prng (seed) {
    let a = seed >>> 0;
    return () => {
      a = (a + 0x6D2B79F5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  async function run (opts) {
    const random = prng(5);
    let late = 0;
    server = await startScriptedServer((line) => {
      const reply = '>00' + line.slice(1, 3);
      if (random() >= 0.02) return reply;
      late++;
      return { delayMs: TIMEOUT_MS + client.drainMs + 5 + Math.floor(random() * 35), then: reply };
    });
    client = new AsciiClient(`ascii://127.0.0.1:${server.port}`, { timeoutMs: TIMEOUT_MS, ...opts });
    await client.connect();
    const out = { ok: 0, wrong: 0, errors: {}, late: 0 };
    for (let k = 0; k < COUNT; k++) {
      const aa = (k & 0xFF).toString(16).toUpperCase().padStart(2, '0');
      try {
        const r = await client.request('@' + aa);
        if (r.value === (k & 0xFF)) out.ok++;
        else out.wrong++;
      } catch (err) {
        out.errors[err.code] = (out.errors[err.code] || 0) + 1;
      }
    }
    out.late = late;
    return out;
  }

  it('gives no command another command\'s reply, and reconnects once per unanswered timeout', async () => {
    const r = await run({ drainMs: 20 });
    assert.equal(r.wrong, 0, `${r.wrong} of ${COUNT} commands got another command's reply: ${JSON.stringify(r)}`);
    assert.ok(r.late >= 20, JSON.stringify(r));
    // The timed-out commands, and (on a slow machine) a command that waited behind the drain and the
    // reconnect past its own timeout; nothing else fails
    for (const code of Object.keys(r.errors)) assert.ok(code === 'NINES_ERR_REPLY_TIMEOUT' || code === 'NINES_ERR_NOT_CONNECTED', JSON.stringify(r));
    assert.ok(r.ok >= COUNT - 2 * r.late, JSON.stringify(r));
    // Each late reply either came within the drain (counted and dropped, the connection kept) or
    // outlived it, and then a fresh connection replaced the old one before the next command
    const s = client.stats;
    assert.equal(s.resyncs + s.lateReplies, r.late, JSON.stringify({ r, stats: s }));
  });
});
