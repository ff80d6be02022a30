'use strict';

const assert = require('node:assert/strict');
const mqtt = require('mqtt');
const { validateConfig } = require('../../gateway/runtime/config');
const { Gateway } = require('../../gateway/runtime/gateway');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { runPymodbus } = require('../helpers/pymodbus');
const { until } = require('../helpers/wait');

const ORDERS = ['ABCD', 'CDAB', 'BADC', 'DCBA'];
const WRITTEN = { float32: -1234.5678, int32: -123456789, float64: 6.02214076e23 };
const WORDS = { float32: 2, int32: 2, float64: 4 };

/** Starts a gateway on the embedded broker (port 0) and a subscriber to its value topics */
async function startGateway (config) {
  const gw = new Gateway(validateConfig(config, { env: {} }));
  await gw.start();
  const client = await mqtt.connectAsync(gw.broker.url);
  const values = [];
  client.on('message', (topic, payload) => {
    if (topic.endsWith('/value')) values.push({ topic, body: JSON.parse(payload.toString()) });
  });
  await client.subscribeAsync('nines/#', { qos: 1 });
  return { gw, client, values };
}

describe('tags through the gateway: named values over MQTT, decoded in the worker', function () {
  this.timeout(30000);
  let sim, run;
  afterEach(async () => {
    if (run) { await run.client.endAsync(); await run.gw.stop(); }
    if (sim) await sim.close();
    sim = run = null;
  });

  it('values pymodbus wrote in all four orders, as float32, int32 and float64, decode to what it wrote', async () => {
    sim = await createModbusTcpSimulator({ port: 0 });
    const writes = [];
    const tags = [];
    let address = 0;
    for (const type of Object.keys(WRITTEN)) {
      for (const order of ORDERS) {
        writes.push({ address, type, order, value: WRITTEN[type] });
        tags.push({ name: `${type}_${order}`, table: 'holding', address, type, order });
        address += WORDS[type] + 3; // gaps between tags: the plan still reads them in one request
      }
    }
    await runPymodbus({ port: sim.port, writes });
    run = await startGateway({
      gateway: { id: 'interop', interval: '1s', workers: 1 },
      mqtt: { embedded: { port: 0 } },
      devices: { plc: { target: sim.url, tags: { all: tags } } },
      jobs: [{ name: 'orders', device: 'plc', tags: 'all', rate: '5/s' }]
    });
    await until(() => run.values.length > 0);
    const { body, topic } = run.values[0];
    assert.equal(topic, 'nines/interop/orders/value');
    for (const t of tags) {
      // a float32 is given as its shortest decimal (values/rounding.js): the float32 pymodbus wrote for
      // -1234.5678 is -1234.5677490234375, whose nearest 8-digit decimal is -1234.5677
      const want = t.type === 'float32' ? -1234.5677 : WRITTEN[t.type];
      assert.equal(body.values[t.name], want, `${t.name}`);
      assert.equal(body.quality[t.name], 'ok');
    }
    assert.deepEqual(body.changed.sort(), tags.map((t) => t.name).sort());
    // read time, not publish time: within the poll period of now
    assert.ok(Math.abs(Date.now() - body.ts) < 5000);
    // twelve tags over 78 registers: one read
    await until(() => run.gw.latest.has('orders'));
    assert.deepEqual(run.gw.latest.get('orders').tags, { count: 12, reads: 1 });
  });

  it('publishes a tag the device cannot read with its code, and every tag\'s quality when the device goes away', async () => {
    sim = await createModbusTcpSimulator({ port: 0, modelOptions: { holes: { holdingRegisters: [[5, 5]] } } });
    sim.model.setRegister('holdingRegisters', 0, 42);
    run = await startGateway({
      gateway: { id: 'q', interval: '1s', workers: 1 },
      mqtt: { embedded: { port: 0 } },
      devices: { plc: { target: sim.url, timeout: '200ms', backoff: { min: '100ms', max: '200ms' } } },
      jobs: [{ name: 'q', device: 'plc', rate: '20/s', tags: [{ name: 'ok_tag', table: 'holding', address: 0 }, { name: 'missing', table: 'holding', address: 5 }] }]
    });
    await until(() => run.values.length > 0);
    assert.deepEqual(run.values[0].body.values, { ok_tag: 42, missing: null });
    assert.deepEqual(run.values[0].body.quality, { ok_tag: 'ok', missing: 'NINES_ERR_MODBUS_EXCEPTION' });
    const n = run.values.length;
    await sim.close();
    sim = null;
    await until(() => run.values.length > n);
    const gone = run.values[run.values.length - 1].body;
    assert.deepEqual(gone.values, { ok_tag: null, missing: null });
    assert.ok(['NINES_ERR_CONNECTION_CLOSED', 'NINES_ERR_NOT_CONNECTED', 'NINES_ERR_REPLY_TIMEOUT'].includes(gone.quality.ok_tag), gone.quality.ok_tag);
    assert.ok(gone.changed.includes('ok_tag'), JSON.stringify(gone.changed));
  });

  it('writes by tag name through the device\'s connections, and refuses a value its tag cannot hold', async () => {
    sim = await createModbusTcpSimulator({ port: 0 });
    const tagList = [
      { name: 'setpoint', table: 'holding', address: 10, type: 'int16', scale: 0.1, unit: '°C' },
      { name: 'level', table: 'holding', address: 20, type: 'float32', order: 'CDAB' },
      { name: 'pump', table: 'coil', address: 3 },
      { name: 'temp', table: 'input', address: 0 }
    ];
    const config = (allowWrites) => ({
      gateway: { id: 'w', workers: 1 },
      mqtt: { embedded: { port: 0 } },
      devices: { plc: { target: sim.url, allowWrites, tags: { all: tagList } } },
      jobs: [{ name: 'read', device: 'plc', tags: 'all', rate: '2/s' }]
    });
    run = await startGateway(config(true));
    const out = await run.gw.writeTags('plc', { setpoint: 71.3, level: 2.5, pump: true });
    assert.deepEqual(out, { ok: true, results: { setpoint: { ok: true }, level: { ok: true }, pump: { ok: true } } });
    assert.equal(sim.model.banks.holdingRegisters[10], 713);
    assert.deepEqual([...sim.model.banks.holdingRegisters.subarray(20, 22)], [0x0000, 0x4020]);
    assert.equal(sim.model.banks.coils[3], 1);
    await assert.rejects(run.gw.writeTags('plc', { setpoint: 71.35, pump: false }), (err) => {
      assert.equal(err.code, 'NINES_ERR_INVALID_VALUE');
      assert.match(err.message, /tag "setpoint" \(int16\).*not a whole number/);
      return true;
    });
    // nothing of a refused write was sent: the pump stays on
    assert.equal(sim.model.banks.coils[3], 1);
    await assert.rejects(run.gw.writeTags('plc', { temp: 1 }), /read-only/);
    await assert.rejects(run.gw.writeTags('nope', { x: 1 }), (err) => err.code === 'NINES_ERR_INVALID_ARG');
    await run.client.endAsync();
    await run.gw.stop();
    run = await startGateway(config(false));
    await assert.rejects(run.gw.writeTags('plc', { pump: false }), /does not allow writes; set devices\.plc\.allowWrites: true/);
    assert.equal(sim.model.banks.coils[3], 1);
  });
});
