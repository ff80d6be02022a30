'use strict';

const assert = require('node:assert/strict');
const { decodeRegisters, encodeValues, registersFor, ORDERS } = require('../../gateway/values/registers');

/** Asserts a NinesError with code NINES_ERR_INVALID_VALUE whose message matches */
function invalidValue (fn, re) {
  assert.throws(fn, (err) => {
    assert.equal(err.code, 'NINES_ERR_INVALID_VALUE');
    assert.match(err.message, re);
    return true;
  });
}

/** Asserts a NinesError with code NINES_ERR_INVALID_ARG */
function invalid (fn, re) {
  assert.throws(fn, (err) => {
    assert.equal(err.name, 'NinesError');
    assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
    if (re) assert.match(err.message, re);
    return true;
  });
}

describe('gateway/decode', () => {
  describe('float32 123.456 = 0x42F6E979 in the four orders', () => {
    const vectors = {
      ABCD: [0x42F6, 0xE979],
      CDAB: [0xE979, 0x42F6],
      BADC: [0xF642, 0x79E9],
      DCBA: [0x79E9, 0xF642]
    };
    for (const [order, words] of Object.entries(vectors)) {
      const { wordOrder, byteOrder } = ORDERS[order];
      it(`decodes ${order} (wordOrder ${wordOrder}, byteOrder ${byteOrder})`, () => {
        const [v] = decodeRegisters(words, { type: 'float32', wordOrder, byteOrder });
        assert.ok(Math.abs(v - 123.456) < 1e-4, `got ${v}`);
      });
      it(`encodes ${order} back to the same registers`, () => {
        assert.deepEqual(encodeValues(123.456, { type: 'float32', order }), words);
      });
    }
  });

  it('decodes int16 and uint16, one register each, with byte swap', () => {
    assert.deepEqual(decodeRegisters([0xFFFF, 0x8000, 0x7FFF], { type: 'int16' }), [-1, -32768, 32767]);
    assert.deepEqual(decodeRegisters([0xFFFF, 0x8000], { type: 'uint16' }), [65535, 32768]);
    assert.deepEqual(decodeRegisters([0x3412], { type: 'uint16', byteOrder: 'little' }), [0x1234]);
  });

  it('decodes int32 and uint32 with word swap', () => {
    assert.deepEqual(decodeRegisters([0xFFFF, 0xFFFE], { type: 'int32' }), [-2]);
    assert.deepEqual(decodeRegisters([0x0001, 0x0000], { type: 'uint32', wordOrder: 'little' }), [1]);
    assert.deepEqual(decodeRegisters([0x1234, 0x5678], { type: 'uint32' }), [0x12345678]);
    assert.deepEqual(decodeRegisters([0x7856, 0x3412], { type: 'uint32', order: 'DCBA' }), [0x12345678]);
  });

  it('decodes 64-bit integers as numbers when exact and as BigInt beyond 2^53', () => {
    assert.deepEqual(decodeRegisters([0, 0, 0, 42], { type: 'uint64' }), [42]);
    assert.deepEqual(decodeRegisters([0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF], { type: 'int64' }), [-1]);
    assert.deepEqual(decodeRegisters([0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF], { type: 'uint64' }), [2n ** 64n - 1n]);
    // little word order: the least significant register first
    assert.deepEqual(decodeRegisters([42, 0, 0, 0], { type: 'int64', wordOrder: 'little' }), [42]);
  });

  it('decodes float64 (pi = 0x400921FB54442D18)', () => {
    const words = [0x4009, 0x21FB, 0x5444, 0x2D18];
    assert.deepEqual(decodeRegisters(words, { type: 'float64' }), [Math.PI]);
    assert.deepEqual(decodeRegisters([...words].reverse(), { type: 'float64', wordOrder: 'little' }), [Math.PI]);
    assert.deepEqual(encodeValues(Math.PI, { type: 'float64' }), words);
  });

  it('accepts raw register bytes as a Buffer', () => {
    assert.deepEqual(decodeRegisters(Buffer.from('42F6E979', 'hex'), { type: 'float32' }).map((v) => +v.toFixed(3)), [123.456]);
    invalid(() => decodeRegisters(Buffer.from('42F6E9', 'hex'), { type: 'uint16' }), /even length/);
  });

  it('applies scale and offset, and inverts them on encode', () => {
    assert.deepEqual(decodeRegisters([215, 65535], { type: 'int16', scale: 0.1 }).map((v) => +v.toFixed(6)), [21.5, -0.1]);
    assert.deepEqual(decodeRegisters([100], { type: 'uint16', scale: 2, offset: -50 }), [150]);
    assert.deepEqual(encodeValues([21.5, -0.1], { type: 'int16', scale: 0.1 }), [215, 65535]);
    assert.deepEqual(encodeValues(150, { type: 'uint16', scale: 2, offset: -50 }), [100]);
  });

  it('decodes bools as bits, bit 0 of the first register first', () => {
    assert.deepEqual(decodeRegisters([0b101, 0x8000], { type: 'bool', count: 3 }), [true, false, true]);
    const bits = decodeRegisters([0, 0x8000], { type: 'bool' });
    assert.equal(bits.length, 32);
    assert.equal(bits[31], true);
    assert.equal(bits.filter(Boolean).length, 1);
    assert.deepEqual(encodeValues([true, false, true, 1], { type: 'bool' }), [0b1101]);
  });

  it('decodes strings two characters per register, trimming NUL padding', () => {
    assert.equal(decodeRegisters([0x4544, 0x2D35, 0x3838, 0x0000], { type: 'string' }), 'ED-588');
    assert.equal(decodeRegisters([0x4445, 0x352D], { type: 'string', byteOrder: 'little' }), 'ED-5');
    assert.equal(decodeRegisters([0x4142, 0x4344], { type: 'string', count: 3 }), 'ABC');
    assert.deepEqual(encodeValues('ED-588', { type: 'string', count: 8 }), [0x4544, 0x2D35, 0x3838, 0x0000]);
    assert.deepEqual(encodeValues('ABC', { type: 'string' }), [0x4142, 0x4300]);
  });

  it('round-trips every numeric type in every order', () => {
    const samples = { int16: [-2, 300], uint16: [0, 65535], int32: [-123456789, 5], uint32: [4000000000], float32: [1.5, -0.25], int64: [-(2 ** 40), 7], uint64: [2 ** 50], float64: [1e-300, -2.5] };
    for (const [type, values] of Object.entries(samples)) {
      for (const order of Object.keys(ORDERS)) {
        const words = encodeValues(values, { type, order });
        assert.equal(words.length, registersFor(type, values.length));
        assert.deepEqual(decodeRegisters(words, { type, order }), values, `${type} ${order}`);
      }
    }
  });

  it('computes the registers a read needs', () => {
    assert.equal(registersFor('float32', 3), 6);
    assert.equal(registersFor('uint64'), 4);
    assert.equal(registersFor('bool', 17), 2);
    assert.equal(registersFor('string', 5), 3);
  });

  describe('validation (NINES_ERR_INVALID_ARG, naming the field)', () => {
    it('rejects unknown types and orders', () => {
      invalid(() => decodeRegisters([1], { type: 'float128' }), /type must be one of/);
      invalid(() => decodeRegisters([1], { wordOrder: 'middle' }), /wordOrder/);
      invalid(() => decodeRegisters([1], { order: 'ACBD' }), /order/);
    });
    it('rejects registers that are not uint16 integers', () => {
      invalid(() => decodeRegisters([70000], {}), /register 0/);
      invalid(() => decodeRegisters([1.5], {}), /register 0/);
      invalid(() => decodeRegisters('12', {}), /array/);
    });
    it('rejects a count that needs more registers than given, or leftovers', () => {
      invalid(() => decodeRegisters([1, 2], { type: 'float32', count: 2 }), /need 4 registers/);
      invalid(() => decodeRegisters([1, 2, 3], { type: 'float32' }), /whole number/);
      invalid(() => decodeRegisters([1], { count: 0 }), /count/);
    });
    it('rejects bad scale and offset', () => {
      invalid(() => decodeRegisters([1], { scale: 0 }), /scale/);
      invalid(() => decodeRegisters([1], { offset: 'x' }), /offset/);
    });
    it('rejects values that do not fit with NINES_ERR_INVALID_VALUE, instead of wrapping', () => {
      invalidValue(() => encodeValues(70000, { type: 'uint16' }), /outside uint16 range/);
      invalidValue(() => encodeValues(-1, { type: 'uint32' }), /outside uint32 range/);
      invalidValue(() => encodeValues(1e39, { type: 'float32' }), /float32 range/);
      invalidValue(() => encodeValues('abc', { type: 'int16' }), /finite number/);
      invalidValue(() => encodeValues(NaN, { type: 'float64' }), /finite number/);
      invalid(() => encodeValues([], { type: 'int16' }), /no values/);
      invalidValue(() => encodeValues([2], { type: 'bool' }), /true or false/);
      invalidValue(() => encodeValues('toolong', { type: 'string', count: 3 }), /longer than count/);
      invalidValue(() => encodeValues(2 ** 60, { type: 'int64' }), /BigInt/);
    });
    it('refuses a fraction for an integer type instead of rounding it (FC6 once wrote 4 for 3.7)', () => {
      invalidValue(() => encodeValues(3.7, { type: 'int16' }), /not representable as int16: raw 3.7 is not a whole number/);
      invalidValue(() => encodeValues(0.05, { type: 'uint16', scale: 0.1 }), /raw 0.5/);
      invalidValue(() => encodeValues(1.5, { type: 'int64' }), /not a whole number/);
      // a value that is whole after scaling, up to float artefacts (71.3 / 0.1 = 712.9999…)
      assert.deepEqual(encodeValues(71.3, { type: 'int16', scale: 0.1 }), [713]);
      assert.deepEqual(encodeValues(-0.3, { type: 'int32', scale: 0.1 }), [0xFFFF, 0xFFFD]);
    });
    it('accepts BigInt and decimal integer text for 64-bit writes', () => {
      assert.deepEqual(encodeValues(2n ** 64n - 1n, { type: 'uint64' }), [0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF]);
      assert.deepEqual(encodeValues('18446744073709551615', { type: 'uint64' }), [0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF]);
    });
    it('coerces nothing: text, booleans, hex and exponent text are refused for numbers (issue 18)', () => {
      invalidValue(() => encodeValues('12', { type: 'uint16' }), /finite number for uint16; got "12"/);
      invalidValue(() => encodeValues(true, { type: 'int16' }), /got true/);
      invalidValue(() => encodeValues('0x10', { type: 'int16' }), /got "0x10"/);
      invalidValue(() => encodeValues('1e3', { type: 'int16' }), /got "1e3"/);
      invalidValue(() => encodeValues(' 12', { type: 'int64' }), /decimal integer text/);
      invalidValue(() => encodeValues('1e3', { type: 'int64' }), /decimal integer text/);
    });
    it('refuses a float32 that would be stored as 0 or Infinity, and names Infinity as such (issue 18)', () => {
      invalidValue(() => encodeValues(1e-50, { type: 'float32' }), /^1e-50 \(values\[0\]\) is too small for float32.*stored as 0/);
      invalidValue(() => encodeValues(-1e-46, { type: 'float32' }), /stored as 0/);
      invalidValue(() => encodeValues(3.5e38, { type: 'float32' }), /stored as Infinity/);
      invalidValue(() => encodeValues(Infinity, { type: 'float64' }), /got Infinity/);
      // 0 is 0, and a subnormal float32 is kept (it is not 0)
      assert.deepEqual(encodeValues(0, { type: 'float32' }), [0, 0]);
      assert.notDeepEqual(encodeValues(1e-40, { type: 'float32' }), [0, 0]);
    });
  });
});
