'use strict';

const assert = require('node:assert/strict');
const { NinesError, CODES, fromJSON, toNinesError, isCode } = require('../../gateway/base/errors');
const { parseDuration, parseRate, formatNs } = require('../../gateway/base/quantities');
const { Backoff } = require('../../gateway/base/backoff');
const { ValueGate, replyValues, changed } = require('../../gateway/values/gate');

describe('errors', () => {
  it('round-trips through JSON keeping code and details, as errors do across worker threads', () => {
    const e = new NinesError('NINES_ERR_REPLY_TIMEOUT', 'no reply to @01 within 100 ms', { command: '@01' });
    const back = fromJSON(JSON.parse(JSON.stringify(e)));
    assert.ok(back instanceof NinesError);
    assert.equal(back.code, 'NINES_ERR_REPLY_TIMEOUT');
    assert.deepEqual(back.details, { command: '@01' });
    assert.equal(back.message, e.message);
  });

  it('wraps foreign errors with a code and keeps the system code as the cause', () => {
    const sys = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const w = toNinesError(sys, 'NINES_ERR_CONNECT_FAILED');
    assert.equal(w.code, 'NINES_ERR_CONNECT_FAILED');
    assert.equal(w.details.cause, 'ECONNREFUSED');
    const own = new NinesError('NINES_ERR_CLOSED', 'closed');
    assert.equal(toNinesError(own), own);
    assert.ok(isCode(own, 'NINES_ERR_CLOSED'));
    assert.equal(fromJSON(null).code, 'NINES_ERR_WORKER');
  });

  it('every code has a status text short enough for a Node-RED status dot and a meaning', () => {
    for (const [code, v] of Object.entries(CODES)) {
      assert.match(code, /^NINES_ERR_[A-Z_]+$/);
      assert.ok(v.status.length > 0 && v.status.length <= 20, `${code} status "${v.status}"`);
      assert.ok(v.meaning.length > 20, code);
    }
  });
});

describe('units', () => {
  it('parses durations in ns, us, ms, s, m, h and plain numbers as ms', () => {
    assert.equal(parseDuration('250ms'), 250);
    assert.equal(parseDuration('1.5s'), 1500);
    assert.equal(parseDuration('10us'), 0.01);
    assert.equal(parseDuration('2m'), 120000);
    assert.equal(parseDuration('1h'), 3600000);
    assert.equal(parseDuration(40), 40);
    for (const bad of ['fast', '-1s', '', null, NaN, Infinity, '1 parsec']) {
      assert.throws(() => parseDuration(bad, 'timeout'), (e) => e.code === 'NINES_ERR_INVALID_ARG' && /timeout/.test(e.message), String(bad));
    }
  });

  it('parses rates per second, minute and hour, and "max" as a closed loop', () => {
    assert.equal(parseRate('1000/s'), 1000);
    assert.equal(parseRate('60/min'), 1);
    assert.equal(parseRate(250), 250);
    assert.equal(parseRate('max'), Infinity);
    for (const bad of ['0/s', -5, 'lots', '2000000/s']) assert.throws(() => parseRate(bad), { code: 'NINES_ERR_INVALID_ARG' });
  });

  it('parses a frequency in Hz or kHz and a period between requests as a rate', () => {
    assert.equal(parseRate('10Hz'), 10);
    assert.equal(parseRate('10 hz'), 10);
    assert.equal(parseRate('0.5Hz'), 0.5);
    assert.equal(parseRate('1kHz'), 1000);
    assert.equal(parseRate('100ms'), 10);
    assert.equal(parseRate('100 ms'), 10);
    assert.equal(parseRate('2s'), 0.5);
    assert.equal(parseRate('10us'), 100000);
    assert.equal(parseRate('1min'), 1 / 60);
    assert.equal(parseRate('1000/min'), 1000 / 60);
    // a zero period or frequency, a rate over the cap and mixed forms are refused, naming the forms
    for (const bad of ['0ms', '0Hz', '0.5us', '2000kHz', '10Hz/s', '10/ms', 'Hz', '-100ms']) {
      assert.throws(() => parseRate(bad, 'rate'), (e) => e.code === 'NINES_ERR_INVALID_ARG' && /"10Hz".*"100ms"/.test(e.message), bad);
    }
  });

  it('formats nanoseconds with a unit', () => {
    assert.equal(formatNs(512), '512ns');
    assert.equal(formatNs(51200), '51.2µs');
    assert.equal(formatNs(3.45e6), '3.45ms');
    assert.equal(formatNs(2e9), '2.00s');
  });
});

