'use strict';

/**
 * The error topic counts every failure (issue 21: its `count` said 1 where 152 requests had
 * failed). A job polls a device that never answers; over the run, the `count`s of its error
 * messages add up to the errors and timeouts of its latency summaries.
 */

const assert = require('node:assert/strict');
const mqtt = require('mqtt');
const { Gateway } = require('../../gateway/runtime/gateway');
const { validateConfig } = require('../../gateway/runtime/config');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { startEmbeddedBroker } = require('../../gateway/runtime/mqtt/broker');

describe('the error topic', function () {
  this.timeout(30000);

  it('counts every failure: the counts of the error messages add up to the summaries\' errors and timeouts', async () => {
    // unit 9 is not served: every request times out (20 ms), 100 a second
    const sim = await createModbusTcpSimulator({ port: 0, directUnitIds: [] });
    const broker = await startEmbeddedBroker({ port: 0 });
    const sub = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
    const errors = [];
    const summaries = [];
    sub.on('message', (topic, payload) => {
      const kind = topic.split('/')[3];
      if (kind === 'error') errors.push(JSON.parse(payload.toString()));
      else if (kind === 'latency') summaries.push(JSON.parse(payload.toString()));
    });
    await sub.subscribeAsync('nines/ec/+/+', { qos: 1 });
    const gw = new Gateway(validateConfig({
      gateway: { id: 'ec', interval: '500ms', workers: 1 },
      mqtt: { url: broker.url },
      devices: { plc: { target: `modbus+tcp://127.0.0.1:${sim.port}?unitId=9`, timeout: '20ms' } },
      jobs: [{ name: 'dead', device: 'plc', read: { fc: 3, address: 0, quantity: 1 }, rate: '100/s' }]
    }));
    try {
      await gw.start();
      const end = Date.now() + 15000;
      while (summaries.length < 4 && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 50));
      await gw.stop();
      // the last reports after the stop
      await new Promise((resolve) => setTimeout(resolve, 300));
    } finally {
      await sub.endAsync();
      await broker.close();
      await sim.close();
    }
    const failed = summaries.reduce((n, s) => n + s.errors + s.timeouts, 0);
    const counted = errors.reduce((n, e) => n + e.count, 0);
    assert.ok(failed > 40, `${failed} failures`);
    assert.equal(counted, failed, `error messages count ${counted} (${errors.map((e) => e.count).join(' + ')}), summaries ${failed}`);
    for (const e of errors) assert.equal(e.suppressed, e.count - 1);
  });
});
