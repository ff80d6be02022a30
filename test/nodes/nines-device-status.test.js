'use strict';

const assert = require('node:assert/strict');
const { helper, waitStatus, withModbusSim } = require('./harness');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { createAsciiSimulator } = require('../../gateway/simulators/ascii');
const modbusDevice = require('../../nodes/nines-modbus-device');
const asciiDevice = require('../../nodes/nines-ascii-device');
const statusNode = require('../../nodes/nines-device-status');
const { until } = require('../helpers/wait');

const NODES = [modbusDevice, asciiDevice, statusNode];

function flow (port, status = {}, device = {}) {
  return [
    { id: 'dev', type: 'nines-modbus-device', name: 'plc1', transport: 'tcp', host: '127.0.0.1', port, unitId: 1, timeout: 300, maxConnections: 1, backoffMin: 20, backoffMax: 300, allowWrites: false, ...device },
    { id: 's', type: 'nines-device-status', protocol: 'modbus', modbusDevice: 'dev', asciiDevice: '', wires: [['out']], ...status },
    { id: 'out', type: 'helper' }
  ];
}

function collect () {
  const msgs = [];
  helper.getNode('out').on('input', (m) => msgs.push(m));
  return msgs;
}

/** The states in order, repeats of one state folded */
function transitions (msgs) {
  return msgs.map((m) => m.payload.state).filter((s, i, a) => i === 0 || a[i - 1] !== s);
}

describe('nines-device-status', function () {
  this.timeout(20000);
  let sim;
  withModbusSim(() => sim, (s) => { sim = s; });

  it('sends the device health at deploy, and up, down, up across a device restart', async () => {
    await helper.load(NODES, flow(sim.port));
    const msgs = collect();
    const s = helper.getNode('s');
    await until(() => msgs.some((m) => m.payload.state === 'up'), 'up');
    const up = msgs.find((m) => m.payload.state === 'up');
    assert.equal(up.topic, 'plc1');
    assert.deepEqual(Object.keys(up.payload).sort(), ['connections', 'inflight', 'lastError', 'since', 'state', 'warning']);
    assert.equal(up.payload.lastError, null);
    assert.deepEqual(up.payload.inflight, { max: 1, effective: 1 });
    assert.equal(up.payload.warning, null);
    assert.deepEqual(up.payload.connections, { open: 1, max: 1 });
    assert.equal(typeof up.payload.since, 'number');
    await waitStatus(s, (st) => st.fill === 'green', 'connected');

    const port = sim.port;
    const beforeDown = Date.now();
    await sim.close();
    await until(() => msgs.some((m) => m.payload.state === 'down'), 'down');
    const down = msgs.find((m) => m.payload.state === 'down');
    assert.ok(down.payload.since >= up.payload.since);
    assert.ok(down.payload.since >= beforeDown - 1000);
    assert.match(down.payload.lastError.code, /^NINES_ERR_(CONNECTION_CLOSED|CONNECT_FAILED)$/);
    assert.equal(typeof down.payload.lastError.message, 'string');
    assert.deepEqual(down.payload.connections, { open: 0, max: 1 });
    await waitStatus(s, (st) => st.fill === 'red', 'red');

    sim = await createModbusTcpSimulator({ port });
    await until(() => transitions(msgs).filter((x) => x !== 'connecting').join() === 'up,down,up', 'up again', 10000);
    const again = msgs[msgs.length - 1];
    assert.equal(again.payload.state, 'up');
    assert.ok(again.payload.since > down.payload.since);
    assert.ok(again.payload.lastError, 'the outage\'s error stays after the recovery');
    await waitStatus(s, (st) => st.fill === 'green', 'connected again');
    // one msg per change: no two msgs alike in a row
    for (let i = 1; i < msgs.length; i++) assert.notDeepEqual(msgs[i].payload, msgs[i - 1].payload);
  });

  it('watches an ASCII device too, named by its target when it has no name', async () => {
    const ascii = await createAsciiSimulator({ port: 0 });
    try {
      await helper.load(NODES, [
        { id: 'ad', type: 'nines-ascii-device', host: '127.0.0.1', port: ascii.port, address: '01', checksum: false, timeout: 300 },
        { id: 's', type: 'nines-device-status', protocol: 'ascii', asciiDevice: 'ad', modbusDevice: '', wires: [['out']] },
        { id: 'out', type: 'helper' }
      ]);
      const msgs = collect();
      await until(() => msgs.some((m) => m.payload.state === 'up'), 'up');
      assert.equal(msgs[msgs.length - 1].topic, `ascii://127.0.0.1:${ascii.port}?address=01&checksum=off`);
      assert.equal(ascii.openConnections, 1);
    } finally {
      await helper.unload();
      await ascii.close();
    }
  });

  it('reports a missing device with a coded error and sends nothing', async () => {
    await helper.load(NODES, flow(sim.port, { modbusDevice: '' }));
    const msgs = collect();
    const s = helper.getNode('s');
    await waitStatus(s, (st) => st.fill === 'red' && st.text === 'bad argument', 'bad argument');
    const calls = s.error.getCalls().filter((c) => c.thisValue === s);
    assert.equal(calls.length, 1);
    assert.equal(calls[0].args[0].code, 'NINES_ERR_INVALID_ARG');
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(msgs.length, 0);
    assert.equal(sim.stats.connections, 0);
  });
});
