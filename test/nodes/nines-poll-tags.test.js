'use strict';

/**
 * nines-poll with a tag list: named values decoded in the worker, each with its quality, the read
 * time, the tags that changed and their units; a hole in the device's map costs only its own tag;
 * ED-588 lines as named booleans; a bad list is refused with the field, and nothing is sent.
 */

const assert = require('node:assert/strict');
const { helper, expectError, waitStatus } = require('./harness');
const { createAsciiSimulator } = require('../../gateway/simulators/ascii');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { AsciiClient } = require('../../gateway/drivers/ascii');
const { encodeValues } = require('../../gateway/values/registers');
const asciiDevice = require('../../nodes/nines-ascii-device');
const modbusDevice = require('../../nodes/nines-modbus-device');
const pollNode = require('../../nodes/nines-poll');
const { until } = require('../helpers/wait');

const NODES = [asciiDevice, modbusDevice, pollNode];

const PLC_TAGS = [
  { name: 'boiler_temp', table: 'holding', address: 100, type: 'float32', order: 'CDAB', unit: '°C', deadband: 0.5 },
  { name: 'level', table: 'holding', address: 102, type: 'int16', scale: 0.1, unit: '%' },
  { name: 'pump_on', table: 'coil', address: 3 },
  { name: 'alarm', table: 'holding', address: 103, type: 'bit', bit: 2 }
];

function flow (poll, devices) {
  return [
    { id: 'ad', type: 'nines-ascii-device', host: '127.0.0.1', port: devices.asciiPort || 1, address: '01', timeout: 300, backoffMin: 20, backoffMax: 200 },
    { id: 'md', type: 'nines-modbus-device', transport: 'tcp', host: '127.0.0.1', port: devices.modbusPort || 1, unitId: 1, timeout: 300, backoffMin: 20, backoffMax: 200 },
    {
      id: 'p', type: 'nines-poll', name: 'plant', protocol: 'modbus', asciiDevice: 'ad', modbusDevice: 'md', source: 'tags', tags: PLC_TAGS,
      rate: '100/s', values: 'on-change', deadband: 0, interval: 1, mode: 'worker', autostart: true, wires: [['values'], ['summary']], ...poll
    },
    { id: 'values', type: 'helper' },
    { id: 'summary', type: 'helper' }
  ];
}

function collect () {
  const out = [];
  helper.getNode('values').on('input', (m) => out.push(m));
  return out;
}

