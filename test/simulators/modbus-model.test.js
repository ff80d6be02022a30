'use strict';

const assert = require('node:assert/strict');
const { createModbusModel, signatureValue } = require('../../gateway/simulators/modbus/model');

const hex = (s) => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const exc = (fc, code) => Buffer.from([fc | 0x80, code]);

describe('Modbus simulator model', () => {
  describe('function codes, happy paths', () => {
    let model;
    beforeEach(() => {
      model = createModbusModel({ coils: 200, discreteInputs: 100, holdingRegisters: 200, inputRegisters: 200 });
    });

    it('FC1 reads coils packed LSB first, padding the last byte with zeros', () => {
      model.setBits('coils', 20, [1, 0, 1, 1, 0, 0, 1, 1, 1, 0]);
      assert.deepEqual(model.handle(1, hex('01 0014 000A')), hex('01 02 CD 01'));
    });

    it('FC2 reads discrete inputs', () => {
      model.setBits('discreteInputs', 0, [true, false, true]);
      assert.deepEqual(model.handle(1, hex('02 0000 0003')), hex('02 01 05'));
    });

    it('FC3 reads holding registers big-endian', () => {
      model.setRegisters('holdingRegisters', 107 - 100, [0x022B, 0x0000, 0x0064]);
      assert.deepEqual(model.handle(1, hex('03 0007 0003')), hex('03 06 022B 0000 0064'));
    });

    it('FC4 reads input registers', () => {
      model.setRegister('inputRegisters', 8, 10);
      assert.deepEqual(model.handle(1, hex('04 0008 0001')), hex('04 02 000A'));
    });

    it('FC5 writes a coil on and off and echoes the request', () => {
      assert.deepEqual(model.handle(1, hex('05 00AC FF00')), hex('05 00AC FF00'));
      assert.equal(model.getBit('coils', 0xAC), true);
      assert.deepEqual(model.handle(1, hex('05 00AC 0000')), hex('05 00AC 0000'));
      assert.equal(model.getBit('coils', 0xAC), false);
    });

    it('FC6 writes a register and echoes the request', () => {
      assert.deepEqual(model.handle(1, hex('06 0001 0003')), hex('06 0001 0003'));
      assert.equal(model.getRegister('holdingRegisters', 1), 3);
    });

    it('FC15 writes coils and answers address and quantity', () => {
      assert.deepEqual(model.handle(1, hex('0F 0013 000A 02 CD 01')), hex('0F 0013 000A'));
      assert.deepEqual(model.getBits('coils', 19, 10).map(Number), [1, 0, 1, 1, 0, 0, 1, 1, 1, 0]);
    });

    it('FC16 writes registers and answers address and quantity', () => {
      assert.deepEqual(model.handle(1, hex('10 0001 0002 04 000A 0102')), hex('10 0001 0002'));
      assert.deepEqual(model.getRegisters('holdingRegisters', 1, 2), [0x000A, 0x0102]);
    });

    it('reads the very last address of a bank and the maximum quantities', () => {
      const big = createModbusModel();
      assert.equal(big.handle(1, hex('03 270F 0001')).length, 4); // 9999, the last of 10000
      assert.equal(big.handle(1, hex('01 0000 07D0')).length, 2 + 250); // 2000 bits
      assert.equal(big.handle(1, hex('03 0000 007D')).length, 2 + 250); // 125 registers
      const coils = Buffer.concat([hex('0F 0000 07B0 F6'), Buffer.alloc(246, 0xFF)]); // 1968 coils
      assert.deepEqual(big.handle(1, coils), hex('0F 0000 07B0'));
      const regs = Buffer.concat([hex('10 0000 007B F6'), Buffer.alloc(246, 0x12)]); // 123 registers
      assert.deepEqual(big.handle(1, regs), hex('10 0000 007B'));
      assert.equal(big.getRegister('holdingRegisters', 122), 0x1212);
    });

    it('answers a PDU inside a larger buffer without slicing it (handleAt)', () => {
      model.setRegister('holdingRegisters', 0, 0xBEEF);
      const buf = hex('FFFF 03 0000 0001 FFFF');
      assert.deepEqual(model.handleAt(1, buf, 2, 7), hex('03 02 BEEF'));
    });
  });

  describe('exceptions', () => {
    const model = createModbusModel({ coils: 16, discreteInputs: 16, holdingRegisters: 16, inputRegisters: 16 });

    it('answers an unsupported function code with exception 1 (illegal function)', () => {
      assert.deepEqual(model.handle(1, hex('07')), exc(7, 1));
      // FC43 MEI type 13 (CANopen); type 14, device identification, is answered now (modbus-fcs.test.js)
      assert.deepEqual(model.handle(1, hex('2B 0D 01 00')), exc(0x2B, 1));
      assert.deepEqual(model.handle(1, hex('00')), exc(0, 1));
    });

    it('answers a read past the end of a bank with exception 2 (illegal data address)', () => {
      assert.deepEqual(model.handle(1, hex('01 000F 0002')), exc(1, 2));
      assert.deepEqual(model.handle(1, hex('02 0010 0001')), exc(2, 2));
      assert.deepEqual(model.handle(1, hex('03 000F 0002')), exc(3, 2));
      assert.deepEqual(model.handle(1, hex('04 FFFF 0001')), exc(4, 2));
    });

    it('answers a write past the end of a bank with exception 2', () => {
      assert.deepEqual(model.handle(1, hex('05 0010 FF00')), exc(5, 2));
      assert.deepEqual(model.handle(1, hex('06 0010 0001')), exc(6, 2));
      assert.deepEqual(model.handle(1, hex('0F 000F 0002 01 03')), exc(15, 2));
      assert.deepEqual(model.handle(1, hex('10 000F 0002 04 0001 0002')), exc(16, 2));
    });

    it('answers quantity 0 or above the limit with exception 3 (illegal data value)', () => {
      assert.deepEqual(model.handle(1, hex('01 0000 0000')), exc(1, 3));
      assert.deepEqual(model.handle(1, hex('02 0000 07D1')), exc(2, 3)); // 2001
      assert.deepEqual(model.handle(1, hex('03 0000 0000')), exc(3, 3));
      assert.deepEqual(model.handle(1, hex('04 0000 007E')), exc(4, 3)); // 126
      assert.deepEqual(model.handle(1, hex('0F 0000 0000 00')), exc(15, 3));
      assert.deepEqual(model.handle(1, Buffer.concat([hex('0F 0000 07B1 F7'), Buffer.alloc(247)])), exc(15, 3)); // 1969
      assert.deepEqual(model.handle(1, hex('10 0000 0000 00')), exc(16, 3));
      assert.deepEqual(model.handle(1, Buffer.concat([hex('10 0000 007C F8'), Buffer.alloc(248)])), exc(16, 3)); // 124
    });

    it('checks the quantity before the address, as the spec orders it', () => {
      assert.deepEqual(model.handle(1, hex('03 FFFF 0000')), exc(3, 3));
    });

    it('answers FC5 with a value other than 0x0000 or 0xFF00 with exception 3', () => {
      assert.deepEqual(model.handle(1, hex('05 0000 0001')), exc(5, 3));
      assert.deepEqual(model.handle(1, hex('05 0000 00FF')), exc(5, 3));
      assert.deepEqual(model.handle(1, hex('05 0000 FFFF')), exc(5, 3));
      assert.equal(model.getBit('coils', 0), false);
    });

    it('answers a byte count that does not match the quantity with exception 3', () => {
      assert.deepEqual(model.handle(1, hex('0F 0000 0009 01 FF')), exc(15, 3)); // 9 coils need 2 bytes
      assert.deepEqual(model.handle(1, hex('10 0000 0002 02 0001')), exc(16, 3)); // 2 registers need 4 bytes
    });

    it('answers a PDU shorter or longer than its byte count says with exception 3', () => {
      assert.deepEqual(model.handle(1, hex('10 0000 0002 04 0001')), exc(16, 3)); // 2 data bytes missing
      assert.deepEqual(model.handle(1, hex('10 0000 0001 02 0001 00')), exc(16, 3)); // 1 byte extra
      assert.deepEqual(model.handle(1, hex('0F 0000 0001')), exc(15, 3)); // no byte count
      assert.deepEqual(model.handle(1, hex('03 0000')), exc(3, 3));
      assert.deepEqual(model.handle(1, hex('06 0000 0001 00')), exc(6, 3));
    });

    it('leaves the bank untouched when a multiple write is refused', () => {
      model.handle(1, hex('10 000F 0002 04 0001 0002'));
      assert.equal(model.getRegister('holdingRegisters', 15), 0);
    });
  });

  describe('unit ids', () => {
    it('does not answer a unit id it does not serve (null: no reply)', () => {
      const model = createModbusModel({ unitIds: [1, 2] });
      assert.equal(model.handle(3, hex('03 0000 0001')), null);
      assert.equal(model.handle(0, hex('03 0000 0001')), null);
      assert.deepEqual(model.handle(2, hex('03 0000 0001')), hex('03 02 0000'));
      assert.equal(model.serves(2), true);
    });

    it("answers every unit id with unitIds 'any'", () => {
      const model = createModbusModel({ unitIds: 'any' });
      for (const id of [0, 1, 17, 247, 255]) assert.deepEqual(model.handle(id, hex('03 0000 0001')), hex('03 02 0000'));
    });

    it('execute answers without a unit check, and an empty PDU gets null', () => {
      const model = createModbusModel({ unitIds: [5] });
      assert.deepEqual(model.execute(hex('06 0000 0007')), hex('06 0000 0007'));
      assert.equal(model.execute(Buffer.alloc(0)), null);
    });
  });

  describe('values, presets and animation', () => {
    it('starts with zeros by default', () => {
      const model = createModbusModel();
      assert.deepEqual(model.getRegisters('holdingRegisters', 0, 3), [0, 0, 0]);
      assert.deepEqual(model.getBits('coils', 9997, 3), [false, false, false]);
    });

    it("fills a 'pattern' preset in which every value tells its address", () => {
      const model = createModbusModel({ preset: 'pattern' });
      assert.deepEqual(model.getRegisters('holdingRegisters', 0, 3), [0, 1, 2]);
      assert.deepEqual(model.getRegisters('inputRegisters', 5, 2), [1005, 1006]);
      assert.deepEqual(model.getBits('coils', 0, 4), [false, true, false, true]);
      assert.deepEqual(model.getBits('discreteInputs', 0, 4), [true, false, false, true]);
    });

    it("answers each unit with its own values under the 'signature' preset, and a write takes an address over for every unit", () => {
      const model = createModbusModel({ preset: 'signature', unitIds: [1, 7] });
      assert.deepEqual(model.handle(1, hex('03 000A 0002')), hex('03 04 03F2 03F3')); // 1010, 1011
      assert.deepEqual(model.handle(7, hex('03 000A 0002')), hex('03 04 1B62 1B63')); // 7010, 7011
      assert.deepEqual(model.handle(7, hex('04 0000 0001')), hex('04 02 9B58')); // 7000 + 32768
      // coils on where unit + address is odd; discrete inputs where it is a multiple of 3
      assert.deepEqual(model.handle(1, hex('01 0000 0004')), hex('01 01 05'));
      assert.deepEqual(model.handle(7, hex('01 0000 0004')), hex('01 01 05')); // a bit tells an odd unit from an even one only
      assert.deepEqual(model.handle(1, hex('02 0000 0006')), hex('02 01 24'));
      for (const [bank, unit, addr] of [['holdingRegisters', 3, 9999], ['inputRegisters', 65, 2], ['coils', 2, 5], ['discreteInputs', 4, 2]]) {
        assert.ok(signatureValue(bank, unit, addr) >= 0 && signatureValue(bank, unit, addr) <= 0xFFFF);
      }
      assert.deepEqual(model.handle(7, hex('06 000A 0005')), hex('06 000A 0005'));
      assert.deepEqual(model.handle(1, hex('03 000A 0002')), hex('03 04 0005 03F3'));
      assert.deepEqual(model.handle(7, hex('03 000A 0002')), hex('03 04 0005 1B63'));
    });

    it('applies an object preset keyed by start address', () => {
      const model = createModbusModel({ preset: { holdingRegisters: { 10: [1, 2, -1] }, coils: { 3: [true, 1] } } });
      assert.deepEqual(model.getRegisters('holdingRegisters', 10, 3), [1, 2, 0xFFFF]);
      assert.deepEqual(model.getBits('coils', 3, 2), [true, true]);
    });

    it('animates input registers 0 and 1 and discrete input 0 from the clock, only when asked', () => {
      let t = 0;
      const model = createModbusModel({ animate: true, now: () => t });
      t = 2500;
      assert.deepEqual(model.handle(1, hex('04 0000 0002')), hex('04 04 0019 07D0')); // 25 ticks; sine at 1/4 period
      assert.deepEqual(model.handle(1, hex('02 0000 0001')), hex('02 01 00')); // 2 s: toggled twice
      t = 3000;
      assert.equal(model.getBit('discreteInputs', 0), true);
      assert.equal(model.getRegister('inputRegisters', 0), 30);
      const still = createModbusModel();
      assert.deepEqual(still.handle(1, hex('04 0000 0002')), hex('04 04 0000 0000'));
    });

    it('animates holding registers 0 and 1 too (FC3), until a write takes one over', () => {
      let t = 0;
      const model = createModbusModel({ animate: true, now: () => t });
      t = 2500;
      assert.deepEqual(model.handle(1, hex('03 0000 0003')), hex('03 06 0019 07D0 0000')); // counter, sine, register 2 still
      t = 5000;
      assert.deepEqual(model.handle(1, hex('03 0000 0001')), hex('03 02 0032'), 'the counter moved: 50 ticks');
      // a client writes register 0: it keeps the value; register 1 keeps moving
      assert.deepEqual(model.handle(1, hex('06 0000 1234')), hex('06 0000 1234'));
      t = 7500;
      assert.deepEqual(model.handle(1, hex('03 0000 0002')), hex('03 04 1234 0000'), 'sine at 3/4 period is 0');
      model.setRegisters('holdingRegisters', 1, [7]);
      t = 9000;
      assert.deepEqual(model.getRegisters('holdingRegisters', 0, 2), [0x1234, 7]);
      const still = createModbusModel();
      assert.deepEqual(still.handle(1, hex('03 0000 0002')), hex('03 04 0000 0000'));
    });
  });

  describe('validation', () => {
    const codeOf = (fn) => {
      try {
        fn();
      } catch (err) {
        return err.code;
      }
      return 'no error';
    };

    it('rejects bad options with NINES_ERR_INVALID_ARG naming the field', () => {
      assert.throws(() => createModbusModel({ coils: 0 }), { code: 'NINES_ERR_INVALID_ARG', message: /coils must be an integer from 1 to 65536; got 0/ });
      assert.throws(() => createModbusModel({ holdingRegisters: 65537 }), { code: 'NINES_ERR_INVALID_ARG' });
      assert.throws(() => createModbusModel({ unitIds: [] }), { code: 'NINES_ERR_INVALID_ARG', message: /unitIds/ });
      assert.throws(() => createModbusModel({ unitIds: [256] }), { code: 'NINES_ERR_INVALID_ARG', message: /unitIds/ });
      assert.throws(() => createModbusModel({ unitIds: 'all' }), { code: 'NINES_ERR_INVALID_ARG', message: /unitIds/ });
      assert.throws(() => createModbusModel({ animate: 'yes' }), { code: 'NINES_ERR_INVALID_ARG', message: /animate/ });
      assert.throws(() => createModbusModel({ coil: 10 }), { code: 'NINES_ERR_INVALID_ARG', message: /options\.coil/ });
      assert.throws(() => createModbusModel({ preset: 'demo' }), { code: 'NINES_ERR_INVALID_ARG', message: /preset/ });
      assert.throws(() => createModbusModel({ preset: { holdingRegisters: { x: [1] } } }), { code: 'NINES_ERR_INVALID_ARG' });
      assert.throws(() => createModbusModel('big'), { code: 'NINES_ERR_INVALID_ARG' });
    });

    it('models a map with holes: a read or write touching one gets exception 2, the rest of the map answers', () => {
      const { holesOption } = require('../../gateway/cli/sim');
      const model = createModbusModel({ holdingRegisters: 100, coils: 16, ...holesOption('hr:50-59,coil:7') });
      assert.deepEqual(model.execute(hex('03 002D 000A')), exc(3, 2)); // 45..54 covers 50
      assert.deepEqual(model.execute(hex('03 003C 0002')), hex('03 04 0000 0000')); // 60..61 is there
      assert.deepEqual(model.execute(hex('03 0028 000A')), hex('03 14' + '0000'.repeat(10))); // 40..49 ends before the hole
      assert.deepEqual(model.execute(hex('06 0037 0001')), exc(6, 2));
      assert.deepEqual(model.execute(hex('10 0031 0002 04 0001 0002')), exc(16, 2));
      assert.deepEqual(model.execute(hex('01 0000 0008')), exc(1, 2));
      assert.deepEqual(model.execute(hex('05 0007 FF00')), exc(5, 2));
      assert.throws(() => createModbusModel({ holdingRegisters: 10, holes: { holdingRegisters: [[5, 10]] } }), { code: 'NINES_ERR_INVALID_ARG', message: /holes\.holdingRegisters\[0\]/ });
      assert.throws(() => holesOption('xx:1'), { code: 'NINES_ERR_INVALID_ARG', message: /--holes/ });
    });

    it('rejects bad accessor arguments with NINES_ERR_INVALID_ARG', () => {
      const model = createModbusModel({ holdingRegisters: 10 });
      assert.equal(codeOf(() => model.setRegister('coils', 0, 1)), 'NINES_ERR_INVALID_ARG');
      assert.equal(codeOf(() => model.setRegister('holdingRegisters', 10, 1)), 'NINES_ERR_INVALID_ARG');
      assert.equal(codeOf(() => model.setRegister('holdingRegisters', 0, 65536)), 'NINES_ERR_INVALID_ARG');
      assert.equal(codeOf(() => model.setRegister('holdingRegisters', 0, 1.5)), 'NINES_ERR_INVALID_ARG');
      assert.equal(codeOf(() => model.getRegisters('holdingRegisters', 8, 3)), 'NINES_ERR_INVALID_ARG');
      assert.equal(codeOf(() => model.setBits('coils', 0, [2])), 'NINES_ERR_INVALID_ARG');
      assert.equal(codeOf(() => model.getBits('inputRegisters', 0, 1)), 'NINES_ERR_INVALID_ARG');
      assert.throws(() => model.setRegisters('holdingRegisters', 0, [1, 'x']), { message: /values\[1\] must be an integer/ });
    });
  });
});
