'use strict';

/**
 * The embedded broker's limits (issue 18, major 4): a packet over mqtt.embedded.maxPacketSize
 * closes its connection before its body is read, so a 200 MB PUBLISH costs the gateway's process
 * nothing; connections past mqtt.embedded.maxClients are closed at accept and counted. The flood
 * runs against a real `nines run` in its own process, whose RSS is read from /proc.
 */

const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const mqtt = require('mqtt');
const { PacketSizeScanner, GuardedConnection } = require('../../gateway/runtime/mqtt/packet-size-guard');
const { startEmbeddedBroker } = require('../../gateway/runtime/mqtt/broker');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');

const { NINES_BIN } = require('../helpers/nines-cli');
const MB = 1000 * 1000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** MQTT's Remaining Length: 7 bits a byte, low first, the top bit saying more follows */
function remainingLength (n) {
  const out = [];
  do { let b = n % 128; n = Math.floor(n / 128); if (n > 0) b |= 0x80; out.push(b); } while (n > 0);
  return out;
}

/** @param {string} s @returns {Buffer} an MQTT string: 2-byte length, UTF-8 */
function mqttString (s) {
  const b = Buffer.alloc(2 + Buffer.byteLength(s));
  b.writeUInt16BE(Buffer.byteLength(s), 0);
  b.write(s, 2);
  return b;
}

/** CONNECT, MQTT 3.1.1, clean session, keepalive 60 s */
function CONNECT (clientId) {
  const body = Buffer.concat([mqttString('MQTT'), Buffer.from([4, 0x02, 0, 60]), mqttString(clientId)]);
  return Buffer.concat([Buffer.from([0x10, ...remainingLength(body.length)]), body]);
}

/** The fixed header and topic of a QoS 0 PUBLISH whose payload is `payloadBytes` long */
function publishHead (topic, payloadBytes) {
  const t = mqttString(topic);
  return Buffer.concat([Buffer.from([0x30, ...remainingLength(t.length + payloadBytes)]), t]);
}

/** A whole QoS 0 PUBLISH */
const PUBLISH = (topic, payloadBytes) => Buffer.concat([publishHead(topic, payloadBytes), Buffer.alloc(payloadBytes)]);

/** VmRSS of a process, bytes */
function rssOf (pid) {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m[1]) * 1024;
}

/**
 * Streams a PUBLISH announcing `payloadBytes` from a raw socket: CONNECT, the header, then one
 * 64 KiB buffer written again and again (the test process holds no more than that), pacing on
 * back-pressure, until all is sent, the broker closes the connection, or timeoutMs.
 * @returns {Promise<{sent: number, closedByBroker: boolean, ms: number}>}
 */
function flood (port, clientId, payloadBytes, timeoutMs) {
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let sent = 0;
    let done = false;
    const finish = (closedByBroker) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ sent, closedByBroker, ms: Date.now() - started });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    // the test closes the socket only after finish(): a close before it is the broker's
    socket.on('error', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('data', () => {}); // the CONNACK
    const pump = () => {
      while (!done && sent < payloadBytes) {
        const n = Math.min(chunk.length, payloadBytes - sent);
        sent += n;
        if (!socket.write(n === chunk.length ? chunk : chunk.subarray(0, n))) { socket.once('drain', pump); return; }
      }
      if (!done && sent >= payloadBytes) {
        // all of it went: the broker took the packet whole; give it a moment to say otherwise
        setTimeout(() => finish(false), 500);
      }
    };
    socket.once('connect', () => {
      socket.write(CONNECT(clientId));
      socket.write(publishHead('flood/x', payloadBytes));
      pump();
    });
  });
}

describe('gateway/runtime/mqtt/packet-size-guard: the packet size scanner', () => {
  const packets = [
    CONNECT('a'),
    PUBLISH('t', 200), // 2-byte length
    PUBLISH('t', 20000), // 3-byte length
    Buffer.from([0xc0, 0]) // PINGREQ
  ];
  const stream = Buffer.concat(packets);

  it('lets every packet within the limit through, however the stream is split', () => {
    for (const step of [1, 2, 3, 7, 100, stream.length]) {
      const s = new PacketSizeScanner(20100);
      for (let i = 0; i < stream.length; i += step) assert.equal(s.feed(stream.subarray(i, i + step)), null, `split every ${step}`);
    }
  });

  it('names the first packet over the limit, with its whole size, as soon as its length is read', () => {
    const big = packets[2];
    for (const step of [1, 5, stream.length]) {
      const s = new PacketSizeScanner(big.length - 1);
      let got = null;
      let at = 0;
      for (let i = 0; i < stream.length && got === null; i += step) { got = s.feed(stream.subarray(i, i + step)); at = i; }
      assert.equal(got, big.length, `split every ${step}`);
      // found before the body: within the big packet's first few bytes (one step of slack)
      assert.ok(at < packets[0].length + packets[1].length + 4 + step, `split every ${step}: found at ${at}`);
    }
  });

  it('calls a Remaining Length of more than 4 bytes too large', () => {
    assert.equal(new PacketSizeScanner(1024).feed(Buffer.from([0x30, 0xff, 0xff, 0xff, 0xff, 0x01])), Infinity);
  });
});

