'use strict';

const assert = require('node:assert/strict');
const { helper, expectError, waitStatus, lastStatus } = require('./harness');
const latency = require('../../gateway/latency');
const { AsciiClient } = require('../../gateway/drivers/ascii');
const { createAsciiSimulator } = require('../../gateway/simulators/ascii');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { encodeValues } = require('../../gateway/values/registers');
const asciiDevice = require('../../nodes/nines-ascii-device');
const modbusDevice = require('../../nodes/nines-modbus-device');
const pollNode = require('../../nodes/nines-poll');
const { until } = require('../helpers/wait');

const NODES = [asciiDevice, modbusDevice, pollNode];

function flow (poll = {}, devices = {}) {
  return [
    { id: 'ad', type: 'nines-ascii-device', host: '127.0.0.1', port: devices.asciiPort || 1, address: '01', checksum: false, timeout: 200, maxConnections: 1, backoffMin: 20, backoffMax: 200 },
    { id: 'md', type: 'nines-modbus-device', transport: 'tcp', host: '127.0.0.1', port: devices.modbusPort || 1, unitId: 1, timeout: 200, maxConnections: 1, backoffMin: 20, backoffMax: 200, allowWrites: false },
    {
      id: 'p', type: 'nines-poll', name: 'job1', protocol: 'ascii', asciiDevice: 'ad', modbusDevice: 'md', command: '@01',
      fc: 3, address: 0, quantity: 1, dataType: 'uint16', wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0,
      rate: '200/s', policy: 'skip', values: 'on-change', deadband: 0, every: 10, minInterval: 0, interval: 0.3, mode: 'worker', autostart: true,
      wires: [['values'], ['summary']], ...poll
    },
    { id: 'values', type: 'helper' },
    { id: 'summary', type: 'helper' }
  ];
}

function collect () {
  const out = { values: [], summary: [] };
  helper.getNode('values').on('input', (m) => out.values.push(m));
  helper.getNode('summary').on('input', (m) => out.summary.push(m));
  return out;
}

