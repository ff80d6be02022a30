'use strict';

/**
 * Every register type in every byte and word order: encode → decode gives the value back, decode →
 * encode gives the registers back, and known vectors decode to what data sheets say (issue 23).
 */

const assert = require('node:assert/strict');
const fc = require('fast-check');
const { decodeRegisters, encodeValues, TYPES, ORDERS, BYTES } = require('../../gateway/values/registers');
const { halfToNumber, numberToHalf, f16round } = require('../../gateway/values/float16');

const ORDER_NAMES = Object.keys(ORDERS);
const RUNS = { numRuns: 300 };

/** The layouts a type is stored in: every order, or for an 8-bit type every byte */
function layouts (type) {
  return TYPES[type].byte ? BYTES.map((byte) => ({ byte })) : ORDER_NAMES.map((order) => ({ order }));
}

/** Values each type holds, as the engineering value decode gives back */
const VALUES = {
  int16: fc.integer({ min: -0x8000, max: 0x7FFF }),
  uint16: fc.integer({ min: 0, max: 0xFFFF }),
  int32: fc.integer({ min: -0x80000000, max: 0x7FFFFFFF }),
  uint32: fc.integer({ min: 0, max: 0xFFFFFFFF }),
  int64: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
  uint64: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
  float32: fc.float({ noNaN: true, noDefaultInfinity: true }),
  float64: fc.double({ noNaN: true, noDefaultInfinity: true }),
  // every finite half, by its bits (exponent 31 is Infinity and NaN)
  float16: fc.integer({ min: 0, max: 0xFFFF }).filter((h) => (h & 0x7C00) !== 0x7C00).map(halfToNumber),
  bcd: fc.integer({ min: 0, max: 9999 }),
  lbcd: fc.integer({ min: 0, max: 99999999 }),
  int8: fc.integer({ min: -0x80, max: 0x7F }),
  uint8: fc.integer({ min: 0, max: 0xFF })
};

/** Whether decode gave back what was encoded: floats as their shortest decimal, 64-bit beyond 2^53 as BigInt */
function same (type, got, want) {
  if (type === 'float32') return Object.is(Math.fround(got), want);
  if (type === 'float16') return Object.is(f16round(got), want);
  if (typeof want === 'bigint') return BigInt(got) === want;
  return Object.is(got, want);
}