describe('gateway/runtime/mqtt/packet-size-guard: the connection aedes sees', () => {
  /** A socket stand-in that records what is done to it */
  function fakeSocket () {
    const { EventEmitter } = require('node:events');
    const s = new EventEmitter();
    s.calls = [];
    s.remoteAddress = '127.0.0.9';
    s.cork = () => s.calls.push('cork');
    s.uncork = () => s.calls.push('uncork');
    s.write = (chunk) => { s.calls.push(`write ${chunk}`); return true; };
    s.pause = () => s.calls.push('pause');
    s.resume = () => {};
    s.destroy = () => s.calls.push('destroy');
    return s;
  }

  it('hands a corked run of writes (one MQTT packet in pieces, mqtt-packet writeToStream) to the socket under one cork', async () => {
    // written piece by piece, Nagle's algorithm held the later pieces until the client's delayed
    // ACK: QoS 1 through the broker fell from about 25,000 to 716 messages/s
    const socket = fakeSocket();
    const conn = new GuardedConnection(socket, { maxPacketBytes: 1024, onTooLarge: () => {} });
    conn.cork();
    conn.write('a');
    conn.write('b');
    conn.write('c');
    await new Promise((resolve) => process.nextTick(() => { conn.uncork(); resolve(); }));
    assert.deepEqual(socket.calls, ['cork', 'write a', 'write b', 'write c', 'uncork']);
    assert.equal(conn.remoteAddress, '127.0.0.9');
  });

  it('destroys the socket, once, on the first packet over the limit, passing nothing of it on', () => {
    const socket = fakeSocket();
    const sizes = [];
    const conn = new GuardedConnection(socket, { maxPacketBytes: 1024, onTooLarge: (n) => sizes.push(n) });
    const passed = [];
    conn.on('data', (d) => passed.push(d.length));
    conn.on('error', () => {});
    socket.emit('data', PUBLISH('t', 10));
    socket.emit('data', publishHead('t', 5000));
    assert.deepEqual(sizes, [5006]);
    assert.ok(passed.reduce((n, len) => n + len, 0) <= 15, `passed on: ${passed}`);
    assert.ok(socket.calls.includes('destroy'));
    assert.ok(conn.destroyed);
  });
});

describe('gateway/runtime/mqtt/broker: packet size and client limits', function () {
  this.timeout(20000);
  let broker;
  const refusals = [];
  afterEach(async () => { if (broker) await broker.close(); broker = null; refusals.length = 0; });

  it('a packet over maxPacketBytes closes its connection, counted and reported; one within passes', async () => {
    broker = await startEmbeddedBroker({ port: 0, maxPacketBytes: 4096, onRefused: (r) => refusals.push(r) });
    const ok = await flood(broker.port, 'small', 4000, 5000);
    assert.equal(ok.closedByBroker, false, 'a packet within the limit is taken');
    const big = await flood(broker.port, 'big', 5000, 5000);
    assert.equal(big.closedByBroker, true);
    assert.equal(broker.refused()['packet-too-large'], 1);
    // the client id is named when aedes read the CONNECT before the PUBLISH's header came
    await broker.close(); // flushes the rate-limited report
    broker = null;
    assert.match(refusals.find((r) => r.reason === 'packet-too-large').message, /^refused a packet of 5012 bytes from (?:client "big"|a client) at 127\.0\.0\.1: over the limit of 4096 \(mqtt\.embedded\.maxPacketSize\); connection closed$/);
  });

  it('the gateway\'s own client is not limited: its publish over maxPacketBytes arrives', async () => {
    broker = await startEmbeddedBroker({ port: 0, maxPacketBytes: 4096, gateway: { clientId: 'nines-g', prefix: 'nines' } });
    const sub = await mqtt.connectAsync(broker.url, { clientId: 'reader', reconnectPeriod: 0 });
    const gw = await mqtt.connectAsync(broker.url, { clientId: 'nines-g', ...broker.gatewayAuth, reconnectPeriod: 0 });
    try {
      await sub.subscribeAsync('nines/#');
      const got = new Promise((resolve) => sub.once('message', (topic, payload) => resolve(payload.length)));
      const cut = new Promise((resolve) => gw.once('close', () => resolve('the gateway\'s connection was closed')));
      gw.publish('nines/g/big/latency', Buffer.alloc(10000), { qos: 1 });
      assert.equal(await Promise.race([got, cut, sleep(5000).then(() => 'nothing within 5 s')]), 10000);
      assert.equal(broker.refused()['packet-too-large'], 0);
    } finally {
      await Promise.all([sub.endAsync(true), gw.endAsync(true)]);
    }
  });

  it('connections past maxClients are closed at accept and counted', async () => {
    broker = await startEmbeddedBroker({ port: 0, maxClients: 2 });
    const open = [];
    const closed = [];
    for (let i = 0; i < 4; i++) {
      const s = net.connect(broker.port, '127.0.0.1');
      s.on('error', () => {});
      const c = new Promise((resolve) => s.once('close', () => resolve(i)));
      c.then((n) => closed.push(n));
      await new Promise((resolve) => s.once('connect', resolve));
      open.push(s);
    }
    const deadline = Date.now() + 5000;
    while (closed.length < 2 && Date.now() < deadline) await sleep(20);
    assert.deepEqual(closed.sort(), [2, 3], 'the third and fourth connections were closed');
    assert.equal(broker.refused()['too-many-clients'], 2);
    assert.equal(broker.clientCount(), 2);
    for (const s of open) s.destroy();
  });
});

