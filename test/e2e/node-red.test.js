'use strict';

/**
 * End to end: a real Node-RED 4 loads node-red-contrib-nines as an installed module; each example
 * flow is fetched the way Import › Examples does, pointed at simulators on ports the test chose,
 * deployed through the Admin HTTP API (POST /flows), triggered through the inject nodes' admin
 * endpoint, and its output read from the debug sidebar's websocket.
 */

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const mqtt = require('mqtt');
const { startNodeRed, debugTap, exampleFlow, PKG } = require('./launch');
const { createAsciiSimulator } = require('../../gateway/simulators/ascii');
const { AsciiClient } = require('../../gateway/drivers/ascii');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { startEmbeddedBroker } = require('../../gateway/runtime/mqtt/broker');
const latency = require('../../gateway/latency');

/** A latency payload of one gateway interval (design.md), its histogram holding valuesMs */
function latencyPayload (gateway, job, seq, valuesMs) {
  const h = latency.createHistogram();
  for (const v of valuesMs) latency.recordNs(h, Math.round(v * 1e6));
  const { count, ...stats } = latency.summarize(h);
  const end = 1_700_000_000_000 + seq * 10000;
  return {
    v: 1, gateway, job, target: 'ascii://127.0.0.1:9500?address=01&checksum=off', op: '@01', seq, start: end - 10000, end,
    policy: 'capped', count, ok: count, errors: 0, timeouts: 0, skipped: 0, rate: count / 10, unit: 'ms', ...stats,
    service: { count, ...stats }, lag: { count, ...stats }, hist: latency.encodeHistogram(h)
  };
}

