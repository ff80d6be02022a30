'use strict';

const assert = require('node:assert/strict');
const os = require('node:os');
const path = require('node:path');
const { helper, expectError, waitStatus, withModbusSim } = require('./harness');
const latency = require('../../gateway/latency');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const modbusDevice = require('../../nodes/nines-modbus-device');
const probeNode = require('../../nodes/nines-latency-probe');
const mergeNode = require('../../nodes/nines-latency-merge');
const { hgrmDirectory, hgrmFilename, fileStamp } = require('../../nodes/lib/probe-run');
const { until } = require('../helpers/wait');

function flow (port, probe = {}) {
  return [
    { id: 'dev', type: 'nines-modbus-device', transport: 'tcp', host: '127.0.0.1', port, unitId: 1, timeout: 500, allowWrites: false },
    {
      id: 'p', type: 'nines-latency-probe', protocol: 'modbus', asciiDevice: '', modbusDevice: 'dev', command: '', generator: '',
      fc: 3, address: 0, quantity: 10, connections: '1,2', count: 200, duration: '', rate: 'max',
      wires: [['summary', 'merge'], ['hgrm'], ['hist']], ...probe
    },
    { id: 'merge', type: 'nines-latency-merge', keyBy: 'all', window: 3600, output: 'input', interval: 10, percentiles: 'p99', wires: [['merged'], []] },
    { id: 'summary', type: 'helper' },
    { id: 'hgrm', type: 'helper' },
    { id: 'hist', type: 'helper' },
    { id: 'merged', type: 'helper' }
  ];
}

function collect (ids) {
  const out = {};
  for (const id of ids) {
    out[id] = [];
    helper.getNode(id).on('input', (m) => out[id].push(m));
  }
  return out;
}

