'use strict';

/**
 * Values without float noise (issue 21, defect 4; gateway/values/rounding.js), through the decoder
 * every path uses (decodeRegisters / decodeOne: tags in the worker, the Node-RED read and poll
 * nodes) and the deadband comparisons (tags/values.js, values/gate.js). Properties are checked by
 * fast-check against the exact decimal result, computed here with BigInt.
 */

const assert = require('node:assert/strict');
const fc = require('fast-check');
const { decodeRegisters, encodeValues } = require('../../gateway/values/registers');
const { tagComparer } = require('../../gateway/tags/values');
const { changed } = require('../../gateway/values/gate');
const { decodeBlock } = require('../../gateway/tags/decode');

const RUNS = 2000;
const SEED = process.env.NINES_FUZZ_SEED === 'random' ? undefined : Number(process.env.NINES_FUZZ_SEED || 20261121);
const params = { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }) };

/** One value of a type from its registers, as published */
const decode = (type, words, scale = 1, offset = 0) => decodeRegisters(words, { type, scale, offset })[0];
const wordsOf = (type, raw) => encodeValues(raw, { type });

/** A decimal k × 10^-d: its number (the nearest double) and its exact parts */
const decimal = (kMax, dMax) => fc.record({ k: fc.integer({ min: -kMax, max: kMax }), d: fc.nat(dMax) })
  .map(({ k, d }) => ({ k: BigInt(k), d, n: Number(`${k}e-${d}`) }));

/** The exact decimal r × s + o as the nearest double, with the size of its integer at 10^-D */
function exact (r, s, o) {
  const D = Math.max(r.d + s.d, o.d);
  const N = r.k * s.k * 10n ** BigInt(D - r.d - s.d) + o.k * 10n ** BigInt(D - o.d);
  return { value: Number(`${N}e-${D}`), D, N };
}

/** A decimal from a number's shortest text ("7.13", "1.5e-7") as {k, d} */
function parts (x) {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(x));
  const frac = m[3] || '';
  let d = frac.length - (m[4] ? Number(m[4]) : 0);
  let digits = m[2] + frac;
  if (d < 0) { digits += '0'.repeat(-d); d = 0; }
  return { k: BigInt(m[1] + digits), d };
}

