'use strict';

const assert = require('node:assert/strict');
const net = require('node:net');
const { createAsciiSimulator } = require('../../gateway/simulators/ascii');
const { FaultPlan } = require('../../gateway/simulators/faults');
const { NinesError } = require('../../gateway/base/errors');

/** How long a test waits for a line it expects (generous: the machine is shared). */
const WAIT_MS = 5000;

/** A tiny raw line client for the tests: CR framing, a queue of received lines, close detection. */
class RawClient {
  /** @param {number} port @returns {Promise<RawClient>} */
  static connect (port) {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.removeListener('error', reject);
        resolve(new RawClient(socket));
      });
    });
  }

  constructor (socket) {
    this.socket = socket;
    socket.setNoDelay(true);
    this.buf = '';
    this.lines = [];
    this.waiters = [];
    this.closed = false;
    this.closeWaiters = [];
    socket.on('data', (d) => {
      this.buf += d.toString('latin1');
      let i;
      while ((i = this.buf.indexOf('\r')) >= 0) {
        this.lines.push(this.buf.slice(0, i));
        this.buf = this.buf.slice(i + 1);
      }
      while (this.waiters.length && this.lines.length) this.waiters.shift()(this.lines.shift());
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      this.closed = true;
      for (const w of this.waiters.splice(0)) w(null);
      for (const w of this.closeWaiters.splice(0)) w(true);
    });
  }

  send (text) { this.socket.write(text, 'latin1'); }

  /** @returns {Promise<string|null>} the next line, or null on timeout or close */
  next (timeoutMs = WAIT_MS) {
    if (this.lines.length) return Promise.resolve(this.lines.shift());
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve) => {
      const waiter = (line) => { clearTimeout(timer); resolve(line); };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        resolve(null);
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  request (cmd, timeoutMs) {
    this.send(cmd + '\r');
    return this.next(timeoutMs);
  }

  /** @returns {Promise<boolean>} true once the server closed the connection, false on timeout */
  waitClose (timeoutMs = WAIT_MS) {
    if (this.closed) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.closeWaiters.push((v) => { clearTimeout(timer); resolve(v); });
    });
  }

  destroy () { this.socket.destroy(); }
}

