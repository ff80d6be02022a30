'use strict';

const assert = require('node:assert/strict');
const { validateOp, parseOpString, toOp, describeOp, formatOp } = require('../../gateway/drivers/modbus/op');
const { NinesError } = require('../../gateway/base/errors');

/** Asserts fn throws NINES_ERR_INVALID_OP naming `field`, and returns the error. */
function rejects (fn, field) {
  let caught;
  assert.throws(fn, (err) => { caught = err; return true; });
  assert.ok(caught instanceof NinesError, `expected a NinesError, got ${caught}`);
  assert.equal(caught.code, 'NINES_ERR_INVALID_OP');
  assert.equal(caught.details.field, field, `field of "${caught.message}"`);
  assert.equal(typeof caught.details.rule, 'string');
  return caught;
}

describe('modbus op: validateOp', () => {
  it('normalizes each read function code', () => {
    for (const fc of [1, 2, 3, 4]) {
      assert.deepEqual({ ...validateOp({ fc, address: 5, quantity: 2 }) }, { fc, address: 5, quantity: 2 });
    }
  });

  it('accepts function code names as aliases, ignoring case and separators', () => {
    assert.equal(validateOp({ fc: 'readHoldingRegisters', address: 0, quantity: 1 }).fc, 3);
    assert.equal(validateOp({ fc: 'READ_INPUT_REGISTERS', address: 0, quantity: 1 }).fc, 4);
    assert.equal(validateOp({ fc: 'read-coils', address: 0, quantity: 1 }).fc, 1);
    assert.equal(validateOp({ fc: 'readDiscreteInputs', address: 0, quantity: 1 }).fc, 2);
    assert.equal(validateOp({ fc: 'writeCoil', address: 0, value: true }).fc, 5);
    assert.equal(validateOp({ fc: 'writeSingleRegister', address: 0, value: 1 }).fc, 6);
    assert.equal(validateOp({ fc: 'writeMultipleCoils', address: 0, values: [1] }).fc, 15);
    assert.equal(validateOp({ fc: 'writeRegisters', address: 0, values: [1] }).fc, 16);
    assert.equal(validateOp({ fc: '3', address: 0, quantity: 1 }).fc, 3);
  });

  it('rejects unknown function codes and names, naming fc', () => {
    rejects(() => validateOp({ fc: 7, address: 0, quantity: 1 }), 'fc');
    rejects(() => validateOp({ fc: 0x83, address: 0, quantity: 1 }), 'fc');
    rejects(() => validateOp({ fc: 'readEverything', address: 0, quantity: 1 }), 'fc');
    rejects(() => validateOp({ fc: 3.5, address: 0, quantity: 1 }), 'fc');
    rejects(() => validateOp({ address: 0, quantity: 1 }), 'fc');
  });

  it('requires an integer address from 0 to 65535', () => {
    rejects(() => validateOp({ fc: 3, quantity: 1 }), 'address');
    rejects(() => validateOp({ fc: 3, address: -1, quantity: 1 }), 'address');
    rejects(() => validateOp({ fc: 3, address: 65536, quantity: 1 }), 'address');
    rejects(() => validateOp({ fc: 3, address: 1.5, quantity: 1 }), 'address');
    rejects(() => validateOp({ fc: 3, address: '10', quantity: 1 }), 'address');
    assert.equal(validateOp({ fc: 3, address: 65535, quantity: 1 }).address, 65535);
  });

  it('limits read quantities to 2000 bits and 125 registers', () => {
    assert.equal(validateOp({ fc: 1, address: 0, quantity: 2000 }).quantity, 2000);
    assert.equal(validateOp({ fc: 2, address: 0, quantity: 2000 }).quantity, 2000);
    assert.equal(validateOp({ fc: 3, address: 0, quantity: 125 }).quantity, 125);
    assert.equal(validateOp({ fc: 4, address: 0, quantity: 125 }).quantity, 125);
    rejects(() => validateOp({ fc: 1, address: 0, quantity: 2001 }), 'quantity');
    rejects(() => validateOp({ fc: 2, address: 0, quantity: 2001 }), 'quantity');
    rejects(() => validateOp({ fc: 3, address: 0, quantity: 126 }), 'quantity');
    rejects(() => validateOp({ fc: 4, address: 0, quantity: 126 }), 'quantity');
    rejects(() => validateOp({ fc: 3, address: 0, quantity: 0 }), 'quantity');
    rejects(() => validateOp({ fc: 3, address: 0 }), 'quantity');
    rejects(() => validateOp({ fc: 3, address: 0, quantity: '10' }), 'quantity');
  });

  it('keeps address + quantity within 65536', () => {
    assert.equal(validateOp({ fc: 3, address: 65411, quantity: 125 }).quantity, 125);
    const err = rejects(() => validateOp({ fc: 3, address: 65500, quantity: 100 }), 'quantity');
    assert.match(err.message, /65536/);
    rejects(() => validateOp({ fc: 16, address: 65535, values: [1, 2] }), 'quantity');
  });

  it('rejects values on reads', () => {
    rejects(() => validateOp({ fc: 3, address: 0, quantity: 1, value: 1 }), 'value');
    rejects(() => validateOp({ fc: 1, address: 0, quantity: 1, values: [1] }), 'values');
  });

  it('takes FC5 values as booleans or 0/1 only', () => {
    assert.equal(validateOp({ fc: 5, address: 3, value: true }).value, true);
    assert.equal(validateOp({ fc: 5, address: 3, value: 0 }).value, false);
    assert.equal(validateOp({ fc: 5, address: 3, value: 1 }).quantity, 1);
    rejects(() => validateOp({ fc: 5, address: 3, value: 2 }), 'value');
    rejects(() => validateOp({ fc: 5, address: 3, value: 'on' }), 'value');
    rejects(() => validateOp({ fc: 5, address: 3 }), 'value');
    rejects(() => validateOp({ fc: 5, address: 3, values: [true] }), 'values');
    rejects(() => validateOp({ fc: 5, address: 3, value: true, quantity: 2 }), 'quantity');
  });

  it('takes FC6 values as uint16, converting int16 negatives', () => {
    assert.equal(validateOp({ fc: 6, address: 1, value: 65535 }).value, 65535);
    assert.equal(validateOp({ fc: 6, address: 1, value: -1 }).value, 65535);
    assert.equal(validateOp({ fc: 6, address: 1, value: -32768 }).value, 32768);
    rejects(() => validateOp({ fc: 6, address: 1, value: 65536 }), 'value');
    rejects(() => validateOp({ fc: 6, address: 1, value: -32769 }), 'value');
    rejects(() => validateOp({ fc: 6, address: 1, value: 1.5 }), 'value');
    rejects(() => validateOp({ fc: 6, address: 1, value: NaN }), 'value');
  });

  it('takes FC15 values as booleans or 0/1, up to 1968, quantity optional', () => {
    const op = validateOp({ fc: 15, address: 0, values: [true, 0, 1, false] });
    assert.deepEqual([...op.values], [true, false, true, false]);
    assert.equal(op.quantity, 4);
    assert.equal(validateOp({ fc: 15, address: 0, values: new Array(1968).fill(1) }).quantity, 1968);
    rejects(() => validateOp({ fc: 15, address: 0, values: new Array(1969).fill(1) }), 'values');
    rejects(() => validateOp({ fc: 15, address: 0, values: [] }), 'values');
    rejects(() => validateOp({ fc: 15, address: 0, values: [1, 2] }), 'values[1]');
    rejects(() => validateOp({ fc: 15, address: 0, values: [1, 0], quantity: 3 }), 'quantity');
    rejects(() => validateOp({ fc: 15, address: 0 }), 'values');
    assert.equal(validateOp({ fc: 15, address: 0, values: [1, 0], quantity: 2 }).quantity, 2);
  });

  it('takes FC16 values as uint16/int16 numbers or a Buffer, up to 123, quantity optional', () => {
    const op = validateOp({ fc: 16, address: 0, values: [1, -2, 65535] });
    assert.deepEqual([...op.values], [1, 65534, 65535]);
    assert.equal(op.quantity, 3);
    assert.deepEqual([...validateOp({ fc: 16, address: 0, values: Buffer.from([0x12, 0x34, 0xAB, 0xCD]) }).values], [0x1234, 0xABCD]);
    assert.equal(validateOp({ fc: 16, address: 0, values: new Array(123).fill(0) }).quantity, 123);
    rejects(() => validateOp({ fc: 16, address: 0, values: new Array(124).fill(0) }), 'values');
    rejects(() => validateOp({ fc: 16, address: 0, values: [1, 70000] }), 'values[1]');
    rejects(() => validateOp({ fc: 16, address: 0, values: Buffer.from([1, 2, 3]) }), 'values');
    rejects(() => validateOp({ fc: 16, address: 0, values: 'abc' }), 'values');
    rejects(() => validateOp({ fc: 16, address: 0, values: [1, 2], quantity: 1 }), 'quantity');
  });

  it('accepts value as an alias of values for FC15/16, but not both', () => {
    assert.deepEqual([...validateOp({ fc: 16, address: 0, value: [7, 8] }).values], [7, 8]);
    rejects(() => validateOp({ fc: 16, address: 0, value: [7], values: [8] }), 'value');
    rejects(() => validateOp({ fc: 16, address: 0, value: 7 }), 'value');
  });

  it('takes an optional unitId from 0 to 255', () => {
    assert.equal(validateOp({ fc: 3, address: 0, quantity: 1, unitId: 255 }).unitId, 255);
    assert.equal(validateOp({ fc: 3, address: 0, quantity: 1, unitId: 0 }).unitId, 0);
    assert.equal('unitId' in validateOp({ fc: 3, address: 0, quantity: 1 }), false);
    rejects(() => validateOp({ fc: 3, address: 0, quantity: 1, unitId: 256 }), 'unitId');
    rejects(() => validateOp({ fc: 3, address: 0, quantity: 1, unitId: -1 }), 'unitId');
  });

  it('rejects unknown fields, naming them (a typo must not pass silently)', () => {
    const err = rejects(() => validateOp({ fc: 3, adress: 0, address: 0, quantity: 1 }), 'adress');
    assert.match(err.message, /adress/);
  });

  it('rejects non-objects without crashing', () => {
    for (const bad of [null, undefined, 3, [], Buffer.alloc(2), () => {}]) rejects(() => validateOp(bad), 'op');
  });

  it('states the field, the value and the rule in the message', () => {
    const err = rejects(() => validateOp({ fc: 3, address: 70000, quantity: 1 }), 'address');
    assert.equal(err.message, 'op.address must be an integer from 0 to 65535; got 70000');
    assert.equal(err.details.value, 70000);
  });

  it('returns a frozen op that passes through validateOp unchanged', () => {
    const op = validateOp({ fc: 16, address: 0, values: [1, 2] });
    assert.ok(Object.isFrozen(op));
    assert.ok(Object.isFrozen(op.values));
    assert.equal(validateOp(op), op);
  });

  it('does not keep a reference to the caller\'s values array', () => {
    const values = [1, 2];
    const op = validateOp({ fc: 16, address: 0, values });
    values[0] = 99;
    assert.equal(op.values[0], 1);
  });
});

