'use strict';

/**
 * The new types against an encoder that is not ours (issue 23): pymodbus's payload builder writes
 * each of them it can build (float16 in every order, int8 and uint8 into the two bytes of a
 * register, strings high-low and low-high, bit fields, float32 NaN and the -3.4e38 sentinel, a
 * value and its SunSpec scale register) into the simulator, and nines reads them back by tag.
 * pymodbus 3.0's builder has no BCD, so BCD is checked against data-sheet vectors only
 * (test/gateway/register-types.test.js).
 */

const assert = require('node:assert/strict');
const { buildTags, tagContext } = require('../../gateway/tags/spec');
const { planReads } = require('../../gateway/tags/plan');
const { TagReader } = require('../../gateway/tags/reader');
const { parseTarget } = require('../../gateway/drivers/target');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { Device } = require('../../gateway/devices');
const { runPymodbus } = require('../helpers/pymodbus');

const CTX = tagContext(parseTarget('modbus+tcp://127.0.0.1:502'), {});
const ORDERS = ['ABCD', 'CDAB', 'BADC', 'DCBA'];
const H = (name, address, more) => ({ name, table: 'holding', address, ...more });

describe('new tag types against pymodbus\'s payload builder (issue 23)', function () {
  this.timeout(30000);
  let sim, device;
  afterEach(async () => {
    if (device) await device.close();
    if (sim) await sim.close();
    sim = device = null;
  });

  it('reads by tag what pymodbus wrote: float16, int8/uint8, strings both ways, bit fields, a scaled value, and no-value floats as a quality', async () => {
    sim = await createModbusTcpSimulator({ port: 0 });
    const bits = (...on) => Array.from({ length: 8 }, (_, i) => on.includes(i));
    const writes = [
      ...ORDERS.map((order, i) => ({ address: i, type: 'float16', order, value: 0.1 })),
      ...ORDERS.map((order, i) => ({ address: 4 + i, type: 'float16', order, value: -65504 })),
      { address: 10, parts: [{ type: 'int8', value: -5 }, { type: 'uint8', value: 200 }] },
      { address: 11, parts: [{ type: 'uint8', value: 255 }, { type: 'int8', value: -128 }] },
      { address: 20, type: 'string', value: '  PUMP-7' },
      // low-high: each register's bytes swapped, the first character in the low byte
      { address: 30, type: 'string', order: 'BADC', repack: true, value: 'ABCDE' },
      // the high byte's bits 0 and 2 are the register's bits 8 and 10; the low byte's 4, 5 and 7 its 4, 5 and 7
      { address: 40, parts: [{ type: 'bits', value: bits(0, 2) }, { type: 'bits', value: bits(4, 5, 7) }] },
      { address: 50, type: 'float32', order: 'ABCD', value: 'nan' },
      { address: 52, type: 'float32', order: 'CDAB', value: '-3.4e38' },
      { address: 54, type: 'float32', order: 'ABCD', value: '3.3e38' },
      { address: 56, type: 'float64', order: 'DCBA', value: '-inf' },
      { address: 60, type: 'uint16', order: 'ABCD', value: 12345 },
      { address: 61, type: 'int16', order: 'ABCD', value: -2 }
    ];
    const written = await runPymodbus({ port: sim.port, writes });
    // what pymodbus laid out is what the types say, not only what nines reads back
    assert.deepEqual(written[0], [0x2E66]);
    assert.deepEqual(written[2], [0x662E]);
    assert.deepEqual(written[8], [0xFBC8]);
    assert.deepEqual(written[11], [0x4241, 0x4443, 0x0045]);
    assert.deepEqual(written[12], [0x05B0]);

    const list = [
      ...ORDERS.map((order, i) => H(`small_${order}`, i, { type: 'float16', order })),
      ...ORDERS.map((order, i) => H(`min_${order}`, 4 + i, { type: 'float16', order })),
      H('hi', 10, { type: 'int8', byte: 'high' }), H('lo', 10, { type: 'uint8', byte: 'low' }),
      H('hi2', 11, { type: 'uint8', byte: 'high' }), H('lo2', 11, { type: 'int8', byte: 'low' }),
      H('label', 20, { type: 'string', length: 6 }),
      H('code', 30, { type: 'string', length: 3, byteOrder: 'little' }),
      H('mode', 40, { type: 'bits', bit: '8-10', enum: { 0: 'auto', 5: 'service' } }),
      H('fan', 40, { type: 'bits', bit: '4-5' }),
      H('ready', 40, { type: 'bit', bit: 7 }),
      H('nan', 50, { type: 'float32' }), H('sentinel', 52, { type: 'float32', order: 'CDAB' }), H('big', 54, { type: 'float32' }),
      H('minus_inf', 56, { type: 'float64', order: 'DCBA' }),
      H('power', 60, { type: 'uint16', scaleFrom: 'power_sf', unit: 'W' }), H('power_sf', 61, { type: 'int16' })
    ];
    device = new Device({ name: 'plc', target: sim.url, timeoutMs: 2000 });
    await device.open();
    const user = device.user('test', { queueMax: 16 });
    const tags = buildTags(list, CTX);
    const r = new TagReader({ tags, blocks: planReads(tags, CTX), request: (op, o) => user.request(op, o) });
    const { values, quality } = await r.poll();
    const want = {
      ...Object.fromEntries(ORDERS.map((o) => [`small_${o}`, 0.1])),
      ...Object.fromEntries(ORDERS.map((o) => [`min_${o}`, -65504])),
      hi: -5, lo: 200, hi2: 255, lo2: -128,
      label: 'PUMP-7', code: 'ABCDE',
      mode: 'service', fan: 3, ready: true,
      nan: null, sentinel: null, big: 3.3e38, minus_inf: null,
      power: 123.45, power_sf: -2
    };
    assert.deepEqual(values, want);
    const bad = { nan: 'NINES_ERR_NO_VALUE', sentinel: 'NINES_ERR_NO_VALUE', minus_inf: 'NINES_ERR_NO_VALUE' };
    assert.deepEqual(quality, Object.fromEntries(Object.keys(want).map((k) => [k, bad[k] || 'ok'])));
  });
});
