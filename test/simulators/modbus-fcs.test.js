'use strict';

// The simulator's model answering FC8, FC22, FC23 and FC43/14, lacking function codes on demand,
// sparse maps, and a line of units each with its own model. Pure: no sockets.

const assert = require('node:assert/strict');
const { createModbusModel } = require('../../gateway/simulators/modbus/model');
const { createModbusLineModel } = require('../../gateway/simulators/modbus/line-model');
const { encodeRequestPdu, decodeResponsePdu } = require('../../gateway/drivers/modbus/pdu');
const { parseOpString } = require('../../gateway/drivers/modbus/op');
const { readDeviceIdentification } = require('../../gateway/drivers/modbus/device-id');

const hex = (s) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

/** Asks a model an op in its text form, as a client would, and decodes the reply. */
function ask (model, unitId, text) {
  const op = parseOpString(text);
  return decodeResponsePdu(model.handle(unitId, encodeRequestPdu(op)), op, unitId).data;
}

/** A client stand-in over a model, for readDeviceIdentification. */
const clientOf = (model, unitId) => ({
  requests: 0,
  async request (op) {
    this.requests++;
    return { unitId, data: decodeResponsePdu(model.handle(unitId, encodeRequestPdu(op)), op, unitId).data };
  }
});

describe('Modbus simulator: FC22 mask write', () => {
  it('sets (current AND and) OR (or AND NOT and), the spec\'s example included', () => {
    const model = createModbusModel();
    model.setRegister('holdingRegisters', 4, 0x12);
    // §6.16: current 0012, AND 00F2, OR 0025 → 0017
    assert.deepEqual(model.handle(1, hex('16 0004 00F2 0025')), hex('16 0004 00F2 0025'));
    assert.equal(model.getRegister('holdingRegisters', 4), 0x17);
    // set bit 3 only, then clear bit 1 only
    model.setRegister('holdingRegisters', 5, 0xA5A5);
    ask(model, 1, '22:5=0xFFF7,0x0008');
    assert.equal(model.getRegister('holdingRegisters', 5), 0xA5AD);
    ask(model, 1, '22:5=0xFFFD,0x0000');
    assert.equal(model.getRegister('holdingRegisters', 5), 0xA5AD & ~2);
  });

  it('answers exception 2 for a hole and exception 3 for a bad length', () => {
    const model = createModbusModel({ holdingRegisters: 10, holes: { holdingRegisters: [[3, 3]] } });
    assert.deepEqual(model.handle(1, hex('16 0003 FFFF 0000')), hex('96 02'));
    assert.deepEqual(model.handle(1, hex('16 000A FFFF 0000')), hex('96 02'));
    assert.deepEqual(model.handle(1, hex('16 0001 FFFF')), hex('96 03'));
  });
});

describe('Modbus simulator: FC23 read/write multiple', () => {
  it('writes first, then reads, so a read over the written registers returns the new values', () => {
    const model = createModbusModel({ preset: 'pattern' });
    assert.deepEqual(ask(model, 1, '23:8:4=10:500,501'), [8, 9, 500, 501]);
    assert.deepEqual(model.getRegisters('holdingRegisters', 10, 2), [500, 501]);
  });

  it('refuses quantities outside read 1-125 and write 1-121, and a hole in either range', () => {
    const model = createModbusModel({ holes: { holdingRegisters: [[50, 50]] } });
    const req = (rq, wq) => { const b = Buffer.alloc(10 + 2 * wq); b[0] = 23; b.writeUInt16BE(rq, 3); b.writeUInt16BE(wq, 7); b[9] = 2 * wq; return b; };
    assert.deepEqual(model.handle(1, req(126, 1)), hex('97 03'));
    assert.deepEqual(model.handle(1, req(1, 122)), hex('97 03'));
    assert.equal(createModbusModel().handle(1, req(125, 121))[0], 23);
    assert.throws(() => ask(model, 1, '23:49:2=0:1'), { code: 'NINES_ERR_MODBUS_EXCEPTION' });
    assert.throws(() => ask(model, 1, '23:0:2=50:1'), { code: 'NINES_ERR_MODBUS_EXCEPTION' });
    assert.equal(model.getRegister('holdingRegisters', 0), 0, 'a refused request writes nothing');
  });
});

describe('Modbus simulator: FC8 diagnostics', () => {
  it('echoes query data, counts its own messages and exceptions, and clears them on restart and clear', () => {
    const model = createModbusModel({ holdingRegisters: 10 });
    assert.equal(ask(model, 1, '8:0=0xA537'), 0xA537);
    ask(model, 1, '3:0:1');
    assert.throws(() => ask(model, 1, '3:20:1'));
    // this request is the 4th the unit got, and one exception came before it
    assert.equal(ask(model, 1, '8:14'), 4);
    assert.equal(ask(model, 1, '8:13'), 1);
    assert.equal(ask(model, 1, '8:10'), 0);
    assert.equal(ask(model, 1, '8:14'), 1, 'cleared by sub-function 10, then this one');
    ask(model, 1, '8:1=0xFF00');
    assert.equal(ask(model, 1, '8:13'), 0);
    model.noteBusMessage();
    model.noteBusError();
    assert.equal(ask(model, 1, '8:11'), 1);
    assert.equal(ask(model, 1, '8:12'), 1);
  });

  it('answers an unknown sub-function with exception 1 and bad data with exception 3', () => {
    const model = createModbusModel();
    assert.deepEqual(model.handle(1, hex('08 0004 0000')), hex('88 01'));
    assert.deepEqual(model.handle(1, hex('08 000B 0001')), hex('88 03'));
    assert.deepEqual(model.handle(1, hex('08 0001 1234')), hex('88 03'));
  });
});