describe('backoff', () => {
  it('says which jitter it implements: equal jitter, never below half the ceiling (full jitter could be 0)', () => {
    const src = require('node:fs').readFileSync(require.resolve('../../gateway/base/backoff'), 'utf8');
    assert.match(src, /with "equal jitter"/);
    assert.doesNotMatch(src, /with "full jitter"/);
    assert.equal(new Backoff({ initialMs: 100, random: () => 0 }).next(), 50);
  });

  it('grows exponentially with equal jitter in [ceiling/2, ceiling], capped, and resets', () => {
    const lo = new Backoff({ initialMs: 100, maxMs: 1000, random: () => 0 });
    assert.deepEqual([lo.next(), lo.next(), lo.next(), lo.next(), lo.next()], [50, 100, 200, 400, 500]);
    const hi = new Backoff({ initialMs: 100, maxMs: 1000, random: () => 1 });
    assert.deepEqual([hi.next(), hi.next(), hi.next(), hi.next(), hi.next()], [100, 200, 400, 800, 1000]);
    hi.reset();
    assert.equal(hi.next(), 100);
  });

  it('spreads a fleet: 1,000 clients never retry in lockstep', () => {
    const delays = new Set(Array.from({ length: 1000 }, () => new Backoff({ initialMs: 1000 }).next()));
    assert.ok(delays.size > 300, `${delays.size} distinct first delays`);
  });
});

describe('value gate', () => {
  const collect = (opts) => {
    const out = [];
    let now = 0;
    const gate = new ValueGate({ ...opts, nowMs: () => now, emit: (v) => out.push(v) });
    return { gate, out, at: (t) => { now = t; } };
  };

  it('on-change emits the first value and changes beyond the deadband only', () => {
    const { gate, out } = collect({ mode: 'on-change', deadband: 0.5 });
    for (const v of [[10, 1], [10.4, 1], [10.6, 1], [10.6, 1], [10.6, 0]]) gate.offer(v);
    assert.deepEqual(out, [[10, 1], [10.6, 1], [10.6, 0]]);
  });

  it('every n emits each n-th poll; off emits nothing', () => {
    const e = collect({ mode: 'every', n: 3 });
    for (let i = 1; i <= 9; i++) e.gate.offer(i);
    assert.deepEqual(e.out, [3, 6, 9]);
    const off = collect({ mode: 'off' });
    off.gate.offer(1);
    assert.deepEqual(off.out, []);
  });

  it('the rate cap coalesces: the latest change in a window goes out when the window ends, none is lost', async () => {
    const out = [];
    const gate = new ValueGate({ mode: 'on-change', minIntervalMs: 30, emit: (v) => out.push(v) });
    gate.offer(1); // at once
    gate.offer(2); gate.offer(3); // coalesced: 3 goes out after the window
    assert.deepEqual(out, [1]);
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.deepEqual(out, [1, 3]);
    gate.offer(3); // no change
    gate.close();
    assert.deepEqual(out, [1, 3]);
  });

  it('extracts values from replies of both protocols and compares deeply', () => {
    assert.deepEqual(replyValues({ data: [1, 2] }), [1, 2]);
    assert.deepEqual(replyValues({ outputs: [true], inputs: [false] }), { outputs: [true], inputs: [false] });
    assert.equal(replyValues({ count: 7 }), 7);
    assert.equal(replyValues({ raw: '>' , ack: true }), true);
    assert.equal(changed({ a: [1, 2] }, { a: [1, 2] }, 0), false);
    assert.equal(changed({ a: [1, 2] }, { a: [1, 3] }, 0), true);
    assert.equal(changed([1], [1, 2], 0), true);
  });
});
