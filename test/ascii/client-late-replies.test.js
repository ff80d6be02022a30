'use strict';

const assert = require('node:assert/strict');
const { AsciiClient } = require('../../gateway/drivers/ascii/client');
const { startScriptedServer, ED588 } = require('./scripted-server');
const { rejectsWith, waitFor } = require('./helpers');

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
    await waitFor(() => client.stats.lateReplies === 1);
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

  it('with afterTimeout "drain", recovers from silence on the same connection [HW E1/E2]', async () => {
    await start((line) => ED588[line], { timeoutMs: 150, afterTimeout: 'drain' });
    await rejectsWith(client.request({ command: 'INVALIDCOMMAND', unchecked: true }), 'NINES_ERR_REPLY_TIMEOUT');
    assert.equal((await client.request('$01M')).name, 'ED-588');
    assert.equal(server.connections, 1);
    assert.equal(client.stats.resyncs, 0);
  });

  it('with afterTimeout "drain", a reply that does not fit right after a silent drain makes the client reconnect', async () => {
    // $01M goes unanswered; the device then (too late) answers it just before answering @01
    await start((line, conn) => {
      if (line === '$01M') return null;
      if (conn.id === 1) return { raw: '!01ED-588\r>00FF\r' };
      return '>0001';
    }, { timeoutMs: 100, drainMs: 20, afterTimeout: 'drain' });
    await rejectsWith(client.request('$01M'), 'NINES_ERR_REPLY_TIMEOUT');
    const err = await rejectsWith(client.request('@01'), 'NINES_ERR_BAD_REPLY');
    assert.equal(err.details.raw, '!01ED-588');
    assert.equal((await client.request('@01')).value, 1, 'answered on a fresh connection');
    assert.equal(client.stats.resyncs, 1);
    assert.equal(server.connections, 2);
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
