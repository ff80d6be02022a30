'use strict';

// Story (issue 12, item 5): a reply that comes after its request's timeout is never given to another
// request on an RTU line. A fake serial port, through the client's loadSerialPort seam, answers every
// request, and its replies name the request they answer: an FC3 read of register k returns the value k,
// an FC6 write of k to register k echoes k. The test asks for register k in its k-th request, so a reply
// whose number is not the request's is a mis-correlated reply. A few replies come late: after the
// request's timeout plus 50 ms (the old fixed drain), which is where the old client went wrong.

const assert = require('node:assert/strict');
const { EventEmitter } = require('node:events');
const { createClient } = require('../../gateway/drivers/modbus');
const { rtuFrame, rtuRequestLength } = require('../../gateway/drivers/modbus/frame');
const { registersPdu } = require('./helpers');

/** A small seeded PRNG (mulberry32): the same late replies on every run. @param {number} seed @returns {() => number} */
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

/**
 * A SerialPort class for the loadSerialPort seam: a device that answers each request frame after
 * delayMs(index) ms (null: never) with the normal reply (FC3: register values = their addresses;
 * FC6: the echo). send(bytes, ms) puts other bytes on the line (noise, foreign frames).
 * @param {(index: number) => number|null} delayMs
 * @returns {{SerialPort: Function, stats: {requests: number, late: number, maxGapMs: number},
 *   writes: bigint[], send: (bytes: Buffer, ms: number) => void, close: () => void}}
 */
function numberingPort (delayMs) {
  const stats = { requests: 0, late: 0, maxGapMs: 0 };
  /** hrtime of each request written */
  const writes = [];
  let lastReplyNs = 0n;
  let open = null;
  const timers = new Set();
  const send = (bytes, ms) => {
    const t = setTimeout(() => {
      timers.delete(t);
      if (open === null || !open.isOpen) return;
      lastReplyNs = process.hrtime.bigint();
      open.emit('data', bytes);
    }, ms);
    timers.add(t);
  };
  class FakePort extends EventEmitter {
    constructor (opts) {
      super();
      this.path = opts.path;
      this.isOpen = false;
    }

    open (cb) { setImmediate(() => { this.isOpen = true; open = this; cb(null); }); }

    write (frame) {
      assert.equal(rtuRequestLength(frame), frame.length, 'one whole request frame per write');
      const now = process.hrtime.bigint();
      writes.push(now);
      const index = stats.requests++;
      // How long the line stayed idle between the last reply and this request
      if (lastReplyNs !== 0n) stats.maxGapMs = Math.max(stats.maxGapMs, Number(now - lastReplyNs) / 1e6);
      const pdu = frame.subarray(1, frame.length - 2);
      const ms = delayMs(index);
      if (ms !== null) send(rtuFrame(frame[0], pdu[0] === 3 ? registersPdu(pdu) : Buffer.from(pdu)), ms);
    }

    drain (cb) { setImmediate(cb); }

    close (cb) {
      this.isOpen = false;
      setImmediate(() => { this.emit('close'); if (cb) cb(null); });
    }
  }
  return {
    SerialPort: FakePort,
    stats,
    writes,
    send,
    close: () => { for (const t of timers) clearTimeout(t); timers.clear(); }
  };
}

/**
 * Runs `count` requests in a closed loop, request k naming k, and sorts the outcomes.
 * @param {object} client
 * @param {number} count
 * @param {(k: number) => object} opOf the k-th op
 * @param {(reply: object) => number} numberOf the number the reply carries
 * @returns {Promise<{ok: number, wrong: number, errors: Record<string, number>}>}
 */
async function closedLoop (client, count, opOf, numberOf) {
  const out = { ok: 0, wrong: 0, errors: {} };
  for (let k = 0; k < count; k++) {
    try {
      const reply = await client.request(opOf(k));
      if (numberOf(reply) === k) out.ok++;
      else out.wrong++;
    } catch (err) {
      out.errors[err.code] = (out.errors[err.code] || 0) + 1;
    }
  }
  return out;
}

/**
 * closedLoop() through submit(), as the scheduler's lanes and a device's connections drive a client:
 * each handler hands over the next request from within onReply or onError, synchronously.
 * @returns {Promise<{ok: number, wrong: number, errors: Record<string, number>}>}
 */
function submitLoop (client, count, opOf, numberOf) {
  const out = { ok: 0, wrong: 0, errors: {} };
  return new Promise((resolve) => {
    let k = 0;
    const next = () => {
      if (k === count) { resolve(out); return; }
      const mine = k++;
      client.submit(opOf(mine), undefined, {
        onReply (reply) {
          if (numberOf(reply) === mine) out.ok++;
          else out.wrong++;
          next();
        },
        onError (err) {
          out.errors[err.code] = (out.errors[err.code] || 0) + 1;
          next();
        }
      });
    };
    next();
  });
}

