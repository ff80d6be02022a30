'use strict';

const assert = require('node:assert/strict');
const { once } = require('node:events');
const { AsciiClient } = require('../../gateway/drivers/ascii/client');
const { NinesError } = require('../../gateway/base/errors');
const { startScriptedServer, ED588 } = require('./scripted-server');
const { rejectsWith } = require('./helpers');

describe('ascii client: requests and replies', function () {
  let server;
  let client;

  afterEach(async () => {
    if (client) await client.close();
    if (server) await server.close();
    client = null;
    server = null;
  });

  function connectTo (answer, opts = {}, query = '') {
    return startScriptedServer(answer).then((s) => {
      server = s;
      client = new AsciiClient(`ascii://127.0.0.1:${s.port}${query}`, { timeoutMs: 2000, ...opts });
      return client;
    });
  }

  it('connects, sends a command and returns the typed reply with sentNs and doneNs', async () => {
    await connectTo((line) => ED588[line]);
    assert.equal(client.state, 'idle');
    const connected = once(client, 'connect');
    await client.connect();
    await connected;
    assert.equal(client.state, 'connected');
    const r = await client.request('@01');
    assert.equal(r.ok, true);
    assert.equal(r.command, '@01');
    assert.equal(r.raw, '>00FF');
    assert.deepEqual(r.inputs, Array(8).fill(true));
    assert.equal(typeof r.sentNs, 'bigint');
    assert.equal(typeof r.doneNs, 'bigint');
    assert.ok(r.doneNs >= r.sentNs);
    assert.deepEqual(server.lines, ['@01']);
    const s = client.stats;
    assert.equal(s.requests, 1);
    assert.equal(s.ok, 1);
    assert.equal(s.errors + s.timeouts + s.lateReplies, 0);
  });

  it('connects by itself when request() is called on an idle client', async () => {
    await connectTo((line) => ED588[line]);
    const r = await client.request({ command: '$01M' });
    assert.equal(r.name, 'ED-588');
    assert.equal(client.state, 'connected');
  });

  it('writes the command synchronously when the connection is free', async () => {
    await connectTo((line) => ED588[line]);
    await client.connect();
    const p = client.request('@01');
    assert.equal(client.stats.inFlight, 1, 'on the wire before request() returned');
    assert.equal(client.stats.queued, 0);
    await p;
  });

  it('keeps at most one request on the wire and answers a burst in FIFO order', async () => {
    let onWire = 0;
    let maxOnWire = 0;
    let outputs = '00';
    await connectTo((line) => {
      maxOnWire = Math.max(maxOnWire, ++onWire);
      return {
        delayMs: 2,
        then: {
          fn: () => {
            onWire--;
            if (line === '@01') return '>' + outputs + 'FF';
            outputs = line.slice(3);
            return '>';
          }
        }
      };
    });
    const burst = [];
    for (const d of ['11', '22', '33', '44', '55', '66', '77', '88']) burst.push(client.request('@01' + d), client.request('@01'));
    const replies = await Promise.all(burst);
    for (let i = 0; i < replies.length; i += 2) {
      assert.equal(replies[i].ack, true);
      assert.equal(replies[i + 1].value >> 8, parseInt(replies[i].command.slice(3), 16), 'each read sees the write just before it');
    }
    assert.equal(maxOnWire, 1);
  });

  it('rejects at once with NINES_ERR_QUEUE_FULL beyond queueMax and counts it', async () => {
    await connectTo((line) => ({ delayMs: 50, then: ED588[line] }), { queueMax: 2 });
    await client.connect();
    const ok = [client.request('@01'), client.request('@01'), client.request('@01')];
    const err = await rejectsWith(client.request('@01'), 'NINES_ERR_QUEUE_FULL');
    assert.equal(err.details.queueMax, 2);
    assert.equal(client.stats.queueFull, 1);
    for (const r of await Promise.all(ok)) assert.equal(r.value, 0xff);
    // the refused request counts as a request and an error, as on Modbus (drivers/connection.js)
    const s = client.stats;
    assert.equal(s.requests, 4);
    assert.equal(s.errors, 1);
    assert.equal(s.requests, s.ok + s.errors + s.timeouts + s.queued + s.inFlight);
  });

  it('rejects an invalid command with NINES_ERR_INVALID_COMMAND without touching the socket', async () => {
    await connectTo((line) => ED588[line]);
    for (const bad of ['@0a', 'INVALIDCOMMAND', '$01m', '@01\r', 42, null, '', { command: 7 }]) {
      await rejectsWith(client.request(bad), 'NINES_ERR_INVALID_COMMAND');
    }
    assert.equal(client.state, 'idle');
    assert.equal(server.connections, 0);
    assert.equal(client.stats.invalid, 8);
    assert.equal(client.stats.requests, 0);
  });

  it('rejects a bad per-request timeout with NINES_ERR_INVALID_ARG', async () => {
    await connectTo((line) => ED588[line]);
    for (const t of [0, -1, 'soon', NaN, 2 ** 31]) await rejectsWith(client.request('@01', { timeoutMs: t }), 'NINES_ERR_INVALID_ARG');
    assert.equal(server.connections, 0);
  });

  it('sends an unchecked command as is, for conformance tests', async () => {
    await connectTo(() => null, { timeoutMs: 100 });
    await rejectsWith(client.request({ command: 'INVALIDCOMMAND', unchecked: true }), 'NINES_ERR_REPLY_TIMEOUT');
    assert.deepEqual(server.lines, ['INVALIDCOMMAND']);
  });

  it('assembles a reply that arrives in several TCP chunks', async () => {
    await connectTo(() => ({ chunks: ['>0', '1', 'F', 'F\r'], gapMs: 5 }));
    const r = await client.request('@01');
    assert.equal(r.value, 0x01ff);
  });

  it('fails the request with NINES_ERR_BAD_REPLY on a garbage line and keeps working', async () => {
    let n = 0;
    await connectTo((line) => (++n === 1 ? { raw: Buffer.from([0x00, 0xff, 0x47, 0x0d]) } : ED588[line]));
    const err = await rejectsWith(client.request('@01'), 'NINES_ERR_BAD_REPLY');
    assert.equal(err.details.hex, '00ff47');
    assert.equal(err.details.command, '@01');
    assert.equal(typeof err.sentNs, 'bigint');
    assert.equal((await client.request('@01')).value, 0xff);
    assert.equal(server.connections, 1);
  });

  it('fails the request with NINES_ERR_FRAME_TOO_LONG on an over-long line and keeps working', async () => {
    let n = 0;
    await connectTo((line) => (++n === 1 ? { chunks: ['X'.repeat(200), 'X'.repeat(100), '\r'], gapMs: 5 } : ED588[line]));
    const err = await rejectsWith(client.request('@01'), 'NINES_ERR_FRAME_TOO_LONG');
    assert.equal(err.details.maxLineBytes, 255);
    assert.equal((await client.request('@01')).value, 0xff);
    assert.equal(client.stats.discardedFrames, 1);
    assert.equal(client.stats.discardedBytes, 300);
  });

  it('reports ? as NINES_ERR_DEVICE_INVALID and a bare ! to a write as NINES_ERR_DEVICE_IGNORED', async () => {
    await connectTo((line) => (line === '#018' ? '?01' : line === '#01A001' ? '!' : ED588[line]));
    await rejectsWith(client.request('#018'), 'NINES_ERR_DEVICE_INVALID');
    await rejectsWith(client.request('#01A001'), 'NINES_ERR_DEVICE_IGNORED');
    assert.equal((await client.request('$01M')).name, 'ED-588');
    assert.equal(client.stats.errors, 2);
  });

  it('resolves #** and ~** right after the write with noReply and goes on [HW]', async () => {
    await connectTo((line) => ED588[line]);
    const r = await client.request('~**');
    assert.equal(r.ok, true);
    assert.equal(r.noReply, true);
    assert.equal(typeof r.sentNs, 'bigint');
    assert.equal((await client.request('#**')).noReply, true);
    assert.equal((await client.request('@01')).value, 0xff);
    assert.deepEqual(server.lines, ['~**', '#**', '@01']);
  });

  it('speaks checksums end to end when the target says checksum=on', async () => {
    const { verifyAndStrip, appendChecksum } = require('../../gateway/drivers/ascii/checksum');
    const TABLE = { '@01': '>00FF', $012: '!01400640', $01M: '!01ED-588', '#0100FF': '>' };
    let corrupt = false;
    await connectTo((line) => {
      const v = verifyAndStrip(line);
      if (!v.ok) return null; // the device ignores a bad checksum [DOC]
      if (corrupt) { corrupt = false; return TABLE[v.body] + '00'; }
      return appendChecksum(TABLE[v.body]);
    }, {}, '?checksum=on');
    assert.equal(client.checksum, true);
    const c1 = await client.request('$012');
    assert.equal(c1.raw, '!01400640');
    assert.equal(c1.checksum, true);
    assert.equal((await client.request('@01')).value, 0xff);
    assert.equal((await client.request('$01M')).name, 'ED-588');
    assert.equal((await client.request('#0100FF')).ack, true);
    assert.deepEqual(server.lines, ['$012B7', '@01A1', '$01MD2', '#0100FF70']);
    corrupt = true;
    const err = await rejectsWith(client.request('@01'), 'NINES_ERR_BAD_CHECKSUM');
    assert.match(err.message, /reply to @01 has checksum 00, expected/);
    assert.equal((await client.request('@01')).value, 0xff);
  });

  it('close() rejects the in-flight and queued requests with NINES_ERR_CLOSED', async () => {
    await connectTo(() => null);
    await client.connect();
    const inflight = client.request('@01');
    const queued = client.request('$01M');
    const closing = client.close();
    const e1 = await rejectsWith(inflight, 'NINES_ERR_CLOSED');
    assert.equal(typeof e1.sentNs, 'bigint');
    const e2 = await rejectsWith(queued, 'NINES_ERR_CLOSED');
    assert.equal(e2.sentNs, undefined, 'never written');
    await closing;
    assert.equal(client.state, 'closed');
    await rejectsWith(client.request('@01'), 'NINES_ERR_CLOSED');
    await rejectsWith(client.connect(), 'NINES_ERR_CLOSED');
    assert.equal(await client.close(), undefined, 'close() is idempotent');
  });

  it('emits close without error when closed by its owner', async () => {
    await connectTo((line) => ED588[line]);
    await client.connect();
    const closed = once(client, 'close');
    await client.close();
    assert.deepEqual(await closed, [undefined]);
  });

  it('rejects a bad target or bad options at construction', () => {
    const codeOf = (fn) => { try { fn(); } catch (e) { assert.ok(e instanceof NinesError); return e.code; } return null; };
    assert.equal(codeOf(() => new AsciiClient('modbus+tcp://127.0.0.1:502')), 'NINES_ERR_INVALID_TARGET');
    assert.equal(codeOf(() => new AsciiClient('ascii://127.0.0.1:9500?foo=1')), 'NINES_ERR_INVALID_TARGET');
    for (const opts of [{ timeoutMs: 0 }, { connectTimeoutMs: 'x' }, { queueMax: -1 }, { queueMax: 1.5 }, { reconnect: 'yes' },
      { random: 1 }, { afterTimeout: 'pray' }, { backoff: { initialMs: 500, maxMs: 100 } }, { backoff: 3 }, { drainMs: -1 }]) {
      assert.equal(codeOf(() => new AsciiClient('ascii://127.0.0.1:9500', opts)), 'NINES_ERR_INVALID_ARG', JSON.stringify(opts));
    }
    const c = new AsciiClient('ascii://127.0.0.1:9500?address=0a', { timeoutMs: '250ms' });
    assert.equal(c.timeoutMs, 250);
    assert.equal(c.address, '0A');
    assert.equal(c.state, 'idle');
  });
});
