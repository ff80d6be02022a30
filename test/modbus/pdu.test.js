'use strict';

const assert = require('node:assert/strict');
const { encodeRequestPdu, decodeResponsePdu, responsePduLength } = require('../../gateway/drivers/modbus/pdu');
const { validateOp, parseOpString } = require('../../gateway/drivers/modbus/op');

const hex = (s) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

/** Asserts fn throws a NinesError with `code` and returns it. */
function throwsCode (fn, code) {
  let caught;
  assert.throws(fn, (err) => { caught = err; return err.code === code; }, `expected ${code}`);
  return caught;
}

describe('modbus pdu: encodeRequestPdu', () => {
  it('encodes reads FC1-4 as fc, address, quantity', () => {
    assert.deepEqual(encodeRequestPdu({ fc: 1, address: 0x13, quantity: 0x25 }), hex('01 0013 0025'));
    assert.deepEqual(encodeRequestPdu({ fc: 2, address: 0xC4, quantity: 0x16 }), hex('02 00C4 0016'));
    assert.deepEqual(encodeRequestPdu({ fc: 3, address: 0x6B, quantity: 3 }), hex('03 006B 0003'));
    assert.deepEqual(encodeRequestPdu({ fc: 4, address: 8, quantity: 1 }), hex('04 0008 0001'));
  });

  it('encodes FC5 on as FF00 and off as 0000', () => {
    assert.deepEqual(encodeRequestPdu({ fc: 5, address: 0xAC, value: true }), hex('05 00AC FF00'));
    assert.deepEqual(encodeRequestPdu({ fc: 5, address: 0xAC, value: 0 }), hex('05 00AC 0000'));
  });

  it('encodes FC6 with int16 values as two\'s complement', () => {
    assert.deepEqual(encodeRequestPdu({ fc: 6, address: 1, value: 3 }), hex('06 0001 0003'));
    assert.deepEqual(encodeRequestPdu({ fc: 6, address: 1, value: -2 }), hex('06 0001 FFFE'));
  });

  it('encodes FC15 coils least significant bit first, padded with zeros', () => {
    // Spec example: 10 coils from 19 (0x13) = CD 01
    const values = [1, 0, 1, 1, 0, 0, 1, 1, 1, 0];
    assert.deepEqual(encodeRequestPdu({ fc: 15, address: 0x13, values }), hex('0F 0013 000A 02 CD01'));
  });

  it('encodes FC16 registers big-endian with the byte count', () => {
    assert.deepEqual(encodeRequestPdu({ fc: 16, address: 1, values: [0x000A, 0x0102] }), hex('10 0001 0002 04 000A 0102'));
  });

  it('encodes a normalized op once and reuses the bytes', () => {
    const op = parseOpString('3:0:10');
    assert.equal(encodeRequestPdu(op), encodeRequestPdu(op));
  });

  it('validates a raw op first', () => {
    throwsCode(() => encodeRequestPdu({ fc: 3, address: 0 }), 'NINES_ERR_INVALID_OP');
  });
});

