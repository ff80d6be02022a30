'use strict';

// FC8, FC22, FC23 and FC43/14 without a socket: ops and their text form, request PDUs, reply checks,
// RTU frame lengths, and the coded error for a device that lacks one of them.

const assert = require('node:assert/strict');
const { validateOp, parseOpString, formatOp, describeOp, changesDevice } = require('../../gateway/drivers/modbus/op');
const { encodeRequestPdu, decodeResponsePdu } = require('../../gateway/drivers/modbus/pdu');
const { rtuRequestLength, rtuResponseLength, rtuFrame } = require('../../gateway/drivers/modbus/frame');

const hex = (s) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

/** @returns {Error & {code: string, details: any}} what fn threw, after checking its code */
function throwsCode (fn, code) {
  let caught;
  assert.throws(fn, (err) => { caught = err; return err.code === code; }, `expected ${code}`);
  return caught;
}

describe('modbus FC8, FC22, FC23, FC43: ops', () => {
  it('normalizes each object form', () => {
    assert.deepEqual({ ...validateOp({ fc: 22, address: 7, andMask: 0xFFF7, orMask: 8 }) }, { fc: 22, address: 7, quantity: 1, andMask: 0xFFF7, orMask: 8 });
    assert.deepEqual({ ...validateOp({ fc: 'readWriteMultipleRegisters', address: 0, quantity: 4, writeAddress: 10, values: [1, -2] }) },
      { fc: 23, address: 0, quantity: 4, writeAddress: 10, values: [1, 0xFFFE] });
    assert.deepEqual({ ...validateOp({ fc: 8, subFunction: 11 }) }, { fc: 8, subFunction: 11, data: 0 });
    assert.deepEqual({ ...validateOp({ fc: 'readDeviceIdentification', readCode: 2, unitId: 5 }) }, { fc: 43, readCode: 2, objectId: 0, unitId: 5 });
  });

  it('reads the text forms, and formatOp writes them back', () => {
    for (const [text, op] of [
      ['22:7=0xFFF7,0x0008', { fc: 22, address: 7, quantity: 1, andMask: 0xFFF7, orMask: 8 }],
      ['23:0:4=10:1,2', { fc: 23, address: 0, quantity: 4, writeAddress: 10, values: [1, 2] }],
      ['8:11', { fc: 8, subFunction: 11, data: 0 }],
      ['8:0=0x1234@3', { fc: 8, subFunction: 0, data: 0x1234, unitId: 3 }],
      ['43:1', { fc: 43, readCode: 1, objectId: 0 }],
      ['43:4:129', { fc: 43, readCode: 4, objectId: 129 }]
    ]) {
      const o = parseOpString(text);
      assert.deepEqual({ ...o }, op, text);
      assert.deepEqual({ ...parseOpString(formatOp(o)) }, op, `${text} → ${formatOp(o)}`);
    }
  });

  it('refuses masks outside 0-65535, FC23 quantities outside read 1-125 and write 1-121, an unknown FC8 sub-function, an FC43 read code outside 1-4 and an object id outside 0-255, naming the field', () => {
    const cases = [
      [{ fc: 22, address: 0, andMask: 65536, orMask: 0 }, 'andMask'],
      [{ fc: 22, address: 0, andMask: 0, orMask: -1 }, 'orMask'],
      [{ fc: 22, address: 0, andMask: 0 }, 'orMask'],
      [{ fc: 23, address: 0, quantity: 126, writeAddress: 0, values: [1] }, 'quantity'],
      [{ fc: 23, address: 0, quantity: 0, writeAddress: 0, values: [1] }, 'quantity'],
      [{ fc: 23, address: 0, quantity: 1, writeAddress: 0, values: new Array(122).fill(0) }, 'values'],
      [{ fc: 23, address: 0, quantity: 1, writeAddress: 0, values: [] }, 'values'],
      [{ fc: 23, address: 0, quantity: 1, values: [1] }, 'writeAddress'],
      [{ fc: 8, subFunction: 4 }, 'subFunction'],
      [{ fc: 8, subFunction: 11, data: 1 }, 'data'],
      [{ fc: 8, subFunction: 1, data: 0x00FF }, 'data'],
      [{ fc: 43, readCode: 0 }, 'readCode'],
      [{ fc: 43, readCode: 5 }, 'readCode'],
      [{ fc: 43, readCode: 4, objectId: 256 }, 'objectId'],
      [{ fc: 43, readCode: 1, address: 0 }, 'address'],
      [{ fc: 3, address: 0, quantity: 1, andMask: 1 }, 'andMask']
    ];
    for (const [op, field] of cases) {
      const err = throwsCode(() => validateOp(op), 'NINES_ERR_INVALID_OP');
      assert.equal(err.details.field, field, `${JSON.stringify(op)}: ${err.message}`);
    }
    // the largest of each is taken
    validateOp({ fc: 23, address: 0, quantity: 125, writeAddress: 0, values: new Array(121).fill(0) });
    validateOp({ fc: 22, address: 65535, andMask: 65535, orMask: 65535 });
    validateOp({ fc: 43, readCode: 4, objectId: 255 });
    throwsCode(() => parseOpString('22:7=1'), 'NINES_ERR_INVALID_OP');
    throwsCode(() => parseOpString('23:0:4=1,2'), 'NINES_ERR_INVALID_OP');
  });

  it('takes its own normalized op back, as callers that copy an op do', () => {
    for (const text of ['22:7=1,2', '23:0:4=10:1,2', '8:11', '43:4:9']) {
      const o = parseOpString(text);
      assert.deepEqual({ ...validateOp({ ...o }) }, { ...o }, text);
    }
    throwsCode(() => validateOp({ fc: 22, address: 0, andMask: 0, orMask: 0, quantity: 2 }), 'NINES_ERR_INVALID_OP');
  });

  it('says which ops change the device: the writes, and FC8 restart and clear counters', () => {
    assert.equal(changesDevice(parseOpString('22:7=1,2')), true);
    assert.equal(changesDevice(parseOpString('23:0:1=0:1')), true);
    assert.equal(changesDevice(parseOpString('8:1')), true);
    assert.equal(changesDevice(parseOpString('8:10')), true);
    assert.equal(changesDevice(parseOpString('8:11')), false);
    assert.equal(changesDevice(parseOpString('43:1')), false);
    assert.equal(changesDevice(parseOpString('3:0:1')), false);
  });

  it('describes each for messages', () => {
    assert.equal(describeOp(parseOpString('43:2'), 4), 'unit 4 FC43/14 read code 2 object 0');
    assert.equal(describeOp(parseOpString('8:11')), 'FC8 sub-function 11');
    assert.equal(describeOp(parseOpString('23:0:4=10:1,2'), 1), 'unit 1 FC23 address 0 quantity 4 write address 10 quantity 2');
  });
});