describe('register types: every type in every order (issue 23)', () => {
  it('covers every numeric type of the codec', () => {
    const numeric = Object.keys(TYPES).filter((t) => t !== 'bool' && t !== 'string');
    assert.deepEqual(Object.keys(VALUES).sort(), numeric.sort());
  });

  for (const type of Object.keys(VALUES)) {
    for (const layout of layouts(type)) {
      const how = Object.values(layout)[0];
      it(`${type} ${how}: encode then decode gives the value back, and decode then encode the registers`, () => {
        fc.assert(fc.property(VALUES[type], (v) => {
          const words = encodeValues(v, { type, ...layout });
          assert.equal(words.length, TYPES[type].words);
          const [back] = decodeRegisters(words, { type, ...layout });
          assert.ok(same(type, back, v), `${type} ${how}: ${String(v)} came back as ${String(back)}`);
          // the decoded value (a float's shortest decimal) encodes to the very same registers
          assert.deepEqual(encodeValues(back, { type, ...layout }), words);
        }), RUNS);
      });
    }
  }

  it('an 8-bit value leaves the other byte of its register 0, and reads only its own byte', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 0xFF }), fc.integer({ min: 0, max: 0xFF }), (hi, lo) => {
      const word = (hi << 8) | lo;
      assert.deepEqual(decodeRegisters([word], { type: 'uint8', byte: 'high' }), [hi]);
      assert.deepEqual(decodeRegisters([word], { type: 'uint8', byte: 'low' }), [lo]);
      assert.deepEqual(decodeRegisters([word], { type: 'int8', byte: 'high' }), [hi > 127 ? hi - 256 : hi]);
      assert.deepEqual(encodeValues(hi, { type: 'uint8', byte: 'high' }), [hi << 8]);
      assert.deepEqual(encodeValues(lo, { type: 'uint8', byte: 'low' }), [lo]);
    }), RUNS);
  });

  it('a float16 takes the nearest half: no other half is closer to the value written', () => {
    fc.assert(fc.property(fc.double({ min: -65504, max: 65504, noNaN: true }), (x) => {
      const h = numberToHalf(x);
      const err = Math.abs(halfToNumber(h) - x);
      for (const n of [h - 1, h + 1]) {
        // neighbours by bits, within the same sign and finite
        if (n < 0 || n > 0xFFFF || (n & 0x8000) !== (h & 0x8000) || (n & 0x7C00) === 0x7C00) continue;
        assert.ok(Math.abs(halfToNumber(n) - x) >= err, `${x}: half ${h.toString(16)} (${halfToNumber(h)}) but ${n.toString(16)} (${halfToNumber(n)}) is closer`);
      }
    }), RUNS);
  });

  it('BCD digits decode and encode in every order, and a register with a nibble above 9 is NaN', () => {
    const digits = fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 8, maxLength: 8 });
    for (const order of ORDER_NAMES) {
      fc.assert(fc.property(digits, (d) => {
        const n = Number(d.join(''));
        const abcd = [(d[0] << 12) | (d[1] << 8) | (d[2] << 4) | d[3], (d[4] << 12) | (d[5] << 8) | (d[6] << 4) | d[7]];
        const words = encodeValues(n, { type: 'lbcd', order });
        assert.deepEqual(decodeRegisters(words, { type: 'lbcd', order }), [n]);
        assert.deepEqual(encodeValues(n, { type: 'lbcd', order: 'ABCD' }), abcd);
      }), { numRuns: 100 });
    }
    fc.assert(fc.property(fc.integer({ min: 0, max: 0xFFFF }), (w) => {
      const nibbles = [w >> 12, (w >> 8) & 15, (w >> 4) & 15, w & 15];
      const [v] = decodeRegisters([w], { type: 'bcd' });
      if (nibbles.some((x) => x > 9)) assert.ok(Number.isNaN(v), `0x${w.toString(16)} gave ${v}`);
      else assert.equal(v, Number(nibbles.join('')));
    }), { numRuns: 1000 });
  });

  describe('known vectors', () => {
    it('BCD: 0x1234 is 1234, 0x0099 is 99, 0x123A no number; LBCD 0x1234 0x5678 is 12345678, word-swapped too', () => {
      assert.deepEqual(decodeRegisters([0x1234, 0x0099, 0x9999], { type: 'bcd' }), [1234, 99, 9999]);
      assert.ok(Number.isNaN(decodeRegisters([0x123A], { type: 'bcd' })[0]));
      assert.deepEqual(decodeRegisters([0x1234, 0x5678], { type: 'lbcd' }), [12345678]);
      assert.deepEqual(decodeRegisters([0x5678, 0x1234], { type: 'lbcd', order: 'CDAB' }), [12345678]);
      assert.deepEqual(encodeValues(1234, { type: 'bcd' }), [0x1234]);
      assert.deepEqual(encodeValues(12345678, { type: 'lbcd', order: 'CDAB' }), [0x5678, 0x1234]);
    });

    it('float16: 0x3C00 is 1, 0x7BFF 65504, 0xC000 -2, 0x3555 0.3333, 0x0001 6e-8, 0x0400 6.104e-5; 0x7C00 Infinity, 0x7E00 NaN', () => {
      const got = decodeRegisters([0x3C00, 0x7BFF, 0xC000, 0x3555, 0x0001, 0x0400, 0x8000], { type: 'float16' });
      assert.deepEqual(got, [1, 65504, -2, 0.3333, 6e-8, 0.00006104, -0]);
      assert.deepEqual(decodeRegisters([0x7C00, 0xFC00], { type: 'float16' }), [Infinity, -Infinity]);
      assert.ok(Number.isNaN(decodeRegisters([0x7E00], { type: 'float16' })[0]));
      assert.deepEqual(encodeValues([1, 65504, -2, 0.3333, 6e-8], { type: 'float16' }), [0x3C00, 0x7BFF, 0xC000, 0x3555, 0x0001]);
      // byte swapped: the two bytes of the one register
      assert.deepEqual(decodeRegisters([0x003C], { type: 'float16', order: 'BADC' }), [1]);
    });

    it('int8 and uint8: 0xFF7F is -1 high and 127 low, 255 as uint8 high', () => {
      assert.deepEqual(decodeRegisters([0xFF7F], { type: 'int8', byte: 'high' }), [-1]);
      assert.deepEqual(decodeRegisters([0xFF7F], { type: 'int8', byte: 'low' }), [127]);
      assert.deepEqual(decodeRegisters([0xFF7F, 0x0180], { type: 'uint8', byte: 'high' }), [255, 1]);
      assert.deepEqual(encodeValues(-1, { type: 'int8', byte: 'high' }), [0xFF00]);
    });

    it('a string is trimmed of the NULs and spaces that pad it at either end, high-low or low-high', () => {
      assert.equal(decodeRegisters([0x2020, 0x4142, 0x4300, 0x0000], { type: 'string' }), 'ABC');
      assert.equal(decodeRegisters([0x0000, 0x4142, 0x2043], { type: 'string' }), 'AB C');
      // low-high: the first character in the low byte
      assert.equal(decodeRegisters([0x4241, 0x0043], { type: 'string', byteOrder: 'little' }), 'ABC');
      assert.deepEqual(encodeValues('ABC', { type: 'string', byteOrder: 'little', count: 4 }), [0x4241, 0x0043]);
    });
  });

  describe('writes of values the type cannot hold are refused, as for the other types', () => {
    const refused = (v, opts, re) => assert.throws(() => encodeValues(v, opts), (err) => {
      assert.equal(err.code, 'NINES_ERR_INVALID_VALUE');
      assert.match(err.message, re);
      return true;
    });
    it('BCD: a fraction, a negative number or more digits than it has', () => {
      refused(3.7, { type: 'bcd' }, /^3\.7 \(values\[0\]\) is not representable as bcd/);
      refused(-1, { type: 'bcd' }, /outside bcd range 0 to 9999/);
      refused(10000, { type: 'bcd' }, /outside bcd range 0 to 9999/);
      refused(100000000, { type: 'lbcd' }, /outside lbcd range 0 to 99999999/);
    });
    it('float16: beyond ±65504 (65520 rounds to Infinity), or too small to be anything but 0', () => {
      refused(65520, { type: 'float16' }, /outside the float16 range \(±65504\)/);
      refused(-1e6, { type: 'float16' }, /outside the float16 range/);
      refused(1e-9, { type: 'float16' }, /too small for float16/);
      assert.deepEqual(encodeValues(65519, { type: 'float16' }), [0x7BFF]);
    });
    it('int8 and uint8: out of range, a fraction; and the byte must be named', () => {
      refused(128, { type: 'int8', byte: 'low' }, /outside int8 range -128 to 127/);
      refused(-1, { type: 'uint8', byte: 'low' }, /outside uint8 range 0 to 255/);
      refused(3.7, { type: 'uint8', byte: 'high' }, /^3\.7 \(values\[0\]\) is not representable as uint8/);
      assert.throws(() => encodeValues(1, { type: 'int8' }), { code: 'NINES_ERR_INVALID_ARG', message: /byte must be "high" or "low" for int8/ });
      assert.throws(() => decodeRegisters([1], { type: 'int16', byte: 'high' }), { code: 'NINES_ERR_INVALID_ARG', message: /byte is only used with int8 and uint8/ });
    });
  });
});