describe('modbus client (RTU): late replies never reach another request (numbered replies through the serial-port seam)', function () {
  this.timeout(60000);
  const COUNT = 2000;
  const TIMEOUT_MS = 100;
  let port, client;

  afterEach(async () => {
    if (client) await client.close();
    if (port) port.close();
    client = null;
    port = null;
  });

  /**
   * A share of the replies come 55-80 ms after the request's timeout, past the old 50 ms drain but
   * within twice the timeout; the rest within a millisecond or so.
   * @param {number} seed
   * @param {number} share of late replies
   * @param {number} timeoutMs
   */
  function lateScript (seed, share, timeoutMs) {
    const random = prng(seed);
    return (index) => {
      if (random() < share) {
        port.stats.late++;
        return timeoutMs + 55 + Math.floor(random() * 25);
      }
      return random() < 0.5 ? 0 : 1;
    };
  }

  async function start (delayMs, opts) {
    port = numberingPort(delayMs);
    client = createClient('modbus+rtu:///dev/ttyNINES-late?baudRate=115200&unitId=1', { timeoutMs: TIMEOUT_MS, loadSerialPort: () => port.SerialPort, ...opts });
    await client.connect();
  }

  it('FC3 reads of identical shape: no reply later than timeout + 50 ms is taken by the next read (default quiet period)', async () => {
    await start(lateScript(12, 0.015, TIMEOUT_MS));
    const r = await closedLoop(client, COUNT, (k) => ({ fc: 3, address: k, quantity: 1 }), (reply) => reply.data[0]);
    const s = client.stats;
    assert.equal(r.wrong, 0, `${r.wrong} of ${COUNT} reads got another read's reply (${JSON.stringify(r)}, late ${port.stats.late})`);
    // The scenario really happened: replies came late, and were counted and dropped
    assert.ok(port.stats.late >= 20, `late replies scripted: ${port.stats.late}`);
    assert.equal(s.timeouts, r.errors.NINES_ERR_REPLY_TIMEOUT);
    assert.ok(s.lateReplies >= port.stats.late, `lateReplies ${s.lateReplies}, late ${port.stats.late}`);
    assert.deepEqual(Object.keys(r.errors), ['NINES_ERR_REPLY_TIMEOUT']);
    // Each late reply costs its own request and at most the one queued behind the quiet line
    assert.ok(r.ok >= COUNT - 2 * port.stats.late, JSON.stringify(r));
  });

  it('FC3 reads through submit(), each handler handing over the next request from within its callback: none takes another\'s reply (issue 18)', async () => {
    // The scheduler's way: a timeout's onError sends the next request at once. It must find the line
    // held for the late reply, and a request failed unsent after the quiet period must not let two
    // requests onto the line
    await start(lateScript(12, 0.03, TIMEOUT_MS));
    const r = await submitLoop(client, 1000, (k) => ({ fc: 3, address: k, quantity: 1 }), (reply) => reply.data[0]);
    assert.equal(r.wrong, 0, `${r.wrong} of 1000 reads got another read's reply (${JSON.stringify(r)}, late ${port.stats.late})`);
    assert.ok(port.stats.late >= 15, `late replies scripted: ${port.stats.late}`);
    assert.deepEqual(Object.keys(r.errors), ['NINES_ERR_REPLY_TIMEOUT']);
    assert.ok(r.ok >= 1000 - 2 * port.stats.late, JSON.stringify(r));
  });

  it('FC6 writes: a write reply that echoes another request is dropped, even with no quiet period at all', async () => {
    // quietMs 0: only the echo check guards. The echoed address and value name the write they answer.
    // A short timeout: here timing does not matter, and it keeps the test quick
    await start(lateScript(34, 0.03, 30), { quietMs: 0, timeoutMs: 30 });
    const r = await closedLoop(client, 1000, (k) => ({ fc: 6, address: k, value: k }), (reply) => reply.data);
    assert.equal(r.wrong, 0, JSON.stringify(r));
    // An echo for another write is late, not a bad reply to this one: nothing but timeouts fails
    assert.deepEqual(Object.keys(r.errors), ['NINES_ERR_REPLY_TIMEOUT'], JSON.stringify(r));
    assert.ok(port.stats.late >= 20, `late replies scripted: ${port.stats.late}`);
    // Counted and dropped (a late reply right behind another reply, on an idle line, counts with it as one burst)
    assert.ok(client.stats.lateReplies >= port.stats.late / 2, JSON.stringify({ r, stats: client.stats, port: port.stats }));
  });

  it('keeps its pace when nothing times out: no quiet period without a timeout', async () => {
    await start(() => 0);
    const r = await closedLoop(client, 300, (k) => ({ fc: 3, address: k, quantity: 1 }), (reply) => reply.data[0]);
    assert.equal(r.ok, 300);
    // Only t3.5 (1.75 ms at 115200 baud, a 2 ms timer) between a reply and the next request; a quiet
    // period would be the 100 ms timeout
    assert.ok(port.stats.maxGapMs < 50, `longest idle line ${port.stats.maxGapMs.toFixed(1)} ms`);
  });
});