describe('nines-latency-probe', function () {
  let sim;
  withModbusSim(() => sim, (s) => { sim = s; });

  it('runs once per connection count in a worker and sends summary, .hgrm and histogram per run', async () => {
    await helper.load([modbusDevice, probeNode, mergeNode], flow(sim.port));
    const out = collect(['summary', 'hgrm', 'hist', 'merged']);
    const p = helper.getNode('p');
    p.receive({ topic: 'start', tag: 'mine' });
    await until(() => out.summary.length === 2 && out.merged.length === 2, 'two runs', 15000);

    const [one, two] = out.summary;
    assert.equal(one.tag, 'mine', 'the summary carries the start msg');
    assert.equal(one.payload.connections, 1);
    assert.equal(two.payload.connections, 2);
    for (const s of out.summary) {
      assert.equal(s.payload.count, 200);
      assert.equal(s.payload.ok, 200);
      assert.equal(s.payload.unit, 'ms');
      assert.equal(s.payload.policy, 'closed');
      assert.ok(s.payload.p99 > 0 && s.payload.max >= s.payload.p99);
      // the summary is a valid latency payload, with a histogram of every request
      const parsed = latency.parseLatencyPayload(s.payload);
      assert.equal(parsed.histogram.totalCount, 200);
    }
    assert.match(out.hgrm[0].payload, /Value\s+Percentile\s+TotalCount/);
    assert.match(one.topic, /-1x$/);
    assert.equal(latency.decodeHistogram(out.hist[1].payload).totalCount, 200);

    // straight into latency-merge: both runs merged under one key
    assert.equal(out.merged[1].payload.count, 400);
    await waitStatus(p, (s) => s.fill === 'green' && /^p99 /.test(s.text), 'p99 when done');
  });

  it('names each run\'s .hgrm file in an explicit directory with the probe\'s start time, so a later probe writes new files', async () => {
    const dir = path.join(os.tmpdir(), 'nines-probe-test-hgrm');
    await helper.load([modbusDevice, probeNode, mergeNode], flow(sim.port, { connections: '1,2', count: 20, directory: dir }));
    const out = collect(['summary', 'hgrm']);
    const p = helper.getNode('p');
    const t0 = Date.now();
    p.receive({ topic: 'start' });
    await until(() => out.hgrm.length === 2, 'two runs', 15000);
    await waitStatus(p, (s) => s.fill === 'green', 'done');
    const stamp = /-(\d{8}T\d{6}\.\d{3}Z)\.hgrm$/;
    for (const [i, m] of out.hgrm.entries()) {
      assert.equal(path.dirname(m.filename), dir);
      assert.ok(path.basename(m.filename).startsWith(`${out.summary[i].topic}-`), m.filename);
      assert.match(m.filename, stamp);
    }
    // one probe, one stamp: its runs' files sort together; the stamp is the probe's start, in UTC
    const [a, b] = out.hgrm.map((m) => stamp.exec(m.filename)[1]);
    assert.equal(a, b);
    const started = Date.parse(a.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})/, '$1-$2-$3T$4:$5:'));
    assert.ok(started >= t0 - 1 && started <= Date.now(), a);

    // the next probe names new files
    await new Promise((resolve) => setTimeout(resolve, 5));
    p.receive({ topic: 'start' });
    await until(() => out.hgrm.length === 4, 'two more runs', 15000);
    assert.notEqual(out.hgrm[2].filename, out.hgrm[0].filename);
  });

  it('puts a relative directory under the Node-RED user directory, "hgrm" by default, never the working directory', () => {
    const RED = { settings: { userDir: '/home/nr/.node-red' } };
    assert.equal(hgrmDirectory(RED, {}), '/home/nr/.node-red/hgrm');
    assert.equal(hgrmDirectory(RED, { directory: ' probes/ed588 ' }), '/home/nr/.node-red/probes/ed588');
    assert.equal(hgrmDirectory(RED, { directory: '/var/lib/nines/hgrm' }), '/var/lib/nines/hgrm');
    assert.equal(hgrmFilename('/d', 'ED-588-@AA-1x', fileStamp(Date.UTC(2026, 4, 1, 12, 0, 0, 7))), '/d/ED-588-@AA-1x-20260501T120000.007Z.hgrm');
  });

  it('keeps runs of a second probe apart from the first in latency-merge (no false duplicates)', async () => {
    await helper.load([modbusDevice, probeNode, mergeNode], flow(sim.port, { name: 'bench', connections: '1', count: 50 }));
    const out = collect(['summary', 'merged']);
    const p = helper.getNode('p');
    p.receive({ topic: 'start' });
    await until(() => out.merged.length === 1, 'first run merged');
    await waitStatus(p, (s) => s.fill === 'green', 'done');
    p.receive({ topic: 'reset' });
    p.receive({ topic: 'start' });
    await until(() => out.merged.length === 2, 'second run merged', 10000);
    assert.deepEqual(out.summary.map((m) => [m.payload.gateway, m.payload.seq]), [['node-red/bench', 0], ['node-red/bench', 1]]);
    assert.equal(out.merged[1].payload.count, 100);
    assert.equal(out.merged[1].payload.duplicates, 0);
    assert.equal(out.merged[1].payload.missed, 0);
  });

  it('shows progress in the status and stops on msg.topic stop', async () => {
    await helper.load([modbusDevice, probeNode, mergeNode], flow(sim.port, { connections: '1', count: 10000000, rate: '5000/s' }));
    const out = collect(['summary']);
    const p = helper.getNode('p');
    p.receive({ topic: 'start' });
    await waitStatus(p, (s) => s.fill === 'blue' && s.shape === 'dot' && /^1x \d+%$/.test(s.text), 'progress', 10000);
    const err = await expectError(p, { topic: 'start' });
    assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
    assert.match(err.message, /already running/);
    p.receive({ topic: 'stop' });
    await until(() => out.summary.length === 1, 'the stopped run\'s summary', 10000);
    assert.ok(out.summary[0].payload.count < 10000000);
    assert.equal(out.summary[0].payload.policy, 'capped');
    await waitStatus(p, (s) => s.fill === 'green', 'done after stop');
  });

  it('reports an unreachable device with its code and stays ready for the next start', async () => {
    const port = sim.port;
    await sim.close();
    await helper.load([modbusDevice, probeNode, mergeNode], flow(port, { connections: '1', count: 10 }));
    const p = helper.getNode('p');
    const err = await expectError(p, { topic: 'start' }, 10000);
    assert.ok(['NINES_ERR_CONNECT_FAILED', 'NINES_ERR_CONNECT_TIMEOUT'].includes(err.code), err.code);
    await waitStatus(p, (s) => s.fill === 'red', 'red');
    sim = await createModbusTcpSimulator({ port: 0 });
  });

  it('rejects settings that fail validation, at deploy and on start', async () => {
    await helper.load([modbusDevice, probeNode, mergeNode], flow(sim.port, { connections: '1,x' }));
    const p = helper.getNode('p');
    await waitStatus(p, (s) => s.fill === 'red' && s.text === 'bad argument', 'bad argument');
    const err = await expectError(p, { topic: 'start' });
    assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
    assert.match(err.message, /connections must be an integer from 1 to 64; got "x"/);
  });

  it('refuses a probe without a device of its protocol', async () => {
    await helper.load([modbusDevice, probeNode, mergeNode], flow(sim.port, { protocol: 'ascii' }));
    const err = await expectError(helper.getNode('p'), { topic: 'start' });
    assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
    assert.match(err.message, /no nines-ascii-device is selected/);
  });
});
