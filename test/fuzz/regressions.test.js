'use strict';

const assert = require('node:assert/strict');
const { decodeRegisters, encodeValues, registersFor } = require('../../gateway/values/registers');
const { NinesError } = require('../../gateway/base/errors');

/** Cases the fuzzer found, kept so they stay fixed. */

/** Asserts fn throws NINES_ERR_INVALID_ARG with a message matching re. */
function invalidArg (fn, re) {
  assert.throws(fn, (err) => err instanceof NinesError && err.code === 'NINES_ERR_INVALID_ARG' && re.test(err.message));
}

describe('fuzz regressions: registers', () => {
  // JSON.stringify threw "Do not know how to serialize a BigInt" while building the message
  it('rejects bigint options with NINES_ERR_INVALID_ARG, not a TypeError', () => {
    invalidArg(() => decodeRegisters([], 0n), /decode options must be an object; got 0n/);
    invalidArg(() => decodeRegisters([1], { type: 5n }), /type must be one of .*; got 5n/);
    invalidArg(() => decodeRegisters([1], { order: { x: 1n } }), /order must be one of .*; got \{"x":"1n"\}/);
    invalidArg(() => decodeRegisters([1], { count: -1n }), /count must be a positive integer; got -1n/);
    invalidArg(() => registersFor('uint16', 2n), /count must be a positive integer; got 2n/);
  });

  it('rejects a bigint register with NINES_ERR_INVALID_ARG', () => {
    invalidArg(() => decodeRegisters([1, 2n], { type: 'uint16' }), /register 1 must be an integer 0-65535; got 2n/);
  });

  it('rejects a bigint bool value with a coded error (NINES_ERR_INVALID_VALUE: a value its type cannot hold)', () => {
    assert.throws(() => encodeValues([true, 1n], { type: 'bool' }),
      (err) => err instanceof NinesError && err.code === 'NINES_ERR_INVALID_VALUE' && /value 1 must be true or false \(or 1 or 0\); got 1n/.test(err.message));
  });
});

describe('fuzz regressions: registers options that cannot become a string or number', () => {
  // String({toString: ""}) and Number({toString: ""}) throw a TypeError; such objects are valid JSON
  const unconvertible = JSON.parse('{"toString": ""}');

  it('rejects them with NINES_ERR_INVALID_ARG naming the option', () => {
    invalidArg(() => decodeRegisters([], { order: unconvertible }), /order must be one of ABCD, CDAB, BADC, DCBA; got \{"toString":""\}/);
    invalidArg(() => decodeRegisters([1], { scale: unconvertible }), /scale must be a finite number other than 0/);
    invalidArg(() => decodeRegisters([1], { offset: unconvertible }), /offset must be a finite number/);
    invalidArg(() => decodeRegisters([1], { count: unconvertible }), /count must be a positive integer/);
  });

  it('rejects such a type with NINES_ERR_INVALID_ARG, and only own type names', () => {
    invalidArg(() => decodeRegisters([], { type: JSON.parse('{"toString": false}') }), /type must be one of .*; got \{"toString":false\}/);
    invalidArg(() => registersFor(JSON.parse('{"toString": false}'), 1), /type must be one of/);
    invalidArg(() => registersFor('toString', 1), /type must be one of .*; got "toString"/);
  });

  it('still reads the order in any case', () => {
    assert.deepEqual(decodeRegisters([1, 2], { type: 'uint32', order: 'cdab' }), [0x20001]);
  });
});