describe('nines-poll', function () {
  let sim;

  before(() => helper.startServer());
  after(() => helper.stopServer());
  afterEach(async () => {
    await helper.unload();
    if (sim) await sim.close();
    sim = null;
  });

  describe('on an ED-588', () => {
    beforeEach(async () => { sim = await createAsciiSimulator({ port: 0, model: 'ED-588' }); });

    /** Sets output 0 through a connection of its own, as another program would. */
    async function setOutput0 (on) {
      const c = new AsciiClient(`ascii://127.0.0.1:${sim.port}`, { timeoutMs: 500, reconnect: false });
      try { await c.request(on ? '#011001' : '#011000'); } finally { await c.close(); }
    }

    it('polls in a worker and sends the lines only when they change', async () => {
      await helper.load(NODES, flow({}, { asciiPort: sim.port }));
      const out = collect();
      await until(() => out.values.length === 1, 'the first values');
      assert.deepEqual(out.values[0].payload.outputs, new Array(8).fill(false));
      assert.equal(out.values[0].topic, 'job1');
      assert.equal(typeof out.values[0].ts, 'number');
      await until(() => sim.stats.requests >= 40, 'forty polls');
      assert.equal(out.values.length, 1, 'no msg per poll while nothing changes');
      await setOutput0(true);
      await until(() => out.values.length === 2, 'the change');
      assert.equal(out.values[1].payload.outputs[0], true);
    });

    it('sends a latency summary per interval on output 2', async () => {
      await helper.load(NODES, flow({}, { asciiPort: sim.port }));
      const out = collect();
      await until(() => out.summary.some((m) => m.payload.count > 0), 'a summary with polls in it', 10000);
      const s = out.summary.find((m) => m.payload.count > 0);
      assert.equal(s.topic, 'job1');
      const parsed = latency.parseLatencyPayload(s.payload);
      assert.equal(parsed.job, 'job1');
      // every intended poll is in the histogram: sent, failed, or skipped under the skip policy (recorded from its slot)
      assert.equal(parsed.count, parsed.ok + parsed.errors + parsed.timeouts + parsed.skipped);
      assert.equal(parsed.histogram.totalCount, parsed.count);
      assert.equal(parsed.policy, 'skip');
      await waitStatus(helper.getNode('p'), (st) => st.fill === 'green' && /^p99 /.test(st.text), 'p99 in the status');
    });

    it('sends every N-th poll when asked', async () => {
      await helper.load(NODES, flow({ values: 'every', every: 5 }, { asciiPort: sim.port }));
      const out = collect();
      await until(() => out.values.length >= 3, 'three msgs');
      for (const m of out.values) assert.deepEqual(m.payload.inputs, new Array(8).fill(true));
    });

    it('stops, starts and resets by msg.topic', async () => {
      await helper.load(NODES, flow({ autostart: false }, { asciiPort: sim.port }));
      const out = collect();
      const p = helper.getNode('p');
      await waitStatus(p, (s) => s.text === 'nines-poll.status.stopped', 'stopped');
      assert.equal(sim.stats.requests, 0);
      p.receive({ topic: 'start' });
      await until(() => out.values.length === 1, 'values after start');
      p.receive({ topic: 'stop' });
      await waitStatus(p, (s) => s.text === 'nines-poll.status.stopped', 'stopped again');
      const polled = sim.stats.requests;
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.ok(sim.stats.requests - polled <= 1, 'no polling while stopped');
      p.receive({ topic: 'reset' });
      // reset forgets the last values, so the same lines go out again
      await until(() => out.values.length === 2, 'values after reset');
      assert.deepEqual(out.values[1].payload, out.values[0].payload);
    });

    it('refuses an unknown msg.topic with a coded error', async () => {
      await helper.load(NODES, flow({ autostart: false }, { asciiPort: sim.port }));
      const err = await expectError(helper.getNode('p'), { topic: 'faster' });
      assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
      assert.match(err.message, /msg.topic must be "start", "stop" or "reset"/);
    });

    it('reports a lost device with its code to Catch nodes and recovers when it returns', async () => {
      await helper.load(NODES, flow({}, { asciiPort: sim.port }));
      const out = collect();
      const p = helper.getNode('p');
      await until(() => out.values.length === 1, 'the first values');
      const port = sim.port;
      await sim.close();
      const call = await new Promise((resolve) => {
        const on = (c) => { if (c.thisValue === p && c.args[1]) { p.removeListener('call:error', on); resolve(c); } };
        p.on('call:error', on);
      });
      assert.ok(/^NINES_ERR_/.test(call.args[0].code), call.args[0].code);
      assert.equal(call.args[1].error.code, call.args[0].code, 'the msg for Catch nodes carries the code');
      await waitStatus(p, (s) => s.fill === 'red', 'red');
      sim = await createAsciiSimulator({ port, model: 'ED-588' });
      await setOutput0(true);
      await until(() => out.values.some((m) => m.payload.outputs[0] === true), 'values again', 15000);
    });
  });

  describe('its repeated failures', () => {
    it('says when the failures an interval\'s report counts happened, and that they are past (issue 21)', async () => {
      // nothing listens on port 1: every poll fails, and the end of each interval reports the repeats
      await helper.load(NODES, flow({}, {}));
      const p = helper.getNode('p');
      const call = await new Promise((resolve) => {
        const on = (c) => { if (c.thisValue === p && c.args[0].details && c.args[0].details.repeated) { p.removeListener('call:error', on); resolve(c); } };
        p.on('call:error', on);
      });
      const e = call.args[0];
      assert.match(e.message, new RegExp(`^${e.details.repeated} more between \\d\\d:\\d\\d:\\d\\d and \\d\\d:\\d\\d:\\d\\d, the last: `));
      assert.ok(Date.parse(e.details.firstAt) <= Date.parse(e.details.lastAt));
      assert.equal(call.args[1].error.code, e.code);
    });
  });

  describe('on a Modbus device', () => {
    beforeEach(async () => { sim = await createModbusTcpSimulator({ port: 0 }); });

    function setFloat (address, value) {
      const [a, b] = encodeValues(value, { type: 'float32' });
      sim.model.banks.holdingRegisters[address] = a;
      sim.model.banks.holdingRegisters[address + 1] = b;
    }

    it('decodes registers and applies the deadband to the engineering values', async () => {
      setFloat(10, 20);
      await helper.load(NODES, flow({ protocol: 'modbus', fc: 3, address: 10, quantity: 2, dataType: 'float32', deadband: 0.5 }, { modbusPort: sim.port }));
      const out = collect();
      await until(() => out.values.length === 1, 'the first values');
      assert.deepEqual(out.values[0].payload, [20]);
      setFloat(10, 20.25); // within the deadband: never sent
      await until(() => sim.stats.requests >= 20, 'polls of the small change');
      setFloat(10, 21);
      await until(() => out.values.length === 2, 'the big change');
      assert.deepEqual(out.values[1].payload, [21]);
    });

    it('names its catch-up policy in every summary: skip unless the node says otherwise', async () => {
      await helper.load(NODES, flow({ protocol: 'modbus', policy: undefined }, { modbusPort: sim.port }));
      const out = collect();
      await until(() => out.summary.length >= 2, 'two summaries', 10000);
      for (const m of out.summary) assert.equal(m.payload.policy, 'skip');
      await helper.unload();
      await helper.load(NODES, flow({ protocol: 'modbus', policy: 'capped' }, { modbusPort: sim.port }));
      const capped = collect();
      await until(() => capped.summary.length >= 1, 'a summary', 10000);
      for (const m of capped.summary) assert.equal(m.payload.policy, 'capped');
    });

    it('runs on its device config node\'s connection, as a job keyed by the node', async () => {
      await helper.load(NODES, flow({ protocol: 'modbus', name: '' }, { modbusPort: sim.port }));
      const out = collect();
      await until(() => out.values.length === 1 && out.summary.length >= 1, 'values and a summary', 10000);
      assert.equal(out.values[0].topic, 'poll-p');
      assert.equal(out.summary[0].payload.job, 'poll-p');
      assert.equal(sim.stats.connections, 1);
    });

    it('shows the device state while it is down, connected at once when it is back, and p99 only from an interval spent connected', async () => {
      await helper.load(NODES, flow({ protocol: 'modbus', rate: '50/s' }, { modbusPort: sim.port }));
      const p = helper.getNode('p');
      await waitStatus(p, (s) => /^p99 /.test(s.text), 'p99', 10000);
      const port = sim.port;
      await sim.close();
      sim = null;
      await waitStatus(p, (s) => s.fill === 'red' && s.shape === 'ring', 'red');
      const down = lastStatus(p);
      assert.ok(['connection lost', 'connect failed'].includes(down.text), down.text);
      const calls = () => p.status.getCalls().filter((c) => c.thisValue === p).map((c) => c.args[0]);
      const mark = calls().length;
      sim = await createModbusTcpSimulator({ port });
      await waitStatus(p, (s) => s.fill === 'green', 'green again', 10000);
      const afterOutage = calls().slice(mark).filter((s) => s.fill === 'green');
      assert.equal(afterOutage[0].text, 'node-red:common.status.connected', 'no p99 of the outage');
      await waitStatus(p, (s) => /^p99 /.test(s.text), 'p99 again', 10000);
    });

    it('refuses an unknown catch-up policy with a coded error', async () => {
      await helper.load(NODES, flow({ protocol: 'modbus', policy: 'fastest' }, { modbusPort: sim.port }));
      const err = await expectError(helper.getNode('p'), { topic: 'start' });
      assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
      assert.match(err.message, /policy must be one of burst, capped, skip; got "fastest"/);
      assert.equal(sim.stats.connections, 0);
    });

    it('rejects settings that fail validation, at deploy and on every msg', async () => {
      await helper.load(NODES, flow({ protocol: 'modbus', rate: 'fast' }, { modbusPort: sim.port }));
      const p = helper.getNode('p');
      await waitStatus(p, (s) => s.fill === 'red' && s.text === 'bad argument', 'bad argument');
      const err = await expectError(p, { topic: 'start' });
      assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
      assert.match(err.message, /rate must be "max" or a positive rate/);
      assert.equal(sim.stats.requests, 0);
    });
  });
});