describe('modbus FC8, FC22, FC23, FC43: PDUs', () => {
  it('encodes the requests as the spec lays them out', () => {
    // §6.16's example: address 4, AND 00F2, OR 0025
    assert.deepEqual(encodeRequestPdu({ fc: 22, address: 4, andMask: 0xF2, orMask: 0x25 }), hex('16 0004 00F2 0025'));
    // §6.17's example: read 6 from 3, write 3 (00FF 00FF 00FF) at 14
    assert.deepEqual(encodeRequestPdu({ fc: 23, address: 3, quantity: 6, writeAddress: 14, values: [0xFF, 0xFF, 0xFF] }), hex('17 0003 0006 000E 0003 06 00FF 00FF 00FF'));
    assert.deepEqual(encodeRequestPdu({ fc: 8, subFunction: 0, data: 0xA537 }), hex('08 0000 A537'));
    assert.deepEqual(encodeRequestPdu({ fc: 43, readCode: 1, objectId: 0 }), hex('2B 0E 01 00'));
  });

  it('decodes the replies', () => {
    assert.deepEqual(decodeResponsePdu(hex('16 0004 00F2 0025'), { fc: 22, address: 4, andMask: 0xF2, orMask: 0x25 }).data, { andMask: 0xF2, orMask: 0x25 });
    const rw = decodeResponsePdu(hex('17 0C 00FE 0ACD 0001 0003 000D 00FF'), { fc: 23, address: 3, quantity: 6, writeAddress: 14, values: [0xFF] });
    assert.deepEqual(rw.data, [0xFE, 0xACD, 1, 3, 0xD, 0xFF]);
    assert.deepEqual(rw.buffer, hex('00FE 0ACD 0001 0003 000D 00FF'));
    assert.equal(decodeResponsePdu(hex('08 0000 A537'), { fc: 8, subFunction: 0, data: 0xA537 }).data, 0xA537);
    assert.equal(decodeResponsePdu(hex('08 000B 0102'), { fc: 8, subFunction: 11 }).data, 0x0102);
    // §6.21's example: basic, three objects, no more
    const id = decodeResponsePdu(Buffer.concat([hex('2B 0E 01 01 00 00 03'),
      Buffer.from([0, 16]), Buffer.from('Company identifi', 'latin1'), Buffer.from([1, 11]), Buffer.from('Product cod', 'latin1'), Buffer.from([2, 5]), Buffer.from('V2.11', 'latin1')]),
    { fc: 43, readCode: 1 }).data;
    assert.deepEqual(id, { readCode: 1, conformityLevel: 1, moreFollows: false, nextObjectId: 0, objects: [[0, 'Company identifi'], [1, 'Product cod'], [2, 'V2.11']] });
  });

  it('refuses replies that do not fit their request', () => {
    const bad = [
      [hex('16 0004 00F2 0026'), { fc: 22, address: 4, andMask: 0xF2, orMask: 0x25 }],
      [hex('17 0A 00FE 0ACD 0001 0003 000D'), { fc: 23, address: 3, quantity: 6, writeAddress: 14, values: [1] }],
      [hex('08 0000 A536'), { fc: 8, subFunction: 0, data: 0xA537 }],
      [hex('08 000C 0000'), { fc: 8, subFunction: 11 }],
      [hex('2B 0E 02 01 00 00 00'), { fc: 43, readCode: 1 }], // another read code
      [hex('2B 0E 01 01 00 00 01 00 05 41'), { fc: 43, readCode: 1 }], // an object past the end
      [hex('2B 0E 01 01 00 00 01 00 01 41 42'), { fc: 43, readCode: 1 }], // a byte after the last object
      [hex('2B 0E 01 01 7F 00 00'), { fc: 43, readCode: 1 }] // "more follows" neither 00 nor FF
    ];
    for (const [pdu, op] of bad) throwsCode(() => decodeResponsePdu(pdu, op), 'NINES_ERR_BAD_REPLY');
  });

  it('reports exception 1 to FC8, 22, 23 or 43 as NINES_ERR_FC_UNSUPPORTED naming the FC, and keeps NINES_ERR_MODBUS_EXCEPTION for FC3', () => {
    for (const [fc, op] of [[8, '8:11'], [22, '22:0=1,2'], [23, '23:0:1=0:1'], [43, '43:1']]) {
      const err = throwsCode(() => decodeResponsePdu(Buffer.from([fc | 0x80, 1]), parseOpString(op), 3), 'NINES_ERR_FC_UNSUPPORTED');
      assert.equal(err.details.fc, fc);
      assert.match(err.message, new RegExp(`does not support FC${fc}`));
    }
    throwsCode(() => decodeResponsePdu(hex('AB 02'), parseOpString('43:4:7')), 'NINES_ERR_MODBUS_EXCEPTION');
    throwsCode(() => decodeResponsePdu(hex('83 01'), parseOpString('3:0:1')), 'NINES_ERR_MODBUS_EXCEPTION');
  });
});