/** Expects silence for cmd: the sentinel's reply must be the next line (replies keep order). */
async function assertSilent (client, cmd) {
  client.send(cmd + '\r');
  assert.equal(await client.request('$01M'), '!01ED-588', `${JSON.stringify(cmd)} must get no reply`);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

describe('ASCII simulator server', function () {
  let sim;
  const clients = [];

  async function start (options = {}) {
    sim = await createAsciiSimulator({ port: 0, ...options });
    return sim;
  }

  async function connect () {
    const c = await RawClient.connect(sim.port);
    clients.push(c);
    return c;
  }

  afterEach(async function () {
    for (const c of clients.splice(0)) c.destroy();
    if (sim) await sim.close();
    sim = undefined;
  });

  describe('protocol over TCP', function () {
    it('listens on 127.0.0.1 and reports its target URL', async function () {
      await start();
      assert.equal(sim.host, '127.0.0.1');
      assert.ok(sim.port > 0);
      assert.equal(sim.url, `ascii://127.0.0.1:${sim.port}?address=01&checksum=off`);
      assert.equal(sim.device.model, 'ED-588');
      assert.ok(sim.faults instanceof FaultPlan);
    });

    it('answers the §3.1 vectors and the §3.2 silences in order on one connection', async function () {
      await start();
      const c = await connect();
      const rows = [['$01M', '!01ED-588'], ['@01', '>00FF'], ['$016', '!00FF00'], ['$012', '!01400600'],
        ['#0100FF', '>'], ['@01', '>FFFF'], ['#010000', '>'], ['#01A001', '>'], ['#01A101', '>'], ['@01', '>03FF'],
        ['#011000', '>'], ['@01', '>02FF'], ['@01A5', '>'], ['$016', '!A5FF00'], ['#010A0F', '>'], ['@01', '>0FFF'],
        ['@0100', '>'], ['$01L1', '!000000'], ['$01L0', '!000000'], ['$01C', '!01'], ['#010', '!0100000'],
        ['$01C0', '!01'], ['~01OTANK1', '!01'], ['$01M', '!01TANK1'], ['~01OED-588', '!01'], ['~010', '!0100'],
        ['#018', '?01']];
      for (const [cmd, reply] of rows) assert.equal(await c.request(cmd), reply, cmd);
      for (const cmd of ['INVALIDCOMMAND', '@02', '$02M', '~**', '#**', '$01m', '$012B7']) await assertSilent(c, cmd);
      assert.equal(sim.stats.silent, 7);
    });

    it('closes the connection without a reply on $01RS and serves new connections after the reboot', async function () {
      await start();
      const a = await connect();
      const b = await connect();
      assert.equal(await a.request('$015'), '!011');
      a.send('$01RS\r');
      assert.equal(await a.waitClose(), true);
      assert.equal(a.lines.length, 0, 'no reply to $AARS');
      assert.equal(await b.waitClose(), true, 'a reboot drops every connection');
      const c = await connect();
      assert.equal(await c.request('$015'), '!011', 'reset status set by the reboot');
      assert.equal(sim.stats.reboots, 1);
    });

    it('answers !01 to $01S1, then closes (factory reset and reboot)', async function () {
      await start({ name: 'PUMP' });
      const a = await connect();
      assert.equal(await a.request('~01OTANK'), '!01');
      assert.equal(await a.request('$01S1'), '!01');
      assert.equal(await a.waitClose(), true);
      const b = await connect();
      assert.equal(await b.request('$01M'), '!01PUMP', 'the name given at creation is the factory name');
    });

    it('answers checksummed commands when checksums are on', async function () {
      await start({ checksum: true });
      assert.equal(sim.url, `ascii://127.0.0.1:${sim.port}?address=01&checksum=on`);
      const c = await connect();
      assert.equal(await c.request('@01A1'), '>00FF2A');
      c.send('$012\r');
      assert.equal(await c.request('$012B7'), '!01400640B0', '$012 without checksum is ignored');
    });

    it('serves an ED-560 with the multi-channel set', async function () {
      await start({ model: 'ED-560', address: '05' });
      const c = await connect();
      assert.equal(await c.request('#051N0F+01.000+02.000+03.000+04.000'), '>');
      assert.equal(await c.request('$0563'), '!05+04.000');
      assert.deepEqual(sim.device.outputs, [1, 2, 3, 4]);
    });
  });

  describe('framing', function () {
    it('frames a command split into single bytes', async function () {
      await start();
      const c = await connect();
      for (const ch of '$01M\r') {
        c.send(ch);
        await sleep(5);
      }
      assert.equal(await c.next(), '!01ED-588');
    });

    it('answers several commands merged in one write, in order', async function () {
      await start();
      const c = await connect();
      c.send('@01\r$01M\rINVALID\r#0100FF\r@01\r');
      assert.equal(await c.next(), '>00FF');
      assert.equal(await c.next(), '!01ED-588');
      assert.equal(await c.next(), '>');
      assert.equal(await c.next(), '>FFFF');
      assert.equal(sim.stats.requests, 5);
      assert.equal(sim.stats.replies, 4);
    });

    it('ignores the LF of CR-LF terminated commands', async function () {
      await start();
      const c = await connect();
      c.send('@01\r\n$01M\r\n');
      assert.equal(await c.next(), '>00FF');
      assert.equal(await c.next(), '!01ED-588');
    });

    it('discards and counts a line over 255 bytes, then answers the next command', async function () {
      await start();
      const c = await connect();
      c.send('@01' + 'A'.repeat(300) + '\r@01\r');
      assert.equal(await c.next(), '>00FF');
      // an oversized line arriving in pieces
      c.send('$01' + 'B'.repeat(200));
      await sleep(20);
      c.send('C'.repeat(100));
      await sleep(20);
      c.send('D\r$01M\r');
      assert.equal(await c.next(), '!01ED-588');
      assert.equal(sim.stats.discardedFrames, 2);
      assert.equal(sim.device.outputs, 0);
    });

    it('keeps a line of exactly 255 bytes (answered with silence as an unknown command)', async function () {
      await start();
      const c = await connect();
      await assertSilent(c, '@01' + 'Z'.repeat(252));
      assert.equal(sim.stats.discardedFrames, 0);
      assert.equal(sim.stats.silent, 1);
    });
  });

  describe('connections', function () {
    it('answers 8 concurrent connections each doing 200 sequential @01 correctly', async function () {
      await start();
      const conns = await Promise.all(Array.from({ length: 8 }, () => connect()));
      const results = await Promise.all(conns.map(async (c) => {
        let ok = 0;
        for (let i = 0; i < 200; i++) if ((await c.request('@01')) === '>00FF') ok++;
        return ok;
      }));
      assert.deepEqual(results, Array(8).fill(200));
      assert.equal(sim.stats.connections, 8);
      assert.equal(sim.stats.replies, 1600);
    });

    it('answers every command of a client that stops reading for a while (backpressure, nothing lost)', async function () {
      await start();
      const c = await connect();
      const count = 50000;
      c.socket.pause();
      c.send('@01\r'.repeat(count));
      await sleep(200);
      c.socket.resume();
      let ok = 0;
      for (let i = 0; i < count; i++) if ((await c.next()) === '>00FF') ok++;
      assert.equal(ok, count);
      assert.equal(sim.stats.overflow, 0);
    });

    it('forgets a delayed reply when its client disconnects', async function () {
      await start({ faults: 'latency=100ms' });
      const c = await connect();
      c.send('@01\r');
      c.destroy();
      await c.waitClose();
      await sleep(150);
      assert.equal(sim.openConnections, 0);
      assert.equal(sim.stats.replies, 0);
    });

    it('refuses connections beyond maxConnections and counts them', async function () {
      await start({ maxConnections: 2 });
      const a = await connect();
      const b = await connect();
      const c = await connect();
      assert.equal(await c.waitClose(), true);
      assert.equal(await a.request('@01'), '>00FF');
      assert.equal(await b.request('@01'), '>00FF');
      assert.equal(sim.stats.refused, 1);
      assert.equal(sim.openConnections, 2);
    });

    it('closes idle connections after idleTimeoutMs', async function () {
      await start({ idleTimeoutMs: '100ms' });
      const c = await connect();
      assert.equal(await c.request('@01'), '>00FF');
      assert.equal(await c.waitClose(), true);
      assert.equal(sim.stats.idleClosed, 1);
    });

    it('cuts every connection on dropConnections() and keeps listening', async function () {
      await start();
      const a = await connect();
      const b = await connect();
      sim.dropConnections();
      assert.equal(await a.waitClose(), true);
      assert.equal(await b.waitClose(), true);
      const c = await connect();
      assert.equal(await c.request('@01'), '>00FF');
    });

    it('completes close() with open sockets and answers nothing after', async function () {
      await start();
      const conns = await Promise.all([connect(), connect(), connect()]);
      conns[0].send('@01');
      await sim.close();
      for (const c of conns) assert.equal(await c.waitClose(), true);
      await sim.close(); // idempotent
      await assert.rejects(RawClient.connect(sim.port), { code: 'ECONNREFUSED' });
    });

    it('rejects a port in use with NINES_ERR_PORT_IN_USE naming the port', async function () {
      await start();
      await assert.rejects(createAsciiSimulator({ port: sim.port }), (err) => {
        assert.ok(err instanceof NinesError);
        assert.equal(err.code, 'NINES_ERR_PORT_IN_USE');
        assert.match(err.message, new RegExp(String(sim.port)));
        return true;
      });
    });

    it('rejects bad options with NINES_ERR_INVALID_ARG naming the field', async function () {
      const cases = [[{ port: -1 }, /port/], [{ port: 70000 }, /port/], [{ maxConnections: 0 }, /maxConnections/],
        [{ host: '' }, /host/], [{ idleTimeoutMs: 'soon' }, /idleTimeoutMs/], [{ faults: 'drop=2' }, /drop/],
        [{ model: 'ED-1' }, /model/], [{ colour: 'red' }, /colour/]];
      for (const [opts, pattern] of cases) {
        await assert.rejects(createAsciiSimulator({ port: 0, ...opts }), (err) => {
          assert.ok(err instanceof NinesError);
          assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
          assert.match(err.message, pattern);
          return true;
        });
      }
    });
  });

  describe('faults', function () {
    it('adds latency: a 300 ms latency makes the reply take at least 250 ms', async function () {
      await start({ faults: 'latency=300ms' });
      const c = await connect();
      const t0 = performance.now();
      assert.equal(await c.request('@01'), '>00FF');
      assert.ok(performance.now() - t0 >= 250);
    });

    it('serves a connection one command at a time: three pipelined 60 ms commands take at least 150 ms, in order', async function () {
      await start({ faults: 'latency=60ms' });
      const c = await connect();
      const t0 = performance.now();
      c.send('#0100FF\r@01\r$01M\r');
      assert.equal(await c.next(), '>');
      assert.equal(await c.next(), '>FFFF');
      assert.equal(await c.next(), '!01ED-588');
      assert.ok(performance.now() - t0 >= 150);
    });

    it('drops replies and keeps the connection usable', async function () {
      await start({ faults: 'drop=1' });
      const c = await connect();
      assert.equal(await c.request('@01', 200), null);
      assert.equal(sim.stats.dropped, 1);
      sim.faults.clear();
      assert.equal(await c.request('$01M'), '!01ED-588');
    });

    it('sends junk instead of a reply', async function () {
      await start({ faults: 'garbage=1,seed=3' });
      const c = await connect();
      const junk = await c.request('@01');
      assert.ok(junk !== null && junk.length >= 4 && junk.length <= 16, JSON.stringify(junk));
      assert.ok(!'>!?'.includes(junk[0]));
      assert.equal(sim.stats.garbage, 1);
    });

    it('closes the connection instead of answering', async function () {
      await start({ faults: 'close=1' });
      const c = await connect();
      c.send('@01\r');
      assert.equal(await c.waitClose(), true);
      assert.equal(c.lines.length, 0);
      assert.equal(sim.stats.closed, 1);
      sim.faults.clear();
      const d = await connect();
      assert.equal(await d.request('@01'), '>00FF');
    });

    it('refuses connections while refuse is set', async function () {
      await start({ faults: 'refuse' });
      const c = await connect();
      assert.equal(await c.waitClose(), true);
      assert.equal(sim.stats.refused, 1);
      sim.faults.refuse = false;
      const d = await connect();
      assert.equal(await d.request('@01'), '>00FF');
    });

    it('holds every reply during a stall: replies arrive only after it ends', async function () {
      await start();
      const a = await connect();
      const b = await connect();
      assert.equal(await a.request('@01'), '>00FF');
      sim.faults.stall(400);
      const t0 = performance.now();
      const [ra, rb] = await Promise.all([a.request('@01'), b.request('$01M')]);
      const elapsed = performance.now() - t0;
      assert.equal(ra, '>00FF');
      assert.equal(rb, '!01ED-588');
      assert.ok(elapsed >= 350, `replies after ${elapsed} ms`);
      assert.equal(await a.request('@01'), '>00FF', 'answered normally after the stall');
    });

    it('holds a reply already delayed when a stall starts', async function () {
      await start({ faults: 'latency=50ms' });
      const c = await connect();
      const t0 = performance.now();
      c.send('@01\r');
      sim.faults.stall(400);
      assert.equal(await c.next(), '>00FF');
      assert.ok(performance.now() - t0 >= 350);
    });

    it('applies a scheduled stall from the simulator start', async function () {
      const t0 = performance.now();
      await start({ faults: 'stall=400ms@0ms' });
      const c = await connect();
      assert.equal(await c.request('@01'), '>00FF');
      // the stall began when the simulator started listening, after t0
      assert.ok(performance.now() - t0 >= 350);
      const t1 = performance.now();
      assert.equal(await c.request('@01'), '>00FF');
      assert.ok(sim.faults.holdMs() === 0 && performance.now() - t1 < WAIT_MS);
    });
  });

  describe('throughput', function () {
    it('measures closed-loop @01 requests per second on one connection (reported, not asserted)', async function () {
      await start();
      const c = await connect();
      const socket = c.socket;
      socket.removeAllListeners('data');
      const limitMs = 1000;
      const maxRequests = 1000000;
      // A callback loop (no promise or timer per request), so the figure is the simulator's, not the test client's.
      const { n, ms } = await new Promise((resolve) => {
        let count = 0;
        let pending = '';
        const t0 = performance.now();
        socket.on('data', (d) => {
          pending += d.toString('latin1');
          let i;
          while ((i = pending.indexOf('\r')) >= 0) {
            assert.equal(pending.slice(0, i), '>00FF');
            pending = pending.slice(i + 1);
            count++;
            const ms = performance.now() - t0;
            if (count >= maxRequests || ms >= limitMs) return resolve({ n: count, ms });
            socket.write('@01\r');
          }
        });
        socket.write('@01\r');
      });
      console.log(`      closed loop, one connection, client in the same process: ${Math.round(n / (ms / 1000))} req/s (${n} requests)`);
      assert.equal(sim.stats.replies, n);
    });
  });
});