describe('modbus op: parseOpString', () => {
  it('parses reads as fc:address:quantity, quantity 1 by default', () => {
    assert.deepEqual({ ...parseOpString('3:0:10') }, { fc: 3, address: 0, quantity: 10 });
    assert.deepEqual({ ...parseOpString('4:100') }, { fc: 4, address: 100, quantity: 1 });
    assert.deepEqual({ ...parseOpString(' 1 : 5 : 8 ') }, { fc: 1, address: 5, quantity: 8 });
    assert.deepEqual({ ...parseOpString('readHoldingRegisters:0:2') }, { fc: 3, address: 0, quantity: 2 });
  });

  it('parses a unit id after @', () => {
    assert.equal(parseOpString('3:0:10@2').unitId, 2);
    assert.equal(parseOpString('6:1=5@7').unitId, 7);
  });

  it('parses single writes', () => {
    assert.deepEqual({ ...parseOpString('6:10=123') }, { fc: 6, address: 10, quantity: 1, value: 123 });
    assert.equal(parseOpString('6:10=-1').value, 65535);
    assert.equal(parseOpString('6:10=0x1F').value, 31);
    assert.equal(parseOpString('5:3=on').value, true);
    assert.equal(parseOpString('5:3=off').value, false);
    assert.equal(parseOpString('5:3=TRUE').value, true);
    assert.equal(parseOpString('5:3=0').value, false);
  });

  it('parses multiple writes, with an optional matching quantity', () => {
    assert.deepEqual([...parseOpString('16:0=1,2,3').values], [1, 2, 3]);
    assert.equal(parseOpString('16:0:3=1,2,3').quantity, 3);
    assert.deepEqual([...parseOpString('15:0=1,0,on,off').values], [true, false, true, false]);
  });

  it('rejects malformed strings naming op', () => {
    for (const bad of ['', '3', '3:', '3:x:1', ':0:1', '3:0:1:2', '3:0:10=5', '6:10', '6:10=', '6:1=1,2', '5:3=maybe', '16:0=1,,2', '6:1=1.5', '3:0:1@']) {
      rejects(() => parseOpString(bad), 'op');
    }
    rejects(() => parseOpString(42), 'op');
  });

  it('applies the object rules to parsed values, naming the field', () => {
    rejects(() => parseOpString('3:0:200'), 'quantity');
    rejects(() => parseOpString('3:70000:1'), 'address');
    rejects(() => parseOpString('6:1=70000'), 'value');
    rejects(() => parseOpString('16:0:2=1,2,3'), 'quantity');
    rejects(() => parseOpString('3:0:1@300'), 'unitId');
    rejects(() => parseOpString('9:0:1'), 'fc');
  });

  it('round-trips through formatOp', () => {
    for (const s of ['3:0:10', '1:7:3@4', '5:3=1', '6:10=123', '15:0=1,0,1', '16:0=1,2,65535@9']) {
      assert.equal(formatOp(parseOpString(s)), s);
    }
  });

  it('toOp accepts either form', () => {
    assert.equal(toOp('3:0:1').fc, 3);
    assert.equal(toOp({ fc: 4, address: 0, quantity: 1 }).fc, 4);
  });

  it('describeOp names the unit, fc, address and quantity or value', () => {
    assert.equal(describeOp(parseOpString('3:40000:10'), 1), 'unit 1 FC3 address 40000 quantity 10');
    assert.equal(describeOp(parseOpString('6:10=5@2')), 'unit 2 FC6 address 10 value 5');
    assert.equal(describeOp(parseOpString('16:0=1,2')), 'FC16 address 0 quantity 2');
  });
});