describe('modbus FC8, FC22, FC23, FC43: RTU frame lengths', () => {
  it('knows each request\'s length from its first bytes', () => {
    for (const text of ['8:0=0x1234', '22:7=1,2', '23:0:4=10:1,2,3', '43:4:129']) {
      const adu = rtuFrame(1, encodeRequestPdu(parseOpString(text)));
      assert.equal(rtuRequestLength(adu), adu.length, text);
    }
    assert.equal(rtuRequestLength(hex('01 17 0000 0004 000A')), 0, 'FC23 before its byte count');
  });

  it('knows each reply\'s length, FC43\'s from its objects as they come, byte by byte', () => {
    const pdu = Buffer.concat([hex('2B 0E 02 82 00 00 02'), Buffer.from([0, 3]), Buffer.from('abc'), Buffer.from([4, 2]), Buffer.from('xy')]);
    const adu = rtuFrame(9, pdu);
    for (let n = 0; n < adu.length; n++) {
      const got = rtuResponseLength(adu.subarray(0, n));
      // known once the last object's header is in
      const known = n >= 1 + 7 + 5 + 2;
      assert.equal(got, known ? adu.length : 0, `after ${n} bytes`);
    }
    assert.equal(rtuResponseLength(rtuFrame(1, hex('17 04 0001 0002'))), 9);
    assert.equal(rtuResponseLength(rtuFrame(1, hex('16 0004 00F2 0025'))), 10);
    assert.equal(rtuResponseLength(rtuFrame(1, hex('08 000B 0000'))), 8);
    assert.equal(rtuResponseLength(hex('01 2B 0D 01 01 00 00 00')), -1, 'another MEI type');
  });
});
