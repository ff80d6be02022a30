'use strict';

const assert = require('node:assert/strict');
const { EdgeNode } = require('../../gateway/runtime/sparkplug/edge-node');
const { buildModel } = require('../../gateway/runtime/sparkplug/model');
const { encodePayload, decodePayload } = require('../../gateway/runtime/sparkplug/codec');

const TAGS = [
  { name: 'temp', table: 'holding', address: 0, type: 'int16', scale: 0.1, offset: 0, unit: '°C' },
  { name: 'run', table: 'coil', address: 0, type: 'bool', scale: 1, offset: 0, unit: null }
];

function config (jobs) {
  return {
    jobs: jobs || [
      { name: 'fast', device: 'plc', kind: 'tags', tags: TAGS, values: { minIntervalMs: 0 } },
      { name: 'raw', device: 'meter', kind: 'read', values: { minIntervalMs: 0 } }
    ]
  };
}

/** An edge node whose messages are decoded into `sent` */
function edge (opts = {}) {
  const sent = [];
  const writes = [];
  const names = new Map();
  let mono = 0;
  const node = new EdgeNode({
    group: 'g',
    node: 'n',
    model: buildModel(opts.config || config()),
    // as a host reads them: a DATA metric carries its alias alone, resolved from the births
    publish: (topic, payload) => {
      const p = decodePayload(payload);
      const type = topic.split('/')[2];
      const metrics = p.metrics || [];
      for (const m of metrics) {
        if (/BIRTH/.test(type)) names.set(Number(m.alias), m.name);
        else if (m.alias !== undefined) {
          assert.equal(m.name, undefined, `${type} carries aliases only`);
          m.name = names.get(Number(m.alias));
        }
      }
      sent.push({ topic, type, seq: p.seq === undefined ? null : Number(p.seq), metrics });
    },
    writes: opts.writes,
    writeTags: async (device, values) => { writes.push({ device, values }); return { ok: true, results: {} }; },
    now: () => 1700000000000,
    monotonic: () => mono
  });
  return { node, sent, writes, tick: (ms) => { mono += ms; } };
}

const values = (temp, run = true, quality = { temp: 'ok', run: 'ok' }) => ({ values: { temp, run }, quality, ts: 1700000000000, changed: ['temp', 'run'] });
const ncmd = (metrics) => encodePayload({ timestamp: 1, metrics });