describe('values without float noise (issue 21)', () => {
  it('gives the issue\'s values: 701 × 0.1 is 70.1, the float32 71.3 is 71.3, and scaled 7.13', () => {
    assert.equal(decode('int16', [701], 0.1), 70.1);
    assert.equal(decode('int16', [1012], 0.1), 101.2);
    assert.equal(decode('uint16', [1012], 0.05), 50.6);
    assert.equal(decode('int16', [706], 0.1, -0.5), 70.1);
    assert.equal(decode('int16', wordsOf('int16', -3), 0.1, 0.3), 0);
    assert.equal(decode('float32', wordsOf('float32', 71.3)), 71.3);
    assert.equal(decode('float32', wordsOf('float32', 71.3), 0.1), 7.13);
    assert.equal(decode('float32', wordsOf('float32', 0.1), 3), 0.3);
  });

  it('gives an ED-series counter and analog channel the same rounding', () => {
    const tags = [
      { name: 'pulses', table: 'counter', address: 0, type: 'uint32', scale: 0.1, offset: 0 },
      { name: 'valve', table: 'analog', address: 0, type: 'float64', scale: 0.1, offset: 0 }
    ];
    const values = [];
    decodeBlock({ command: '#010', tags: [0] }, tags, { count: 701 }, values);
    decodeBlock({ command: '$0160', tags: [1] }, tags, { value: 3 }, values);
    // 701 × 0.1 is 70.10000000000001 in binary, 3 × 0.1 is 0.30000000000000004
    assert.deepEqual(values, [70.1, 0.3]);
  });

  it('leaves what needs no rounding as it was: integers and float64 without a scale, 64-bit integers beyond 2^53, NaN', () => {
    assert.equal(decode('float64', wordsOf('float64', 0.1 + 0.2)), 0.30000000000000004);
    assert.equal(decode('uint32', wordsOf('uint32', 4000000000)), 4000000000);
    assert.equal(decode('uint64', wordsOf('uint64', 2n ** 60n + 1n)), 2n ** 60n + 1n);
    assert.ok(Number.isNaN(decode('float32', [0x7fc0, 0])));
    assert.equal(decode('float32', [0x7f80, 0]), Infinity);
  });

  it('scales an integer to the exact decimal result: raw × scale + offset, to the decimals they carry', () => {
    fc.assert(fc.property(fc.integer({ min: -0x80000000, max: 0x7fffffff }), decimal(99999, 6), decimal(999999, 4), (raw, s, o) => {
      fc.pre(s.k !== 0n);
      const want = exact({ k: BigInt(raw), d: 0 }, s, o);
      const got = decode('int32', wordsOf('int32', raw), s.n, o.n);
      // beyond 2^52 at 10^-D the value is binary arithmetic's: within its last digit
      if (want.D <= 22 && (want.N < 0n ? -want.N : want.N) < 2n ** 52n) assert.equal(got, want.value);
      else assert.ok(Math.abs(got - want.value) <= 4 * Number.EPSILON * Math.abs(want.value));
    }), params);
  });

  it('gives a float32 as the shortest decimal that reads back as the same float32', () => {
    fc.assert(fc.property(fc.float({ noNaN: true, noDefaultInfinity: true }), (f) => {
      const got = decode('float32', wordsOf('float32', f));
      assert.equal(Math.fround(got), Math.fround(f));
      // no decimal of fewer significant digits reads back (the digits of got, less one)
      const digits = String(parts(got).k).replace(/^-/, '').replace(/0+$/, '').length;
      if (digits > 1) assert.notEqual(Math.fround(Number(got.toPrecision(digits - 1))), Math.fround(f));
    }), params);
  });

  it('scales a float32 from its shortest decimal, to the exact decimal result', () => {
    fc.assert(fc.property(fc.float({ min: -1e6, max: 1e6, noNaN: true }), decimal(999, 4), decimal(9999, 3), (f, s, o) => {
      fc.pre(s.k !== 0n);
      const short = decode('float32', wordsOf('float32', f));
      const want = exact(parts(short), s, o);
      const got = decode('float32', wordsOf('float32', f), s.n, o.n);
      if (want.D <= 22 && (want.N < 0n ? -want.N : want.N) < 2n ** 52n) assert.equal(got, want.value);
      else assert.ok(Math.abs(got - want.value) <= 4 * Number.EPSILON * Math.abs(want.value));
    }), params);
  });

  it('writes back what it published: the published value encodes to the same registers', () => {
    // a small scale beside a large offset: (8192.9996 - 8193) / 0.0001 is -3.9999999999 in binary
    assert.deepEqual(encodeValues(decode('int16', [65532], 0.0001, 8193), { type: 'int16', scale: 0.0001, offset: 8193 }), [65532]);
    assert.throws(() => encodeValues(8192.99965, { type: 'int16', scale: 0.0001, offset: 8193 }), { code: 'NINES_ERR_INVALID_VALUE' });
    fc.assert(fc.property(fc.constantFrom('int16', 'uint16', 'int32', 'uint32', 'float32'), fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 0, max: 0xffff }),
      decimal(9999, 4), decimal(9999, 3), (type, w0, w1, s, o) => {
        fc.pre(s.k !== 0n);
        const words = type === 'int16' || type === 'uint16' ? [w0] : [w0, w1];
        const value = decode(type, words, s.n, o.n);
        fc.pre(Number.isFinite(value));
        const back = encodeValues(value, { type, scale: s.n, offset: o.n });
        if (type !== 'float32') assert.deepEqual(back, words);
        // a float32 beside an offset that cancels it (-1 + 7.252e-9) may come back a float32 step away
        else assert.ok(Math.abs(decode(type, back, s.n, o.n) - value) <= 2 ** -22 * (Math.abs(value) + Math.abs(o.n)));
      }), params);
  });

  it('takes a step of exactly the deadband for no more than it, and one count more for more (tags and the single request)', () => {
    // the case: 70.1 → 70.2 is 0.10000000000000853 in binary, 70.0 → 70.1 is 0.09999999999999432
    const tags = [{ name: 't', deadband: 0.1 }];
    const { compare } = tagComparer(tags);
    const poll = (v) => ({ values: { t: v }, quality: { t: 'ok' } });
    assert.equal(compare(poll(decode('int16', [701], 0.1)), poll(decode('int16', [702], 0.1))), false);
    assert.equal(compare(poll(decode('int16', [700], 0.1)), poll(decode('int16', [701], 0.1))), false);
    fc.assert(fc.property(fc.integer({ min: -32768, max: 32767 }), fc.integer({ min: -32768, max: 32767 }), fc.integer({ min: 1, max: 50 }),
      decimal(999, 4), decimal(9999, 3), (a, b, n, s, o) => {
        fc.pre(s.k > 0n);
        const deadband = Number(`${BigInt(n) * s.k}e-${s.d}`);
        const va = decode('int16', wordsOf('int16', a), s.n, o.n);
        const vb = decode('int16', wordsOf('int16', b), s.n, o.n);
        const moved = Math.abs(a - b) > n;
        assert.equal(tagComparer([{ name: 't', deadband }]).compare(poll(va), poll(vb)), moved, `${a} ${b} ×${s.n} +${o.n} band ${deadband}`);
        assert.equal(changed(va, vb, deadband), moved);
      }), params);
  });
});