describe('nines run: a 200 MB publish to the embedded broker is refused and costs no memory', function () {
  this.timeout(120000);
  let sim, child, port, dir;
  let stderr = '';

  before(async () => {
    sim = await createModbusTcpSimulator({ port: 0 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-flood-'));
    const file = path.join(dir, 'gateway.yaml');
    // JSON is YAML
    fs.writeFileSync(file, JSON.stringify({
      gateway: { id: 'flood', interval: '1s', workers: 1 },
      mqtt: { embedded: { port: 0 } },
      devices: { plc: { target: sim.url } },
      jobs: [{ name: 'hr', device: 'plc', read: { fc: 3, address: 0, quantity: 4 }, rate: '20/s' }]
    }));
    child = spawn(process.execPath, [NINES_BIN, 'run', '--quiet', file], { stdio: ['ignore', 'ignore', 'pipe'] });
    // nines run says where its broker listens on stderr
    port = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`nines run did not start its broker within 15 s: ${stderr}`)), 15000);
      child.stderr.on('data', (d) => {
        stderr += d;
        const m = /embedded MQTT broker mqtt:\/\/127\.0\.0\.1:(\d+)/.exec(stderr);
        if (m) { clearTimeout(timer); resolve(Number(m[1])); }
      });
      child.once('exit', (code) => reject(new Error(`nines run exited (${code}): ${stderr}`)));
    });
  });

  after(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(10000)]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    if (sim) await sim.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Settles, then floods from `clients` sockets at once while sampling the child's RSS every 20 ms */
  async function attack (clients) {
    await sleep(1000); // past start-up's allocations
    const before = rssOf(child.pid);
    let peak = before;
    const sampler = setInterval(() => { peak = Math.max(peak, rssOf(child.pid)); }, 20);
    const results = await Promise.all(Array.from({ length: clients }, (_, i) => flood(port, `attacker-${i}`, 200 * MB, 30000)));
    await sleep(500); // whatever the broker still holds shows now
    clearInterval(sampler);
    peak = Math.max(peak, rssOf(child.pid));
    return { before, peak, results };
  }

  for (const clients of [1, 4]) {
    it(`${clients} client${clients > 1 ? 's' : ''} publishing 200 MB each: every connection closed, RSS within 50 MB of before`, async () => {
      const { before, peak, results } = await attack(clients);
      const grew = peak - before;
      console.log(`      RSS ${(before / MB).toFixed(1)} MB before, peak ${(peak / MB).toFixed(1)} MB (+${(grew / MB).toFixed(1)} MB); sent before the close: ${results.map((r) => `${(r.sent / MB).toFixed(2)} MB in ${r.ms} ms`).join(', ')}`);
      for (const r of results) {
        assert.equal(r.closedByBroker, true, `the broker closed the connection (${r.sent} bytes sent in ${r.ms} ms)`);
        assert.ok(r.sent < 200 * MB, `closed before the whole packet was sent (${r.sent} bytes)`);
      }
      assert.ok(grew < 50 * MB, `RSS grew ${(grew / MB).toFixed(1)} MB (from ${(before / MB).toFixed(1)} MB)`);
      assert.equal(child.exitCode, null, `the gateway still runs (stderr: ${stderr})`);
    });
  }
});