describe('modbus client (RTU): the quiet period after a timeout', function () {
  let port, client;
  const ms = (ns) => Number(ns) / 1e6;

  afterEach(async () => {
    if (client) await client.close();
    if (port) port.close();
    client = null;
    port = null;
  });

  async function start (delayMs, opts) {
    port = numberingPort(delayMs);
    client = createClient('modbus+rtu:///dev/ttyNINES-quiet?baudRate=115200&unitId=1', { loadSerialPort: () => port.SerialPort, ...opts });
    await client.connect();
  }

  it('restarts the quiet period on every byte received in it, and drops those bytes as late', async () => {
    // Request 0 is never answered; noise (not a frame of unit 1) arrives 40 and 90 ms after its timeout
    await start((i) => (i === 0 ? null : 0), { timeoutMs: 50, quietMs: 100 });
    const t0 = process.hrtime.bigint();
    const first = client.request('3:0:1');
    port.send(Buffer.from([0x09, 0x03, 0x02, 0x00]), 90);
    port.send(Buffer.from([0x09]), 140);
    assert.equal((await first.catch((e) => e)).code, 'NINES_ERR_REPLY_TIMEOUT');
    assert.deepEqual((await client.request('3:7:1', { timeoutMs: 2000 })).data, [7]);
    // written only after 100 ms of silence since the last noise byte (140 ms after request 0)
    assert.ok(ms(port.writes[1] - t0) >= 235, `second request written ${ms(port.writes[1] - t0).toFixed(1)} ms after the first`);
    assert.ok(client.stats.lateReplies >= 1);
  });

  it('ends the quiet period early when the owed reply itself arrives', async () => {
    await start((i) => (i === 0 ? 80 : 0), { timeoutMs: 50, quietMs: 5000 });
    const err = await client.request('3:0:1').catch((e) => e);
    assert.equal(err.code, 'NINES_ERR_REPLY_TIMEOUT');
    assert.deepEqual((await client.request('3:1:1', { timeoutMs: 2000 })).data, [1]);
    // at the late reply (80 ms) plus t3.5, not after 5 s
    assert.ok(ms(port.writes[1] - port.writes[0]) < 1000, `${ms(port.writes[1] - port.writes[0]).toFixed(1)} ms`);
    assert.equal(client.stats.lateReplies, 1);
  });

  it('does not end it for a late frame that cannot answer the timed-out request', async () => {
    // Request 0 (3:0:1) is unanswered; a read reply of two registers (not one) comes 20 ms after its timeout
    await start((i) => (i === 0 ? null : 0), { timeoutMs: 50, quietMs: 150 });
    port.send(rtuFrame(1, Buffer.from([3, 4, 0, 1, 0, 2])), 70);
    assert.equal((await client.request('3:0:1').catch((e) => e)).code, 'NINES_ERR_REPLY_TIMEOUT');
    assert.deepEqual((await client.request('3:1:1', { timeoutMs: 2000 })).data, [1]);
    assert.ok(ms(port.writes[1] - port.writes[0]) >= 215, `${ms(port.writes[1] - port.writes[0]).toFixed(1)} ms`);
  });

  it('fails a request that waited out the quiet period with less than half its timeout left, without writing it', async () => {
    await start((i) => (i === 0 ? null : 0), { timeoutMs: 100 });
    const first = client.request('3:0:1').catch((e) => e);
    const waits = [];
    // In a closed loop, the next request is asked right after the timeout: it waits the quiet period
    // (the 100 ms timeout) and would be written with nothing left of its own 100 ms
    const second = first.then(() => client.request('3:2:1').catch((e) => e));
    waits.push(await first, await second);
    assert.equal(waits[1].code, 'NINES_ERR_REPLY_TIMEOUT');
    assert.equal(waits[1].details.quietLine, true);
    assert.equal(waits[1].sentNs, undefined);
    assert.equal(port.stats.requests, 1, 'only the first request was written');
    // The next one gets the quiet line with its whole timeout
    assert.deepEqual((await client.request('3:3:1')).data, [3]);
    assert.equal(client.stats.timeouts, 2);
  });
});