describe('Sparkplug edge node', () => {
  it('sends NBIRTH first with bdSeq, Node Control/Rebirth and the latency metrics of every job, seq 0', () => {
    const { node, sent } = edge();
    node.onValues('fast', values(21.5));
    assert.equal(sent.length, 0, 'nothing before the session is up');
    node.born(7);
    assert.equal(sent[0].type, 'NBIRTH');
    assert.equal(sent[0].seq, 0);
    const names = sent[0].metrics.map((m) => m.name);
    assert.deepEqual(names.slice(0, 2), ['bdSeq', 'Node Control/Rebirth']);
    assert.equal(Number(sent[0].metrics[0].value), 7);
    assert.ok(names.includes('Latency/raw/p99') && names.includes('Latency/fast/skipped'));
    node.close();
  });

  it('births a device once it is up and read, whichever comes last, and never sends its data before', () => {
    const { node, sent } = edge();
    node.born(0);
    node.onHealth('plc', { state: 'up' });
    assert.deepEqual(sent.map((m) => m.type), ['NBIRTH'], 'up but never read: no DBIRTH yet');
    node.onValues('fast', values(21.5));
    assert.deepEqual(sent.map((m) => [m.type, m.seq]), [['NBIRTH', 0], ['DBIRTH', 1]]);
    const birth = sent[1].metrics;
    assert.deepEqual(birth.map((m) => [m.name, m.type, m.value]), [['temp', 'Double', 21.5], ['run', 'Boolean', true]]);
    assert.equal(birth[0].properties.engUnit.value, '°C');
    node.onValues('fast', { ...values(22), changed: ['temp'] });
    assert.deepEqual(sent[2].metrics.map((m) => [m.name, m.value]), [['temp', 22]]);
    assert.equal(sent[2].metrics[0].properties.engUnit, undefined, 'units only in births');
    node.close();
  });

  it('sends DDEATH when the device goes down and DBIRTH with its latest reads when it is up again', () => {
    const { node, sent } = edge();
    node.born(0);
    node.onHealth('plc', { state: 'up' });
    node.onValues('fast', values(21.5));
    node.onHealth('plc', { state: 'down' });
    node.onValues('fast', values(null, null, { temp: 'NINES_ERR_NOT_CONNECTED', run: 'NINES_ERR_NOT_CONNECTED' }));
    node.onHealth('plc', { state: 'connecting' });
    assert.deepEqual(sent.map((m) => m.type), ['NBIRTH', 'DBIRTH', 'DDEATH']);
    node.onHealth('plc', { state: 'up' });
    const rebirth = sent[3];
    assert.equal(rebirth.type, 'DBIRTH');
    assert.equal(rebirth.metrics[0].value, null, 'is_null');
    assert.equal(rebirth.metrics[0].properties.Quality.value, 8, 'not connected');
    assert.equal(rebirth.metrics[0].properties['nines.error'].value, 'NINES_ERR_NOT_CONNECTED');
    node.close();
  });

  it('numbers every message after the NBIRTH by one, wrapping from 255 to 0, and starts again at 0 on a rebirth', () => {
    const { node, sent } = edge();
    node.born(0);
    node.onHealth('plc', { state: 'up' });
    for (let i = 0; i < 300; i++) node.onValues('fast', { ...values(i), changed: ['temp'] });
    const seqs = sent.map((m) => m.seq);
    for (let i = 1; i < seqs.length; i++) assert.equal(seqs[i], (seqs[i - 1] + 1) % 256, `message ${i}`);
    assert.ok(seqs.includes(255) && seqs.lastIndexOf(0) > 0);
    assert.equal(node.rebirth('test'), true);
    const nb = sent.findLastIndex((m) => m.type === 'NBIRTH');
    assert.deepEqual(sent.slice(nb).map((m) => [m.type, m.seq]), [['NBIRTH', 0], ['DBIRTH', 1]]);
    node.close();
  });

  it('holds a device\'s DDATA to its value window and sends what changed in it as one message', async () => {
    const { node, sent, tick } = edge({ config: config([{ name: 'fast', device: 'plc', kind: 'tags', tags: TAGS, values: { minIntervalMs: 30 } }]) });
    node.born(0);
    node.onHealth('plc', { state: 'up' });
    node.onValues('fast', values(1));
    tick(100);
    node.onValues('fast', { ...values(2), changed: ['temp'] });
    node.onValues('fast', { ...values(2, false), changed: ['run'] });
    node.onValues('fast', { ...values(3, false), changed: ['temp'] });
    assert.deepEqual(sent.map((m) => m.type), ['NBIRTH', 'DBIRTH', 'DDATA'], 'the first change goes at once');
    for (let i = 0; i < 100 && sent.length < 4; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.deepEqual(sent[3].metrics.map((m) => [m.name, m.value]), [['temp', 3], ['run', false]]);
    node.close();
  });

  it('batches latency summaries into one NDATA, after the NBIRTH only', async () => {
    const { node, sent } = edge();
    node.ndataWindowMs = 5;
    node.onSummary('fast', { p99: 9, count: 1, end: new Date().toISOString() });
    node.born(0);
    const p99 = sent[0].metrics.find((m) => m.name === 'Latency/fast/p99');
    assert.equal(p99.value, 9, 'the NBIRTH carries the latest summary');
    node.onSummary('fast', { p50: 1, p90: 2, p99: 3, p99_9: 4, max: 5, count: 10, errors: 1, timeouts: 0, skipped: 0, end: new Date().toISOString() });
    node.onSummary('raw', { p99: 7, count: 3, end: new Date().toISOString() });
    node.onSummary('unknown-job', { p99: 1 });
    for (let i = 0; i < 100 && sent.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(sent[1].type, 'NDATA');
    assert.equal(sent[1].metrics.length, 18);
    assert.equal(sent[1].metrics.find((m) => m.name === 'Latency/fast/p99').value, 3);
    assert.equal(Number(sent[1].metrics.find((m) => m.name === 'Latency/fast/errors').value), 1);
    assert.equal(sent[1].metrics.find((m) => m.name === 'Latency/raw/p50').value, null, 'is_null');
    node.close();
  });

  it('rebirths on NCMD Node Control/Rebirth = true, and refuses anything else whole, changing nothing', async () => {
    const { node, sent } = edge();
    const refused = [];
    node.on('refused', (e) => refused.push(e));
    node.born(3);
    node.onHealth('plc', { state: 'up' });
    node.onValues('fast', values(1));
    const topic = 'spBv1.0/g/NCMD/n';
    const bad = [
      Buffer.from([0xff, 0xff, 0xff]),
      ncmd([]),
      ncmd([{ name: 'Node Control/Reboot', type: 'Boolean', value: true }]),
      ncmd([{ name: 'Node Control/Rebirth', type: 'Int32', value: 1 }]),
      ncmd([{ name: 'Node Control/Rebirth', type: 'Boolean', value: null }]),
      ncmd([{ name: 'Node Control/Rebirth', type: 'Boolean', value: true }, { name: 'x', type: 'Boolean', value: true }]),
      Buffer.alloc(70000)
    ];
    const before = sent.length;
    for (const b of bad) await node.onMessage(topic, b);
    assert.deepEqual(refused.map((e) => e.code), Array(bad.length).fill('NINES_ERR_SPARKPLUG'));
    assert.ok(refused.every((e) => e.details.topic === topic));
    assert.equal(sent.length, before, 'nothing published');
    assert.equal(node.counts.rebirths, 0);
    await node.onMessage(topic, ncmd([{ name: 'Node Control/Rebirth', type: 'Boolean', value: false }]));
    assert.equal(sent.length, before, 'false asks for nothing');
    await node.onMessage(topic, ncmd([{ name: 'Node Control/Rebirth', type: 'Boolean', value: true }]));
    assert.deepEqual(sent.slice(before).map((m) => m.type), ['NBIRTH', 'DBIRTH']);
    assert.equal(Number(sent[before].metrics[0].value), 3, 'same session, same bdSeq');
    await node.onMessage('spBv1.0/other/NCMD/n', ncmd([{ name: 'Node Control/Rebirth', type: 'Boolean', value: true }]));
    assert.equal(node.counts.rebirths, 1, 'another node\'s command is not ours');
    node.close();
  });

  it('refuses DCMD while writes are off; with writes on, checks names and datatypes and hands the values to writeTags', async () => {
    const off = edge();
    const refusedOff = [];
    off.node.on('refused', (e) => refusedOff.push(e));
    off.node.born(0);
    off.node.onHealth('plc', { state: 'up' });
    off.node.onValues('fast', values(1));
    await off.node.onMessage('spBv1.0/g/DCMD/n/plc', ncmd([{ name: 'temp', type: 'Double', value: 2 }]));
    assert.match(refusedOff[0].message, /writes by DCMD are off/);
    assert.equal(off.writes.length, 0);
    off.node.close();

    const { node, writes } = edge({ writes: true });
    const refused = [];
    node.on('refused', (e) => refused.push(e));
    node.born(0);
    await node.onMessage('spBv1.0/g/DCMD/n/plc', ncmd([{ name: 'temp', type: 'Double', value: 2 }]));
    assert.match(refused[0].message, /not born/);
    node.onHealth('plc', { state: 'up' });
    node.onValues('fast', values(1));
    await node.onMessage('spBv1.0/g/DCMD/n/meter', ncmd([{ name: 'x', type: 'Double', value: 2 }]));
    await node.onMessage('spBv1.0/g/DCMD/n/plc', ncmd([{ name: 'nope', type: 'Double', value: 2 }]));
    await node.onMessage('spBv1.0/g/DCMD/n/plc', ncmd([{ name: 'temp', type: 'Float', value: 2 }]));
    await node.onMessage('spBv1.0/g/DCMD/n/plc', ncmd([{ name: 'temp', type: 'Double', value: null }]));
    assert.deepEqual(refused.slice(1).map((e) => e.message.replace(/^command on \S+ refused: /, '').replace(/;.*$/, '')), [
      'no Sparkplug device "meter" on this edge node',
      'device "plc" has no metric "nope"',
      'metric "temp" is Double (as in its DBIRTH)',
      'metric "temp" has no value'
    ]);
    assert.equal(writes.length, 0);
    await node.onMessage('spBv1.0/g/DCMD/n/plc', ncmd([{ name: 'temp', type: 'Double', value: 20.5 }, { name: 'run', type: 'Boolean', value: false }]));
    assert.deepEqual(writes, [{ device: 'plc', values: { temp: 20.5, run: false } }]);
    node.close();
  });

  it('a reload gives a device with a new metric set its DDEATH and a new DBIRTH, and new jobs a rebirth', () => {
    const { node, sent } = edge();
    node.born(0);
    node.onHealth('plc', { state: 'up' });
    node.onValues('fast', values(1));
    node.setModel(buildModel(config()));
    assert.deepEqual(sent.map((m) => m.type), ['NBIRTH', 'DBIRTH'], 'the same config changes nothing');
    const fewer = config([{ name: 'fast', device: 'plc', kind: 'tags', tags: TAGS.slice(0, 1), values: { minIntervalMs: 0 } }, { name: 'raw', device: 'meter', kind: 'read', values: {} }]);
    node.setModel(buildModel(fewer));
    assert.deepEqual(sent.slice(2).map((m) => m.type), ['DDEATH', 'DBIRTH']);
    assert.deepEqual(sent[3].metrics.map((m) => [m.name, m.value]), [['temp', 1]], 'a kept tag keeps its read');
    node.setModel(buildModel({ jobs: [...fewer.jobs, { name: 'raw2', device: 'meter', kind: 'read', values: {} }] }));
    assert.deepEqual(sent.slice(4).map((m) => [m.type, m.seq]), [['NBIRTH', 0], ['DBIRTH', 1]]);
    node.setModel(buildModel({ jobs: [{ name: 'raw', device: 'meter', kind: 'read', values: {} }] }));
    assert.deepEqual(sent.slice(6).map((m) => m.type), ['DDEATH', 'NBIRTH'], 'a device that is gone dies first');
    node.close();
  });

  it('is silent while its session is down, and says nothing of devices until the next births', () => {
    const { node, sent } = edge();
    node.born(0);
    node.onHealth('plc', { state: 'up' });
    node.onValues('fast', values(1));
    node.lost();
    node.onValues('fast', values(2));
    node.onHealth('plc', { state: 'down' });
    node.onSummary('fast', { p99: 1 });
    assert.equal(node.rebirth('x'), false);
    assert.equal(sent.length, 2);
    node.onHealth('plc', { state: 'up' });
    node.born(1);
    assert.deepEqual(sent.slice(2).map((m) => m.type), ['NBIRTH', 'DBIRTH']);
    assert.equal(sent[3].metrics[0].value, 2, 'the latest read');
    node.close();
  });
});