describe('Modbus simulator: FC43/14 device identification', () => {
  it('says it is the nines simulator by default, and names each unit in object 6', async () => {
    const model = createModbusModel({ unitIds: [3, 17] });
    const id = await readDeviceIdentification(clientOf(model, 17), { readCode: 2, unitId: 17 });
    assert.equal(id.vendorName, 'nines');
    assert.equal(id.productCode, 'NINES-SIM');
    assert.equal(id.userApplicationName, 'unit 17');
    assert.equal(id.conformityLevel, 0x82);
    const basic = await readDeviceIdentification(clientOf(model, 3), { readCode: 1 });
    assert.deepEqual(Object.keys(basic.objects), ['0', '1', '2']);
  });

  it('answers from a preset or given objects, one object at a time (read code 4), exception 2 for one it lacks', async () => {
    const model = createModbusModel({ identification: { preset: 'ED-588', userApplicationName: 'boiler house', objects: { 128: 'serial 42' } } });
    const id = await readDeviceIdentification(clientOf(model, 1), { readCode: 3 });
    assert.equal(id.vendorName, 'Brainboxes');
    assert.equal(id.productCode, 'ED-588');
    assert.equal(id.userApplicationName, 'boiler house');
    assert.equal(id.objects[128], 'serial 42');
    assert.equal(id.conformityLevel, 0x83);
    assert.deepEqual(ask(model, 1, '43:4:128').objects, [[128, 'serial 42']]);
    assert.throws(() => ask(model, 1, '43:4:129'), (err) => err.code === 'NINES_ERR_MODBUS_EXCEPTION' && err.details.exceptionCode === 2);
    assert.throws(() => createModbusModel({ identification: { vendorname: 'x' } }), { code: 'NINES_ERR_INVALID_ARG' });
    assert.throws(() => createModbusModel({ identification: { objects: { 7: 'x' } } }), { code: 'NINES_ERR_INVALID_ARG' });
  });

  it('splits objects that do not fit one reply with "more follows", and the client reads every piece', async () => {
    const objects = {};
    for (let id = 0x80; id < 0x88; id++) objects[id] = `object ${id} `.padEnd(60, '.');
    const model = createModbusModel({ identification: { objects } });
    const first = ask(model, 1, '43:3');
    assert.equal(first.moreFollows, true);
    const client = clientOf(model, 1);
    const id = await readDeviceIdentification(client, { readCode: 3 });
    assert.ok(client.requests >= 3, `${client.requests} requests`);
    for (const [k, v] of Object.entries(objects)) assert.equal(id.objects[k], v);
    assert.equal(id.vendorName, 'nines');
  });

  it('restarts a stream at its beginning when asked from an object it does not hold', () => {
    const model = createModbusModel();
    assert.equal(ask(model, 1, '43:1:9').objects[0][0], 0);
  });
});

describe('Modbus simulator: lacking function codes, sparse maps, a line of units', () => {
  it('answers a function code it lacks with exception 1, which the client reports as unsupported', () => {
    const model = createModbusModel({ lacks: [8, 22, 23, 43] });
    for (const text of ['8:11', '22:0=1,2', '23:0:1=0:1', '43:1']) {
      assert.throws(() => ask(model, 1, text), (err) => err.code === 'NINES_ERR_FC_UNSUPPORTED' && err.details.fc === parseOpString(text).fc, text);
    }
    assert.equal(model.getRegister('holdingRegisters', 0), 0);
    assert.throws(() => createModbusModel({ lacks: [7] }), { code: 'NINES_ERR_INVALID_ARG' });
  });

  it('answers only the ranges of its map, and nothing of a table the map does not name', () => {
    const model = createModbusModel({ map: { holdingRegisters: [[0, 99], [200, 219]], inputRegisters: [[0, 9]] } });
    assert.equal(ask(model, 1, '3:0:100').length, 100);
    assert.equal(ask(model, 1, '3:200:20').length, 20);
    for (const text of ['3:0:101', '3:199:2', '3:219:2', '4:10:1', '1:0:1', '2:0:1']) {
      assert.throws(() => ask(model, 1, text), (err) => err.details.exceptionCode === 2, text);
    }
    assert.throws(() => createModbusModel({ map: { holdingRegisters: [[5, 2]] } }), (err) => err.details.field === 'map.holdingRegisters[0]');
  });

  it('keeps a map, an identification and counters per unit on a line model', () => {
    const line = createModbusLineModel({ units: { 3: { map: { inputRegisters: [[0, 9]] } }, 17: { identification: 'ED-560', lacks: [8] } } });
    assert.deepEqual(line.unitIds, [3, 17]);
    assert.equal(line.serves(3), true);
    assert.equal(line.serves(4), false);
    assert.equal(ask(line, 3, '4:0:10').length, 10);
    assert.throws(() => ask(line, 3, '3:0:1'));
    assert.equal(ask(line, 17, '3:0:1').length, 1);
    assert.equal(ask(line, 17, '43:1').objects[1][1], 'ED-560');
    assert.equal(ask(line, 3, '43:1').objects[1][1], 'NINES-SIM');
    assert.throws(() => ask(line, 17, '8:11'), { code: 'NINES_ERR_FC_UNSUPPORTED' });
    // unit 3's fourth request; unit 17's three are not its
    assert.equal(ask(line, 3, '8:14'), 4);
    ask(line, 17, '6:0=1');
    assert.throws(() => ask(line, 3, '6:0=1'), 'unit 3 has no holding registers');
    assert.equal(line.writeRequests, 2, 'refused writes count too');
    assert.throws(() => createModbusLineModel({ units: { 300: {} } }), (err) => err.details.field === 'units.300');
  });
});