describe('nines-poll with a tag list', function () {
  let sim;
  before(() => helper.startServer());
  after(() => helper.stopServer());
  afterEach(async () => {
    await helper.unload();
    if (sim) await sim.close();
    sim = null;
  });

  describe('on a Modbus device', () => {
    function setTemp (value) {
      const [a, b] = encodeValues(value, { type: 'float32', wordOrder: 'little' });
      sim.model.banks.holdingRegisters[100] = a;
      sim.model.banks.holdingRegisters[101] = b;
    }

    it('sends named values with their quality, read time, units and the tags that changed', async () => {
      sim = await createModbusTcpSimulator({ port: 0 });
      const hr = sim.model.banks.holdingRegisters;
      setTemp(71.25);
      hr[102] = 0xFFF6; // -10 → -1.0 %
      hr[103] = 0b100;
      sim.model.banks.coils[3] = 1;
      const before = Date.now();
      await helper.load(NODES, flow({}, { modbusPort: sim.port }));
      const out = collect();
      await until(() => out.length === 1, 'the first values');
      const m = out[0];
      assert.equal(m.topic, 'plant');
      assert.deepEqual(m.payload, { boiler_temp: 71.25, level: -1, pump_on: true, alarm: true });
      assert.deepEqual(m.quality, { boiler_temp: 'ok', level: 'ok', pump_on: 'ok', alarm: 'ok' });
      assert.deepEqual(m.units, { boiler_temp: '°C', level: '%' });
      assert.deepEqual(m.changed.sort(), ['alarm', 'boiler_temp', 'level', 'pump_on']);
      assert.ok(m.ts >= before && m.ts <= Date.now(), `ts ${m.ts}`);

      // within the tag's own deadband: not sent; beyond it: sent, naming only that tag
      setTemp(71.5);
      const polled = sim.stats.requests;
      // two reads per poll (holding 100-103, coil 3): ten polls of the small change
      await until(() => sim.stats.requests >= polled + 20, 'ten polls of the small change');
      assert.equal(out.length, 1);
      setTemp(72);
      await until(() => out.length === 2, 'the change beyond the deadband');
      assert.deepEqual(out[1].changed, ['boiler_temp']);
      assert.equal(out[1].payload.boiler_temp, 72);
    });

    it('reads the tags around a hole in the device\'s map and gives the unreadable tag its error code', async () => {
      sim = await createModbusTcpSimulator({ port: 0, modelOptions: { holes: { holdingRegisters: [[105, 106]] } } });
      const hr = sim.model.banks.holdingRegisters;
      hr[104] = 11;
      hr[107] = 22;
      const tags = [
        { name: 'before', table: 'holding', address: 104 },
        { name: 'missing', table: 'holding', address: 105 },
        { name: 'after', table: 'holding', address: 107 }
      ];
      await helper.load(NODES, flow({ tags }, { modbusPort: sim.port }));
      const out = collect();
      await until(() => out.length >= 1, 'the first values');
      assert.deepEqual(out[0].payload, { before: 11, missing: null, after: 22 });
      assert.deepEqual(out[0].quality, { before: 'ok', missing: 'NINES_ERR_MODBUS_EXCEPTION', after: 'ok' });
      // the hole is reported to Catch nodes, with the tags it held
      const p = helper.getNode('p');
      await until(() => p.error.getCalls().some((c) => c.thisValue === p && c.args[0].code === 'NINES_ERR_MODBUS_EXCEPTION'), 'the hole reported');
    });

    for (const [what, tags, field] of [
      ['overlapping tags', [{ name: 'a', table: 'holding', address: 0, type: 'float32' }, { name: 'b', table: 'holding', address: 1 }], 'tags[1].address'],
      ['an unknown type', [{ name: 'a', table: 'holding', address: 0, type: 'float128' }], 'tags[0].type'],
      ['an address out of range', [{ name: 'a', table: 'holding', address: 70000 }], 'tags[0].address'],
      ['a string longer than a request', [{ name: 'a', table: 'holding', address: 0, type: 'string', length: 126 }], 'tags[0].length'],
      ['duplicate names', [{ name: 'a', table: 'coil', address: 0 }, { name: 'a', table: 'coil', address: 1 }], 'tags[1].name']
    ]) {
      it(`refuses ${what} with a coded error naming the field, and sends nothing`, async () => {
        sim = await createModbusTcpSimulator({ port: 0 });
        await helper.load(NODES, flow({ tags }, { modbusPort: sim.port }));
        const p = helper.getNode('p');
        await waitStatus(p, (s) => s.fill === 'red' && s.text === 'bad argument', 'bad argument');
        const err = await expectError(p, { topic: 'start' });
        assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
        assert.equal(err.details.field, field);
        assert.equal(sim.stats.connections, 0);
        assert.equal(sim.stats.requests, 0);
      });
    }

    it('keeps a flow saved before tag lists polling its one request', async () => {
      sim = await createModbusTcpSimulator({ port: 0 });
      sim.model.banks.holdingRegisters[0] = 5;
      // no source: the node's single request, payload an array as before
      await helper.load(NODES, flow({ source: undefined, tags: undefined, fc: 3, address: 0, quantity: 1, dataType: 'uint16' }, { modbusPort: sim.port }));
      const out = collect();
      await until(() => out.length === 1, 'values');
      assert.deepEqual(out[0].payload, [5]);
      assert.equal(out[0].quality, undefined);
    });
  });

  describe('on an ED-588', () => {
    it('sends the lines as named booleans and the change of one', async () => {
      sim = await createAsciiSimulator({ port: 0, model: 'ED-588' });
      const tags = [
        { name: 'door_closed', table: 'input', address: 0 },
        { name: 'lamp', table: 'output', address: 1 },
        { name: 'pulses', table: 'counter', address: 2 }
      ];
      await helper.load(NODES, flow({ protocol: 'ascii', tags }, { asciiPort: sim.port }));
      const out = collect();
      await until(() => out.length === 1, 'the first values');
      assert.deepEqual(out[0].payload, { door_closed: true, lamp: false, pulses: 0 });
      assert.deepEqual(out[0].quality, { door_closed: 'ok', lamp: 'ok', pulses: 'ok' });
      const c = new AsciiClient(`ascii://127.0.0.1:${sim.port}`, { timeoutMs: 500, reconnect: false });
      try { await c.request('#011101'); } finally { await c.close(); }
      await until(() => out.length === 2, 'the change');
      assert.deepEqual(out[1].changed, ['lamp']);
      assert.equal(out[1].payload.lamp, true);
    });
  });
});
