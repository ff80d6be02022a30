'use strict';

const assert = require('node:assert/strict');
const mqtt = require('mqtt');
const { validateConfig } = require('../../gateway/runtime/config');
const { Gateway } = require('../../gateway/runtime/gateway');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');

function config (url, { writes = true, allowWrites = true } = {}) {
  return validateConfig({
    gateway: { id: 'w1', workers: 1 },
    mqtt: { embedded: { port: 0 }, writes },
    devices: {
      plc: {
        target: url,
        allowWrites,
        tags: { io: [{ name: 'setpoint', table: 'holding', address: 10, type: 'int16', scale: 0.1 }, { name: 'pump_on', table: 'coil', address: 3 }, { name: 'temp', table: 'input', address: 0 }] }
      }
    },
    jobs: [{ name: 'io', device: 'plc', tags: 'io', rate: '2/s' }]
  }, { env: {} });
}

describe('writes by tag over MQTT (mqtt.writes)', function () {
  this.timeout(20000);
  let sim, gw, client;
  afterEach(async () => {
    // forced: a client the broker dropped is reconnecting, and a clean end would wait for it
    if (client) await new Promise((resolve) => client.end(true, {}, resolve));
    if (gw) await gw.stop();
    if (sim) await sim.close();
    sim = gw = client = null;
  });

  /** Publishes a command and waits for its answer */
  async function command (payload, topic = 'nines/w1/plc/write') {
    const answer = new Promise((resolve) => {
      const on = (t, p) => { if (t === `${topic}/result`) { client.removeListener('message', on); resolve(JSON.parse(p.toString())); } };
      client.on('message', on);
    });
    await client.publishAsync(topic, typeof payload === 'string' ? payload : JSON.stringify(payload), { qos: 1 });
    return answer;
  }

  async function start (opts) {
    sim = await createModbusTcpSimulator({ port: 0 });
    gw = new Gateway(config(sim.url, opts));
    await gw.start();
    client = await mqtt.connectAsync(gw.broker.url, { reconnectPeriod: 0 });
    await client.subscribeAsync('nines/w1/+/write/result', { qos: 1 });
  }

  it('writes the values a client publishes, encoded by their tags, and answers each tag', async () => {
    await start();
    const out = await command({ id: 'a1', values: { setpoint: 71.3, pump_on: true } });
    assert.deepEqual(out, { id: 'a1', ok: true, results: { setpoint: { ok: true }, pump_on: { ok: true } } });
    assert.equal(sim.model.banks.holdingRegisters[10], 713);
    assert.equal(sim.model.banks.coils[3], 1);
  });

  it('refuses a value its tag cannot hold, a read-only tag, an unknown device and a malformed command, writing nothing', async () => {
    await start();
    const bad = await command({ id: 'b1', values: { setpoint: 3.75, pump_on: true } });
    assert.deepEqual([bad.id, bad.ok, bad.error.code], ['b1', false, 'NINES_ERR_INVALID_VALUE']);
    assert.equal(sim.model.banks.coils[3], 0, 'nothing of a refused command is written');
    assert.equal((await command({ values: { temp: 1 } })).error.code, 'NINES_ERR_INVALID_ARG');
    assert.match((await command({ values: { x: 1 } }, 'nines/w1/nope/write')).error.message, /no device "nope"/);
    assert.match((await command('{not json')).error.message, /must be JSON/);
    assert.match((await command({ values: { pump_on: true }, extra: 1 })).error.message, /takes id and values/);
    assert.equal(sim.model.banks.coils[3], 0);
    assert.equal(gw.writeCommands.stats.refused, 5);
  });

  it('a device without allowWrites refuses, and with writes off nobody may publish a command', async () => {
    await start({ allowWrites: false });
    assert.match((await command({ values: { pump_on: true } })).error.message, /does not allow writes/);
    await new Promise((resolve) => client.end(true, {}, resolve));
    await gw.stop();
    await sim.close();
    await start({ writes: false });
    // the embedded broker refuses the publish (and drops the client): no answer, nothing written
    const closed = new Promise((resolve) => client.once('close', resolve));
    client.publish('nines/w1/plc/write', JSON.stringify({ values: { pump_on: true } }), { qos: 1 });
    await closed;
    assert.equal(sim.model.banks.coils[3], 0);
  });
});