describe('modbus pdu: decodeResponsePdu', () => {
  it('decodes FC1/FC2 into booleans, least significant bit first', () => {
    // Spec example: coils 20-38 = CD 6B 05
    const r = decodeResponsePdu(hex('01 03 CD6B05'), { fc: 1, address: 19, quantity: 19 });
    assert.deepEqual(r.data, [true, false, true, true, false, false, true, true, true, true, false, true, false, true, true, false, true, false, true]);
    assert.deepEqual(r.buffer, hex('CD6B05'));
    assert.deepEqual(decodeResponsePdu(hex('02 01 05'), { fc: 2, address: 0, quantity: 3 }).data, [true, false, true]);
  });

  it('decodes FC3/FC4 into uint16 numbers plus the raw register bytes', () => {
    const r = decodeResponsePdu(hex('03 06 022B 0000 FFFF'), { fc: 3, address: 0x6B, quantity: 3 });
    assert.deepEqual(r.data, [555, 0, 65535]);
    assert.deepEqual(r.buffer, hex('022B 0000 FFFF'));
    assert.deepEqual(decodeResponsePdu(hex('04 02 000A'), { fc: 4, address: 8, quantity: 1 }).data, [10]);
  });

  it('checks the echo of single writes', () => {
    assert.equal(decodeResponsePdu(hex('05 00AC FF00'), { fc: 5, address: 0xAC, value: true }).data, true);
    assert.equal(decodeResponsePdu(hex('06 0001 FFFE'), { fc: 6, address: 1, value: -2 }).data, 0xFFFE);
    throwsCode(() => decodeResponsePdu(hex('05 00AC 0000'), { fc: 5, address: 0xAC, value: true }), 'NINES_ERR_BAD_REPLY');
    throwsCode(() => decodeResponsePdu(hex('05 00AD FF00'), { fc: 5, address: 0xAC, value: true }), 'NINES_ERR_BAD_REPLY');
    throwsCode(() => decodeResponsePdu(hex('06 0001 0004'), { fc: 6, address: 1, value: 3 }), 'NINES_ERR_BAD_REPLY');
    throwsCode(() => decodeResponsePdu(hex('06 0002 0003'), { fc: 6, address: 1, value: 3 }), 'NINES_ERR_BAD_REPLY');
  });

  it('checks the echo of multiple writes (address and quantity)', () => {
    assert.equal(decodeResponsePdu(hex('0F 0013 000A'), { fc: 15, address: 0x13, values: new Array(10).fill(1) }).data, 10);
    assert.equal(decodeResponsePdu(hex('10 0001 0002'), { fc: 16, address: 1, values: [1, 2] }).data, 2);
    const err = throwsCode(() => decodeResponsePdu(hex('10 0001 0003'), { fc: 16, address: 1, values: [1, 2] }), 'NINES_ERR_BAD_REPLY');
    assert.match(err.message, /quantity 3/);
    assert.equal(err.details.pdu, '1000010003');
    throwsCode(() => decodeResponsePdu(hex('0F 0014 000A'), { fc: 15, address: 0x13, values: new Array(10).fill(1) }), 'NINES_ERR_BAD_REPLY');
    throwsCode(() => decodeResponsePdu(hex('10 0001 0002 00'), { fc: 16, address: 1, values: [1, 2] }), 'NINES_ERR_BAD_REPLY');
  });

  it('turns an exception reply into NINES_ERR_MODBUS_EXCEPTION with code, name, fc and op', () => {
    const op = validateOp({ fc: 3, address: 40000, quantity: 10 });
    const err = throwsCode(() => decodeResponsePdu(hex('83 02'), op, 1), 'NINES_ERR_MODBUS_EXCEPTION');
    assert.equal(err.message, 'unit 1 FC3 address 40000 quantity 10: exception 2 ILLEGAL DATA ADDRESS');
    assert.equal(err.details.exceptionCode, 2);
    assert.equal(err.details.exceptionName, 'ILLEGAL DATA ADDRESS');
    assert.equal(err.details.fc, 3);
    assert.equal(err.details.op, op);
    const unknown = throwsCode(() => decodeResponsePdu(hex('90 42'), { fc: 16, address: 0, values: [1] }), 'NINES_ERR_MODBUS_EXCEPTION');
    assert.equal(unknown.details.exceptionName, 'UNKNOWN EXCEPTION 66');
  });

  it('rejects a wrong function code echo, naming both', () => {
    const err = throwsCode(() => decodeResponsePdu(hex('04 02 0001'), { fc: 3, address: 0, quantity: 1 }), 'NINES_ERR_BAD_REPLY');
    assert.match(err.message, /function code 4, expected 3/);
    throwsCode(() => decodeResponsePdu(hex('84 02'), { fc: 3, address: 0, quantity: 1 }), 'NINES_ERR_BAD_REPLY');
  });

  it('rejects byte count and length mismatches with the raw bytes as hex', () => {
    const op = { fc: 3, address: 0, quantity: 2 };
    const err = throwsCode(() => decodeResponsePdu(hex('03 02 0001'), op), 'NINES_ERR_BAD_REPLY');
    assert.equal(err.details.pdu, '03020001');
    throwsCode(() => decodeResponsePdu(hex('03 04 0001'), op), 'NINES_ERR_BAD_REPLY');
    throwsCode(() => decodeResponsePdu(hex('03 04 0001 0002 00'), op), 'NINES_ERR_BAD_REPLY');
    throwsCode(() => decodeResponsePdu(hex('03'), op), 'NINES_ERR_BAD_REPLY');
    throwsCode(() => decodeResponsePdu(Buffer.alloc(0), op), 'NINES_ERR_BAD_REPLY');
    throwsCode(() => decodeResponsePdu(hex('83 02 00'), op), 'NINES_ERR_BAD_REPLY');
    throwsCode(() => decodeResponsePdu(hex('01 01'), { fc: 1, address: 0, quantity: 9 }), 'NINES_ERR_BAD_REPLY');
  });

  it('survives random garbage without throwing anything but coded errors', () => {
    const ops = ['1:0:9', '2:0:16', '3:0:3', '4:0:1', '5:0=1', '6:0=7', '15:0=1,0,1', '16:0=1,2'].map(parseOpString);
    let seed = 1;
    const rnd = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed / 0x80000000; };
    for (let i = 0; i < 2000; i++) {
      const pdu = Buffer.alloc(Math.floor(rnd() * 10));
      for (let k = 0; k < pdu.length; k++) pdu[k] = Math.floor(rnd() * 256);
      const op = ops[i % ops.length];
      if (pdu.length) pdu[0] = rnd() < 0.7 ? op.fc : pdu[0];
      try {
        decodeResponsePdu(pdu, op);
      } catch (err) {
        assert.ok(['NINES_ERR_BAD_REPLY', 'NINES_ERR_MODBUS_EXCEPTION'].includes(err.code), err.message);
      }
    }
  });

  it('knows the normal response length of every function code', () => {
    assert.equal(responsePduLength({ fc: 1, quantity: 9 }), 4);
    assert.equal(responsePduLength({ fc: 3, quantity: 10 }), 22);
    assert.equal(responsePduLength({ fc: 16, quantity: 10 }), 5);
  });
});
