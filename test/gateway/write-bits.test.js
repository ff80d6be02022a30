'use strict';

const assert = require('node:assert/strict');
const mqtt = require('mqtt');
const { validateConfig } = require('../../gateway/runtime/config');
const { Gateway } = require('../../gateway/runtime/gateway');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');

const TAGS = [
  { name: 'word', table: 'holding', address: 40, type: 'uint16' },
  { name: 'alarm', table: 'holding', address: 40, type: 'bit', bit: 2 },
  { name: 'mode', table: 'holding', address: 40, type: 'bits', bit: '4-6', enum: '0=auto|2=manual|3=service' },
  { name: 'hi', table: 'holding', address: 40, type: 'uint8', byte: 'high' }
];

function config (url, device = {}) {
  return validateConfig({
    gateway: { id: 'b1', workers: 1 },
    mqtt: { embedded: { port: 0 }, writes: true },
    devices: { plc: { target: url, allowWrites: true, timeout: '1s', tags: { io: TAGS }, ...device } },
    jobs: [{ name: 'io', device: 'plc', tags: 'io', rate: '2/s' }]
  }, { env: {} });
}

describe('writes of a part of a register over MQTT: FC22 mask write', function () {
  this.timeout(20000);
  let sim, gw, client;
  afterEach(async () => {
    if (client) await new Promise((resolve) => client.end(true, {}, resolve));
    if (gw) await gw.stop();
    if (sim) await sim.close();
    sim = gw = client = null;
  });

  async function start (modelOptions, device) {
    sim = await createModbusTcpSimulator({ port: 0, modelOptions });
    sim.model.banks.holdingRegisters[40] = 0xA5A5;
    gw = new Gateway(config(sim.url, device));
    await gw.start();
    client = await mqtt.connectAsync(gw.broker.url, { reconnectPeriod: 0 });
    await client.subscribeAsync('nines/b1/plc/write/result', { qos: 1 });
  }

  async function command (payload) {
    const topic = 'nines/b1/plc/write';
    const answer = new Promise((resolve) => {
      const on = (t, p) => { if (t === `${topic}/result`) { client.removeListener('message', on); resolve(JSON.parse(p.toString())); } };
      client.on('message', on);
    });
    await client.publishAsync(topic, JSON.stringify(payload), { qos: 1 });
    return answer;
  }

  it('changes only the bits of the tag written: the rest of the register stays as it was', async () => {
    await start();
    const regs = sim.model.banks.holdingRegisters;
    assert.deepEqual(await command({ id: 'c1', values: { alarm: false } }), { id: 'c1', ok: true, results: { alarm: { ok: true } } });
    assert.equal(regs[40], 0xA5A1);
    assert.equal((await command({ values: { mode: 'service' } })).ok, true);
    assert.equal(regs[40], 0xA5B1);
    assert.equal((await command({ values: { hi: 0x12 } })).ok, true);
    assert.equal(regs[40], 0x12B1);
    // another writer sets bit 1 between two writes of ours: the mask write keeps its change
    regs[40] |= 0x0002;
    assert.equal((await command({ values: { alarm: true } })).ok, true);
    assert.equal(regs[40], 0x12B7);
    assert.equal(regs[41], 0, 'the next register is not touched');
  });

  it('a device that answers FC22 with exception 1: the tag is not written, coded, and nothing else is tried', async () => {
    await start({ lacks: [22] });
    const out = await command({ id: 'c2', values: { alarm: false } });
    assert.equal(out.ok, false);
    assert.equal(out.results.alarm.code, 'NINES_ERR_FC_UNSUPPORTED');
    assert.equal(out.results.alarm.written, false);
    // no read and FC6 of the whole register after it: that would have cleared bit 2
    assert.equal(sim.model.banks.holdingRegisters[40], 0xA5A5);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(sim.model.banks.holdingRegisters[40], 0xA5A5);
  });

  it('a device whose unsupportedFunctionCodes lists 22: refused before anything is sent', async () => {
    // the simulator would take an FC22: that it counts no write shows none was sent
    await start(undefined, { unsupportedFunctionCodes: [22] });
    const before = sim.model.writeRequests;
    const out = await command({ id: 'c3', values: { mode: 'manual' } });
    assert.deepEqual([out.ok, out.error.code], [false, 'NINES_ERR_FC_UNSUPPORTED']);
    assert.match(out.error.message, /bits 4-6 of holding 40: written only with FC22 mask write, which the device lacks/);
    assert.equal(sim.model.writeRequests, before);
    assert.equal(sim.model.banks.holdingRegisters[40], 0xA5A5);
    // the whole register is still written with FC6
    assert.equal((await command({ values: { word: 7 } })).ok, true);
    assert.equal(sim.model.banks.holdingRegisters[40], 7);
  });
});
