'use strict';

const assert = require('node:assert/strict');
const { helper, roundTrip, expectError, waitStatus, withModbusSim } = require('./harness');
const { createModbusTcpSimulator, createModbusRtuTcpSimulator } = require('../../gateway/simulators/modbus');
const deviceNode = require('../../nodes/nines-modbus-device');
const readNode = require('../../nodes/nines-modbus-read');
const { until } = require('../helpers/wait');

function device (port, extra = {}) {
  return { id: 'dev', type: 'nines-modbus-device', transport: 'tcp', host: '127.0.0.1', port, unitId: 1, timeout: 300, allowWrites: false, ...extra };
}
function reader (id, extra = {}) {
  return { id, type: 'nines-modbus-read', device: 'dev', fc: 3, address: 0, quantity: 1, dataType: 'uint16', wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0, wires: [['out']], ...extra };
}

describe('nines-modbus-device', function () {
  let sim;
  withModbusSim(() => sim, (s) => { sim = s; });

  it('shares one connection between the nodes that use it', async () => {
    await helper.load([deviceNode, readNode], [device(sim.port), reader('a'), reader('b', { address: 1 }), { id: 'out', type: 'helper' }]);
    sim.model.banks.holdingRegisters[1] = 9;
    const out = helper.getNode('out');
    const [a, b] = await Promise.all([roundTrip(helper.getNode('a'), out, {}), roundTrip(helper.getNode('b'), out, {})]);
    assert.deepEqual([a.payload, b.payload].sort(), [[0], [9]]);
    assert.equal(sim.stats.connections, 1);
  });

  it('opens no connection while no node uses it', async () => {
    await helper.load([deviceNode], [device(sim.port)]);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(sim.stats.connections, 0);
  });

  it('closes its connection when the flow stops', async () => {
    await helper.load([deviceNode, readNode], [device(sim.port), reader('a'), { id: 'out', type: 'helper' }]);
    await waitStatus(helper.getNode('a'), (s) => s.fill === 'green', 'connected');
    assert.equal(sim.stats.open, 1);
    await helper.unload();
    await until(() => sim.stats.open === 0, 'the simulator to see the connection close');
  });

  it('turns settings that fail validation into a coded error on every user node', async () => {
    await helper.load([deviceNode, readNode], [device(70000), reader('a'), { id: 'out', type: 'helper' }]);
    const a = helper.getNode('a');
    await waitStatus(a, (s) => s.fill === 'red' && s.text === 'bad argument', 'bad argument');
    const err = await expectError(a, {});
    assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
    assert.match(err.message, /port must be an integer from 1 to 65535; got 70000/);
  });

  it('builds a modbus+rtu target from the serial settings', async () => {
    await helper.load([deviceNode], [device(0, { transport: 'rtu', path: '/dev/ttyUSB0', baudRate: '19200', parity: 'even', dataBits: 8, stopBits: 1, unitId: 3 })]);
    const dev = helper.getNode('dev');
    assert.equal(dev.target, 'modbus+rtu:///dev/ttyUSB0?unitId=3&baudRate=19200&parity=even&dataBits=8&stopBits=1');
    assert.equal(dev.unitId, 3);
    assert.equal(dev.allowWrites, false);
  });

  it('builds a modbus+rtutcp target from host, port and the line\'s baud rate when one is chosen', async () => {
    await helper.load([deviceNode], [
      device(4001, { transport: 'rtutcp', host: '10.0.0.9', baudRate: '', unitId: 4 }),
      { ...device(4002, { transport: 'rtutcp', host: '10.0.0.9', baudRate: '9600' }), id: 'slow' }
    ]);
    assert.equal(helper.getNode('dev').target, 'modbus+rtutcp://10.0.0.9:4001?unitId=4');
    assert.equal(helper.getNode('slow').target, 'modbus+rtutcp://10.0.0.9:4002?unitId=1&baudRate=9600');
    assert.equal(helper.getNode('dev').spec.maxConnections, 1);
  });

  it('takes the line quirks into its device spec, 0 when a flow saved before them has none', async () => {
    await helper.load([deviceNode], [device(sim.port, { interFrameDelay: '20', delayAfterConnect: 250 }), { ...device(sim.port), id: 'old' }]);
    const spec = helper.getNode('dev').spec;
    assert.deepEqual([spec.interFrameDelayMs, spec.delayAfterConnectMs], [20, 250]);
    assert.deepEqual([helper.getNode('old').spec.interFrameDelayMs, helper.getNode('old').spec.delayAfterConnectMs], [0, 0]);
  });

  it('polls a serial server\'s line that needs a pause after the connect and between frames, with those set', async function () {
    this.timeout(15000);
    const line = await createModbusRtuTcpSimulator({ port: 0, needsDelayAfterConnectMs: 100, needsInterFrameDelayMs: 30, modelOptions: { preset: 'pattern' } });
    try {
      await helper.load([deviceNode, readNode], [
        device(line.port, { transport: 'rtutcp', baudRate: '', timeout: 1000, interFrameDelay: 50, delayAfterConnect: 200 }),
        reader('a', { address: 7 }), reader('b', { address: 8 }), { id: 'out', type: 'helper' }
      ]);
      const out = helper.getNode('out');
      const replies = [];
      for (let i = 0; i < 3; i++) {
        replies.push(...await Promise.all([roundTrip(helper.getNode('a'), out, {}), roundTrip(helper.getNode('b'), out, {})]));
      }
      assert.deepEqual(replies.map((m) => m.payload[0]).sort(), [7, 7, 7, 8, 8, 8]);
      assert.deepEqual([line.stats.tooSoonAfterConnect, line.stats.tooSoonAfterReply, line.stats.connections], [0, 0, 1]);
    } finally {
      await helper.unload();
      await line.close();
    }
  });

  /** The log calls (warn, error) a node made itself */
  function logged (node) {
    const mine = (m) => node[m].getCalls().filter((c) => c.thisValue === node).map((c) => c.args[0]);
    return { warn: mine('warn'), error: mine('error') };
  }

  it('says a lost device through its first user node, once per error code, not once per retry; the config node logs nothing', async () => {
    const port = sim.port;
    await sim.close();
    // retries every 10-20 ms: a warning per attempt would be dozens by the end of the wait
    await helper.load([deviceNode, readNode], [device(port, { backoffMin: 10, backoffMax: 20 }), reader('a'), reader('b'), { id: 'out', type: 'helper' }]);
    const dev = helper.getNode('dev');
    await waitStatus(helper.getNode('a'), (s) => s.fill === 'red' && s.text === 'connect failed', 'connect failed');
    await new Promise((resolve) => setTimeout(resolve, 500));
    // a config node's warning reaches the debug sidebar with path "global", which it cannot place
    assert.deepEqual(logged(dev), { warn: [], error: [] });
    // the helper's RED._ returns the catalog key; the real runtime fills in device, code and message
    assert.deepEqual(logged(helper.getNode('a')), { warn: ['nines-modbus-device.errors.connection'], error: [] });
    assert.deepEqual(logged(helper.getNode('b')), { warn: [], error: [] }, 'one node speaks for the device');
    assert.equal(dev.hub.health.state, 'down');
    assert.equal(dev.hub.health.lastError.code, 'NINES_ERR_CONNECT_FAILED');

    // back up, then down again: a new outage is said again, once
    sim = await createModbusTcpSimulator({ port });
    await waitStatus(helper.getNode('a'), (s) => s.fill === 'green', 'connected', 10000);
    await sim.close();
    await waitStatus(helper.getNode('a'), (s) => s.fill === 'red', 'down again');
    await new Promise((resolve) => setTimeout(resolve, 300));
    // "connection lost", then "connect failed" on the retries: one line per code, then silence
    const again = logged(helper.getNode('a')).warn.length;
    assert.ok(again === 2 || again === 3, `warnings after the second outage: ${again}`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(logged(helper.getNode('a')).warn.length, again, 'no warning per retry');
    assert.deepEqual(logged(dev), { warn: [], error: [] });
    sim = await createModbusTcpSimulator({ port: 0 });
  });

  it('says invalid settings through its first user node, not as a config node error', async () => {
    await helper.load([deviceNode, readNode], [device(70000), reader('a'), reader('b'), { id: 'out', type: 'helper' }]);
    const a = helper.getNode('a');
    await waitStatus(a, (s) => s.fill === 'red' && s.text === 'bad argument', 'bad argument');
    assert.deepEqual(logged(helper.getNode('dev')), { warn: [], error: [] });
    assert.deepEqual(logged(a), { warn: [], error: ['nines-modbus-device.errors.config'] });
    assert.deepEqual(logged(helper.getNode('b')), { warn: [], error: [] });
  });

  it('says an unusable settings.js nines.workers through a user node', async () => {
    helper.settings({ nines: { workers: 'lots' } });
    try {
      await helper.load([deviceNode, readNode], [device(sim.port), reader('a'), { id: 'out', type: 'helper' }]);
      await waitStatus(helper.getNode('a'), (s) => s.fill === 'green', 'connected');
      assert.deepEqual(logged(helper.getNode('dev')), { warn: [], error: [] });
      const { warn } = logged(helper.getNode('a'));
      assert.equal(warn.length, 1);
      assert.match(warn[0], /nines\.workers must be "auto" or a whole number/);
    } finally {
      helper.settings({ nines: undefined });
    }
  });

  it('builds its device spec from the settings, and keeps Modbus RTU to one connection', async () => {
    await helper.load([deviceNode], [
      device(sim.port, { maxConnections: '8', connectTimeout: 900, backoffMin: '50', backoffMax: 2000 }),
      { ...device(0, { transport: 'rtu', path: '/dev/ttyUSB0' }), id: 'serial' }
    ]);
    const spec = helper.getNode('dev').spec;
    assert.equal(spec.name, 'dev');
    assert.equal(spec.maxConnections, 8);
    assert.equal(spec.connectTimeoutMs, 900);
    assert.deepEqual(spec.backoff, { initialMs: 50, maxMs: 2000 });
    assert.equal(helper.getNode('serial').spec.maxConnections, 1);
  });

  it('takes "In flight" (requests per connection at once) on Modbus TCP, 1 when a flow saved before it has none', async () => {
    await helper.load([deviceNode], [
      device(sim.port, { maxInflight: '8' }),
      { ...device(sim.port), id: 'old' },
      { ...device(0, { transport: 'rtu', path: '/dev/ttyUSB0', maxInflight: '1' }), id: 'serial' }
    ]);
    assert.equal(helper.getNode('dev').spec.maxInflight, 8);
    assert.equal(helper.getNode('old').spec.maxInflight, 1);
    assert.equal(helper.getNode('serial').spec.maxInflight, 1);
  });

  it('turns a pipelining fallback into a yellow "one in flight" on its user nodes and one warning through the first of them', async function () {
    this.timeout(15000);
    // a device that drops what arrives while it serves a request (2 ms each), set to take 4 at once
    await sim.close();
    sim = await createModbusTcpSimulator({ port: 0, oneAtATime: true, faults: 'latency=2ms' });
    await helper.load([deviceNode, readNode], [device(sim.port, { maxInflight: 4, timeout: 100 }), reader('a'), reader('b'), { id: 'out', type: 'helper' }]);
    const a = helper.getNode('a');
    const b = helper.getNode('b');
    await waitStatus(a, (s) => s.fill === 'green', 'connected');
    // overlapping requests until the device's clients notice (bounded by the wait below)
    let stop = false;
    const burst = () => {
      if (stop) return;
      for (let i = 0; i < 4; i++) { a.receive({}); b.receive({}); }
      setTimeout(burst, 20);
    };
    burst();
    try {
      await waitStatus(a, (s) => s.fill === 'yellow' && s.shape === 'dot' && s.text === 'one in flight', 'one in flight', 10000);
    } finally {
      stop = true;
    }
    await waitStatus(b, (s) => s.text === 'one in flight', 'one in flight on the other node too');
    const health = helper.getNode('dev').hub.health;
    assert.deepEqual(health.inflight, { max: 4, effective: 1 });
    assert.equal(health.warning.code, 'NINES_ERR_PIPELINE_UNSUPPORTED');
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(logged(a).warn, ['nines-modbus-device.errors.warning']);
    assert.deepEqual(logged(b).warn, []);
    assert.deepEqual(logged(helper.getNode('dev')), { warn: [], error: [] });
  });

  const bad = [
    ['a connection count of 0', { maxConnections: 0 }, 'maxConnections', /maxConnections must be an integer from 1 to 64; got 0/],
    ['two connections on a serial line', { transport: 'rtu', path: '/dev/ttyUSB0', maxConnections: 2 }, 'maxConnections', /maxConnections must be 1 for a modbus\+rtu target \(one serial line\)/],
    ['no request in flight', { maxInflight: '0' }, 'maxInflight', /maxInflight must be an integer from 1 to 64; got "0"/],
    ['65 requests in flight', { maxInflight: 65 }, 'maxInflight', /maxInflight must be an integer from 1 to 64; got 65/],
    ['pipelining on a serial line', { transport: 'rtu', path: '/dev/ttyUSB0', maxInflight: 2 }, 'maxInflight', /maxInflight must be 1 unless the target is modbus\+tcp/],
    ['a negative backoff', { backoffMin: '-5' }, 'backoffMin', /backoffMin is not a duration; .*; got "-5"/],
    ['a backoff maximum below its minimum', { backoffMin: 1000, backoffMax: 999 }, 'backoffMax', /backoffMax must be at least backoffMin/],
    ['two connections to a serial server port', { transport: 'rtutcp', maxConnections: 2 }, 'maxConnections', /maxConnections must be 1 for a modbus\+rtutcp target \(one serial line\)/],
    ['RTU over TCP with no port', { transport: 'rtutcp', port: '' }, 'port', /port is required for RTU over TCP/],
    ['a negative inter-frame delay', { interFrameDelay: '-1' }, 'interFrameDelay', /interFrameDelay is not a duration; .*; got "-1"/],
    ['an inter-frame delay as long as the timeout', { interFrameDelay: 300 }, 'interFrameDelay', /must be shorter than the request timeout \(300 ms\)/],
    ['a delay after connect over a minute', { delayAfterConnect: 60001 }, 'delayAfterConnect', /delayAfterConnect must be a whole number of ms from 0ms to 1m; got 60001/]
  ];
  for (const [what, settings, field, re] of bad) {
    it(`turns ${what} into a coded error naming ${field}, and connects to nothing`, async () => {
      await helper.load([deviceNode, readNode], [device(sim.port, settings), reader('a'), { id: 'out', type: 'helper' }]);
      const a = helper.getNode('a');
      await waitStatus(a, (s) => s.fill === 'red' && s.text === 'bad argument', 'bad argument');
      const err = await expectError(a, {});
      assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
      assert.equal(err.details.field, field);
      assert.match(err.message, re);
      assert.equal(sim.stats.connections, 0);
    });
  }

  it('runs its device in the shared pool with the thread count of settings.js nines.workers', async () => {
    helper.settings({ nines: { workers: 1 } });
    try {
      await helper.load([deviceNode, readNode], [device(sim.port), reader('a'), { id: 'out', type: 'helper' }]);
      await roundTrip(helper.getNode('a'), helper.getNode('out'), {});
      const dev = helper.getNode('dev');
      assert.equal(dev.hub._handle.settings.workers, 1);
      assert.equal(dev.hub._handle.pool.threads, 1);
    } finally {
      helper.settings({ nines: undefined });
    }
  });
});