describe(`Node-RED ${require(require.resolve(path.join(process.env.NINES_NODE_RED || 'node-red', 'package.json'))).version} end to end (examples deployed through the Admin API)`, function () {
  this.timeout(60000);
  let nr;
  let tap;
  let asciiSim;
  let modbusSim;

  before(async () => {
    [nr, asciiSim, modbusSim] = await Promise.all([
      startNodeRed(),
      createAsciiSimulator({ port: 0, model: 'ED-588' }),
      createModbusTcpSimulator({ port: 0 })
    ]);
    tap = await debugTap(nr.url);
  });

  after(async () => {
    if (tap) tap.close();
    await Promise.all([nr && nr.stop(), asciiSim && asciiSim.close(), modbusSim && modbusSim.close()]);
  });

  beforeEach(async () => {
    tap.messages.length = 0;
    // every scenario starts from the ED-588's factory outputs (all off)
    const c = new AsciiClient(asciiSim.url, { timeoutMs: 1000, reconnect: false });
    try { await c.request('@0100'); } finally { await c.close(); }
  });

  /** Points the example's devices at the test's simulators. */
  function toSims (n) {
    if (n.type === 'nines-ascii-device') n.port = asciiSim.port;
    if (n.type === 'nines-modbus-device') n.port = modbusSim.port;
  }

  async function deploy (flow) {
    const res = await nr.api('POST', '/flows', flow, { 'Node-RED-Deployment-Type': 'full' });
    assert.equal(res.status, 204, `deploy: ${JSON.stringify(res.body)}`);
  }

  async function inject (flow, name) {
    const node = flow.find((n) => n.type === 'inject' && n.name === name);
    assert.ok(node, `inject "${name}"`);
    // POST /flows answers before the new flows have started: retry while the node is unknown
    let res;
    for (let i = 0; i < 100; i++) {
      res = await nr.api('POST', `/inject/${node.id}`);
      if (res.status !== 404) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(res.status, 200, `inject ${name}: ${JSON.stringify(res.body)}`);
  }

  const noErrors = () => assert.deepEqual(tap.messages.filter((m) => m.name === 'error'), []);

  it('loads every nines node set without error and lists the examples', async () => {
    const sets = (await nr.api('GET', '/nodes')).body.filter((s) => s.module === PKG.name);
    assert.deepEqual(sets.map((s) => s.name).sort(), Object.keys(PKG['node-red'].nodes).sort());
    for (const s of sets) {
      assert.equal(s.err, undefined, `${s.name}: ${JSON.stringify(s.err)}`);
      assert.equal(s.enabled, true);
    }
    const examples = (await nr.api('GET', `/library/examples/flows/${PKG.name}`)).body;
    const files = fs.readdirSync(path.join(__dirname, '..', '..', 'examples')).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5));
    // directories (d entries) are other files' business: compare the flows
    assert.deepEqual(examples.filter((e) => e.fn).map((e) => e.fn).sort(), files.sort());
  });

  it('reads ED-588 lines and sets outputs (read-ed588-inputs-and-set-outputs)', async () => {
    const flow = await exampleFlow(nr.api, 'read-ed588-inputs-and-set-outputs', toSims);
    await deploy(flow);
    await inject(flow, 'read all lines');
    const first = await tap.waitFor((m) => m.name === 'lines', 'lines');
    assert.deepEqual(first.msg.outputs, new Array(8).fill(false));
    assert.deepEqual(first.msg.inputs, new Array(8).fill(true));
    await inject(flow, 'set output 0 on');
    const after = await tap.waitFor((m) => m.name === 'lines' && m.msg.outputs[0] === true, 'output 0 on');
    assert.equal(after.msg.value, 0x01FF);
    await inject(flow, 'set all outputs to 0x55');
    await tap.waitFor((m) => m.name === 'lines' && m.msg.value === 0x55FF, 'outputs 0x55');
    // outputs as data, no hex: all eight at once, then one line
    await inject(flow, 'set outputs from data (0, 2, 7 on)');
    await tap.waitFor((m) => m.name === 'lines' && m.msg.value === 0x85FF, 'outputs 0, 2 and 7');
    await inject(flow, 'set line 3 on (data)');
    await tap.waitFor((m) => m.name === 'lines' && m.msg.value === 0x8DFF, 'output 3 on as well');
    noErrors();
  });

  it('writes and reads back a float32 in CDAB order (modbus-read-write-with-typed-decoding)', async () => {
    const flow = await exampleFlow(nr.api, 'modbus-read-write-with-typed-decoding', toSims);
    await deploy(flow);
    await inject(flow, 'write 123.456');
    const written = await tap.waitFor((m) => m.name === 'written', 'written');
    assert.deepEqual(written.msg.written, [0xE979, 0x42F6]);
    const hr = modbusSim.model.banks.holdingRegisters;
    assert.deepEqual([hr[100], hr[101]], [0xE979, 0x42F6]);
    await inject(flow, 'read float32');
    const f = await tap.waitFor((m) => m.name === 'float32', 'float32');
    assert.ok(Math.abs(f.msg[0] - 123.456) < 1e-4, JSON.stringify(f.msg));
    await inject(flow, 'read scaled int16');
    const s = await tap.waitFor((m) => m.name === 'int16 x 0.1', 'int16');
    assert.equal(s.msg.length, 4);
    assert.ok(Math.abs(s.msg[0] - (0xE979 - 0x10000) / 10) < 1e-9, JSON.stringify(s.msg));
    noErrors();
  });

  it('polls, writes and reads tags by name; refuses 3.7 for an int16 (plc-tags-by-name-poll-read-and-write)', async () => {
    const hr = modbusSim.model.banks.holdingRegisters;
    hr.fill(0, 100, 107);
    modbusSim.model.banks.coils[3] = 0;
    const flow = await exampleFlow(nr.api, 'plc-tags-by-name-poll-read-and-write', toSims);
    await deploy(flow);
    const first = await tap.waitFor((m) => m.name === 'named values', 'the first named values');
    assert.deepEqual(first.msg.payload, { boiler_temp: 0, setpoint: 0, speed: 0, level: 0, overheat: false, pump_on: false });
    assert.equal(first.msg.quality.setpoint, 'ok');
    assert.deepEqual(first.msg.units, { boiler_temp: '°C', setpoint: '°C', speed: 'rpm', level: '%' });
    await inject(flow, 'write setpoint, speed, level, pump');
    const results = await tap.waitFor((m) => m.name === 'results', 'the write results');
    assert.deepEqual(results.msg, { setpoint: { ok: true }, speed: { ok: true }, level: { ok: true }, pump_on: { ok: true } });
    const polled = await tap.waitFor((m) => m.name === 'named values' && m.msg.payload.setpoint === 72.5, 'the written values polled');
    assert.deepEqual(polled.msg.changed.sort(), ['level', 'pump_on', 'setpoint', 'speed']);
    assert.equal(hr[104], 1200);
    await inject(flow, 'refused: speed 3.7 (int16)');
    const refused = await tap.waitFor((m) => m.name === 'error', 'the refusal');
    assert.equal(refused.msg.code, 'NINES_ERR_INVALID_VALUE');
    assert.equal(hr[104], 1200, 'nothing written');
    await inject(flow, 'read all tags now');
    const read = await tap.waitFor((m) => m.name === 'read', 'the read');
    assert.deepEqual(read.msg.payload, { boiler_temp: 0, setpoint: 72.5, speed: 1200, level: 42.5, overheat: false, pump_on: true });
    assert.equal(read.msg.reads, 2);
  });

  it('polls at 1 kHz in a worker and sends only changes (poll-at-1khz-in-a-worker-emitting-only-changes)', async () => {
    const flow = await exampleFlow(nr.api, 'poll-at-1khz-in-a-worker-emitting-only-changes', (n) => {
      toSims(n);
      if (n.type === 'nines-poll') n.interval = 0.5; // the example's 10 s latency interval, cut for test time
    });
    const before = asciiSim.stats.requests;
    await deploy(flow);
    const first = await tap.waitFor((m) => m.name === 'changes', 'first values');
    assert.deepEqual(first.msg.outputs, new Array(8).fill(false));
    await inject(flow, 'output 0 on');
    await tap.waitFor((m) => m.name === 'changes' && m.msg.outputs[0] === true, 'the change');
    const summary = await tap.waitFor((m) => m.name === 'latency every 10 s' && m.msg.count > 0, 'a latency summary');
    assert.equal(summary.msg.unit, 'ms');
    assert.ok(summary.msg.p99 > 0);
    // hundreds of polls, a handful of msgs
    assert.ok(asciiSim.stats.requests - before > 100, `polls: ${asciiSim.stats.requests - before}`);
    assert.ok(tap.messages.filter((m) => m.name === 'changes').length <= 3);
    await inject(flow, 'stop');
    await inject(flow, 'output 0 off');
    noErrors();
  });

  it('runs a latency probe and writes one .hgrm file per run (latency-probe-writing-hgrm-files)', async () => {
    const flow = await exampleFlow(nr.api, 'latency-probe-writing-hgrm-files', (n) => {
      toSims(n);
      if (n.type === 'nines-latency-probe') n.count = 400; // the example's 10,000 per run, cut for test time
    });
    await deploy(flow);
    await inject(flow, 'start');
    for (const n of [1, 2, 4, 8]) {
      const run = await tap.waitFor((m) => m.name === 'summary per run' && m.msg.connections === n, `run ${n}x`, 30000);
      assert.equal(run.msg.count, 400);
      assert.equal(run.msg.ok, 400);
      assert.ok(run.msg.p99 > 0);
    }
    // <user dir>/hgrm/<run>-<probe start, UTC>.hgrm: not Node-RED's working directory, and a new
    // probe never overwrites an earlier one's files
    const written = await tap.waitFor((m) => m.name === 'file written' && /-8x-\d{8}T\d{6}\.\d{3}Z\.hgrm$/.test(m.msg), 'the 8x file');
    const file = written.msg;
    assert.equal(path.dirname(file), path.join(nr.userDir, 'hgrm'));
    await assert.doesNotReject(fs.promises.access(file));
    assert.match(fs.readFileSync(file, 'utf8'), /Value\s+Percentile\s+TotalCount/);
    for (const n of [1, 2, 4]) assert.ok(fs.existsSync(file.replace('-8x-', `-${n}x-`)), `${n}x file`);
    assert.deepEqual(fs.readdirSync(nr.userDir).filter((f) => f.endsWith('.hgrm')), [], 'nothing in the user directory itself');
    noErrors();
  });

  it('sends a device\'s health as it goes up, down and up (device-health-up-and-down-as-messages)', async () => {
    const sim = await createModbusTcpSimulator({ port: 0 });
    try {
      const flow = await exampleFlow(nr.api, 'device-health-up-and-down-as-messages', (n) => {
        if (n.type === 'nines-modbus-device') { n.port = sim.port; n.backoffMax = 300; }
      });
      await deploy(flow);
      const up = await tap.waitFor((m) => m.name === 'device health' && m.msg.state === 'up', 'up');
      assert.deepEqual(up.msg.connections, { open: 1, max: 1 });
      assert.equal(up.topic, 'PLC simulator (example: device health)');
      await tap.waitFor((m) => m.name === 'registers', 'the poll node\'s values');
      const port = sim.port;
      await sim.close();
      const alarm = await tap.waitFor((m) => m.name === 'alarm: device down', 'the alarm');
      assert.match(alarm.msg.code, /^NINES_ERR_(CONNECTION_CLOSED|CONNECT_FAILED)$/);
      const back = await createModbusTcpSimulator({ port });
      try {
        await tap.waitFor((m) => m.name === 'device health' && m.msg.state === 'up' && m.msg.since > up.msg.since, 'up again');
      } finally {
        await deploy([]);
        await back.close();
      }
      noErrors();
    } finally {
      await sim.close();
    }
  });

  it('merges latency payloads from MQTT (fleet-latency-from-mqtt-merged-and-charted)', async () => {
    const broker = await startEmbeddedBroker({ port: 0 });
    let client;
    try {
      client = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
      // retained, so Node-RED's mqtt-in gets them whenever it subscribes
      await client.publishAsync('nines/gw1/plc1/latency', JSON.stringify(latencyPayload('gw1', 'plc1', 1, [...new Array(98).fill(1), 100, 100])), { qos: 1, retain: true });
      await client.publishAsync('nines/gw2/plc1/latency', JSON.stringify(latencyPayload('gw2', 'plc1', 1, new Array(100).fill(2))), { qos: 1, retain: true });
      const flow = await exampleFlow(nr.api, 'fleet-latency-from-mqtt-merged-and-charted', (n) => {
        if (n.type === 'mqtt-broker') n.port = String(broker.port);
      });
      await deploy(flow);
      const merged = await tap.waitFor((m) => m.name === 'fleet percentiles' && m.msg.count === 200, 'both gateways merged', 20000);
      assert.deepEqual(merged.msg.gateways, ['gw1', 'gw2']);
      assert.equal(merged.msg.key, 'plc1');
      // gw1's p99 is 100 ms and gw2's 2 ms: the merged p99 is 2 ms, not their 51 ms average
      assert.ok(Math.abs(merged.msg.p99 - 2) < 0.02, `p99 ${merged.msg.p99}`);
      const chart = await tap.waitFor((m) => m.name === 'chart series' && m.msg.topic === 'plc1 p99' && m.msg.payload === merged.msg.p99, 'chart point');
      assert.equal(typeof chart.msg.timestamp, 'number');
      noErrors();
      await deploy([]); // disconnect mqtt-in before the broker goes
    } finally {
      if (client) await client.endAsync();
      await broker.close();
    }
  });
});
