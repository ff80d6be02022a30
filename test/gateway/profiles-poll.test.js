'use strict';

const assert = require('node:assert/strict');
const mqtt = require('mqtt');
const { loadConfig } = require('../../gateway/runtime/config');
const { Gateway } = require('../../gateway/runtime/gateway');
const { createAsciiSimulator } = require('../../gateway/simulators/ascii');
const { createModbusRtuTcpSimulator } = require('../../gateway/simulators/modbus');
const { until } = require('../helpers/wait');

/** Starts a gateway from YAML on the embedded broker (port 0), with a subscriber keeping the last value of each job */
async function startGateway (yaml) {
  const gw = new Gateway(loadConfig(yaml, { format: 'yaml', env: {} }));
  await gw.start();
  const client = await mqtt.connectAsync(gw.broker.url);
  const values = new Map();
  client.on('message', (topic, payload) => {
    const [, , job, kind] = topic.split('/');
    if (kind === 'value') values.set(job, JSON.parse(payload.toString()));
  });
  await client.subscribeAsync('nines/+/+/value', { qos: 1 });
  return { gw, client, values };
}

describe('profiles and scan classes, polled', function () {
  this.timeout(40000);
  let sim, run;
  afterEach(async () => {
    if (run) { await run.client.endAsync(); await run.gw.stop(); }
    if (sim) await sim.close();
    sim = run = null;
  });

  it('profile: ED-588 (shipped) polls a simulated ED-588: lines in one class, counters in another', async () => {
    sim = await createAsciiSimulator({ port: 0, model: 'ED-588' });
    run = await startGateway(`
gateway: { id: ed, interval: 1s, workers: 1 }
mqtt: { embedded: { port: 0 } }
devices:
  io:
    target: "ascii://127.0.0.1:${sim.port}"
    profile: ED-588
    scan:
      lines: { rate: 20/s, tags: [inputs, outputs] }
      counts: { rate: 2/s, tags: counters }
`);
    await until(() => run.values.has('io.lines') && run.values.has('io.counts'), 'values of io.lines and io.counts', 20000);
    const lines = run.values.get('io.lines');
    // factory state: unwired inputs read 1, outputs 0 (docs/ascii-protocol.md)
    for (let i = 0; i < 8; i++) {
      assert.equal(lines.values[`di${i}`], true, `di${i}`);
      assert.equal(lines.values[`do${i}`], false, `do${i}`);
    }
    assert.deepEqual(Object.keys(run.values.get('io.counts').values).sort(), ['counter0', 'counter1', 'counter2', 'counter3', 'counter4', 'counter5', 'counter6', 'counter7']);
    assert.ok(Object.values(run.values.get('io.counts').quality).every((q) => q === 'ok'));
  });

  it('50 units on one line from one profile: each unit\'s classes read that unit', async () => {
    const ids = Array.from({ length: 50 }, (_, i) => i + 1);
    // the signature preset: holding register a of unit u holds u × 1000 + a
    sim = await createModbusRtuTcpSimulator({ port: 0, modelOptions: { unitIds: ids, preset: 'signature' } });
    run = await startGateway(`
gateway: { id: fifty, interval: 1s, workers: 1 }
mqtt: { embedded: { port: 0 } }
profiles:
  meter:
    timeout: 200ms
    tags:
      measurements: [ { name: id, table: holding, address: 0, type: uint16 } ]
      nameplate: [ { name: next, table: holding, address: 1, type: uint16 } ]
    scan:
      fast: { rate: 4/s, tags: measurements }
      slow: { rate: 1/s, tags: nameplate }
devices:
  bus: { target: "modbus+rtutcp://127.0.0.1:${sim.port}", profile: meter, units: "1-50" }
`);
    // a job's first poll comes within one period of its start (jobs/job.js spreads them by name)
    await until(() => ids.every((u) => run.values.has(`bus.unit-${u}.fast`) && run.values.has(`bus.unit-${u}.slow`)), 'fast and slow values of every unit', 20000);
    for (const u of ids) {
      assert.deepEqual(run.values.get(`bus.unit-${u}.fast`).values, { id: u * 1000 }, `unit ${u}`);
      assert.deepEqual(run.values.get(`bus.unit-${u}.slow`).values, { next: u * 1000 + 1 }, `unit ${u}`);
    }
  });
});
