'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const Long = require('long');
const { EdgeNode } = require('../../gateway/runtime/sparkplug/edge-node');
const { buildModel } = require('../../gateway/runtime/sparkplug/model');
const { HeldData } = require('../../gateway/runtime/sparkplug/hold');
const { encodePayload, decodePayload } = require('../../gateway/runtime/sparkplug/codec');

const TAGS = [
  { name: 'temp', table: 'holding', address: 0, type: 'int16', scale: 1, offset: 0, unit: null },
  { name: 'run', table: 'coil', address: 0, type: 'bool', scale: 1, offset: 0, unit: null }
];
const config = () => ({
  devices: { plc: { tags: { groups: { pump: TAGS } } }, plc2: { tags: { groups: { pump: TAGS } } } },
  jobs: [
    { name: 'fast', device: 'plc', kind: 'tags', tags: TAGS, values: { minIntervalMs: 0 } },
    { name: 'fast2', device: 'plc2', kind: 'tags', tags: TAGS, values: { minIntervalMs: 0 } }
  ]
});
const state = (online, timestamp = Date.now()) => Buffer.from(JSON.stringify({ online, timestamp }));
const HOST = 'spBv1.0/STATE/scada';

/** An edge node with a primary host; `sent` is what a host decodes, DATA names resolved from the births */
function edge ({ maxMessages = 1000, templates = false, writes = false, hold = new HeldData({ maxMessages, maxBytes: 1 << 20 }), aliases, replayWaitMs } = {}) {
  const sent = [];
  const writesDone = [];
  const names = new Map();
  const node = new EdgeNode({
    ...(aliases ? { aliases } : {}),
    ...(replayWaitMs === undefined ? {} : { replayWaitMs }),
    group: 'g',
    node: 'n',
    model: buildModel(config()),
    primaryHost: 'scada',
    hold,
    templates,
    writes,
    writeTags: async (device, values) => { writesDone.push({ device, values }); return { ok: true, results: {} }; },
    publish: (topic, payload) => {
      const p = decodePayload(payload);
      const type = topic.split('/')[2];
      const metrics = p.metrics || [];
      for (const m of metrics) {
        if (/BIRTH/.test(type)) names.set(Number(m.alias), m.name);
        else if (m.alias !== undefined) { assert.equal(m.name, undefined, 'DATA carries aliases only'); m.name = names.get(Number(m.alias)); }
      }
      sent.push({ topic, type, device: topic.split('/')[4] || null, seq: p.seq === undefined ? null : Number(p.seq), timestamp: Number(p.timestamp), metrics });
    }
  });
  return { node, sent, hold, writesDone };
}
const values = (temp, ts) => ({ values: { temp, run: true }, quality: { temp: 'ok', run: 'ok' }, ts, changed: ['temp'] });

describe('Sparkplug store and forward with a primary host', () => {
  it('births only once the host\'s STATE says online, also when the retained STATE came before the SUBACK', () => {
    const { node, sent } = edge();
    node.onHealth('plc', { state: 'up' });
    node.onValues('fast', values(1, 1000));
    node.born(0);
    assert.deepEqual(sent, [], 'connected, host not online: nothing');
    node.onMessage(HOST, state(true));
    // what was read while waiting for the host is history too
    assert.deepEqual(sent.map((m) => m.type), ['NBIRTH', 'DBIRTH', 'DDATA']);
    assert.equal(sent[2].metrics[0].isHistorical, true);
    node.close();

    const early = edge();
    early.node.onMessage('STATE/scada', Buffer.from('ONLINE')); // the 2.2 form, before born()
    early.node.born(3);
    assert.deepEqual(early.sent.map((m) => m.type), ['NBIRTH']);
    early.node.close();
  });

  it('holds DATA while the host is offline and, after the next births, sends it in order, historical, before live DATA', () => {
    const { node, sent, hold } = edge();
    const offline = [];
    node.on('host-offline', (e) => offline.push(e));
    node.onHealth('plc', { state: 'up' });
    node.onValues('fast', values(1, 1000));
    node.born(0);
    node.onMessage(HOST, state(true, 10));
    node.onMessage(HOST, state(false, 20));
    assert.deepEqual(offline, [{ wasBorn: true }]);
    for (let i = 2; i <= 6; i++) node.onValues('fast', values(i, 1000 + i));
    assert.equal(hold.count, 5);
    assert.equal(node.stats.held.count, 5);
    assert.ok(node.stats.held.oldestAgeMs > 0);
    node.lost(); // the session ends (session.js), a new one starts
    node.born(1);
    const from = sent.length;
    node.onMessage(HOST, state(true, 30));
    const after = sent.slice(from);
    assert.deepEqual(after.map((m) => m.type), ['NBIRTH', 'DBIRTH', 'DDATA', 'DDATA', 'DDATA', 'DDATA', 'DDATA']);
    assert.equal(Number(after[0].metrics.find((m) => m.name === 'bdSeq').value), 1);
    assert.equal(after[1].metrics.find((m) => m.name === 'temp').value, 6, 'the DBIRTH has the latest read');
    const held = after.slice(2);
    assert.deepEqual(held.map((m) => m.metrics[0].value), [2, 3, 4, 5, 6]);
    assert.deepEqual(held.map((m) => m.metrics[0].timestamp.toNumber()), [1002, 1003, 1004, 1005, 1006]);
    assert.ok(held.every((m) => m.metrics.every((x) => x.isHistorical === true && x.name === 'temp')));
    assert.deepEqual(after.map((m) => m.seq), [0, 1, 2, 3, 4, 5, 6]);
    assert.equal(hold.count, 0);
    node.onValues('fast', values(7, 2000));
    const live = sent[sent.length - 1];
    assert.equal(live.metrics[0].value, 7);
    assert.equal(live.metrics[0].isHistorical, undefined);
    assert.equal(node.stats.counts.replayed, 6, 'with the read held before the first birth');
    node.close();
  });

  it('after a restart, held DATA of a device not read yet waits for its DBIRTH, then goes out before live DATA; one that does not come in time is dropped, counted', async () => {
    // the first run: the host never came, plc and plc2 were read and held
    const first = edge();
    first.node.onHealth('plc', { state: 'up' });
    first.node.onHealth('plc2', { state: 'up' });
    for (let i = 1; i <= 3; i++) first.node.onValues('fast', values(i, 1000 + i));
    first.node.onValues('fast2', values(50, 1004));
    first.node.close();
    // the next start, with the same hold (on disk, in a gateway) and aliases: the host is online at
    // once, so the births come before any device was read
    const { node, sent } = edge({ hold: first.hold, aliases: first.node.aliases, replayWaitMs: 30 });
    node.born(1);
    node.onMessage(HOST, state(true));
    assert.deepEqual(sent.map((m) => m.type), ['NBIRTH'], 'the replay waits for plc\'s DBIRTH');
    node.onHealth('plc', { state: 'up' });
    node.onValues('fast', values(9, 2000));
    assert.deepEqual(sent.map((m) => m.type), ['NBIRTH', 'DBIRTH', 'DDATA', 'DDATA', 'DDATA']);
    assert.deepEqual(sent.slice(2).map((m) => [m.metrics[0].value, m.metrics[0].isHistorical]), [[1, true], [2, true], [3, true]]);
    assert.equal(sent[1].metrics.find((m) => m.name === 'temp').value, 9, 'the DBIRTH has the latest read');
    // plc2 is never read: what plc reads meanwhile queues behind the history, until the replay
    // gives up on plc2; then it goes out, historical (it waited), and live DATA follows
    node.onValues('fast', values(10, 2001));
    assert.equal(sent.length, 5);
    assert.equal(node.stats.held.count, 2);
    await new Promise((resolve) => setTimeout(resolve, 60));
    node.onValues('fast', values(11, 2002));
    assert.deepEqual(sent.slice(5).map((m) => [m.type, m.metrics[0].value, m.metrics[0].isHistorical]), [['DDATA', 10, true], ['DDATA', 11, undefined]]);
    assert.equal(node.stats.held.count, 0);
    assert.equal(node.stats.held.dropped, 1, 'plc2\'s held DATA, counted');
    assert.deepEqual(sent.map((m) => m.seq), [0, 1, 2, 3, 4, 5, 6]);
    node.close();
  });

  it('keeps the latest DATA when the hold is full, and counts what it dropped', () => {
    const { node, sent, hold } = edge({ maxMessages: 4 });
    const dropped = [];
    node.onHealth('plc', { state: 'up' });
    for (let i = 1; i <= 5; i++) node.onValues('fast', values(i, 1000 + i));
    assert.equal(hold.count, 4);
    assert.equal(hold.dropped, 1);
    // a held DATA of a device that is not born at replay (down now) goes nowhere, counted
    node.onValues('fast2', values(9, 1009));
    assert.equal(node.stats.held.dropped, 2);
    node.onHealth('plc2', { state: 'down' });
    node.on('held-dropped', (n) => dropped.push(n));
    node.born(0);
    node.onMessage(HOST, state(true));
    assert.deepEqual(sent.filter((m) => m.type === 'DDATA').map((m) => m.metrics[0].value), [3, 4, 5]);
    assert.deepEqual(dropped, [1], 'plc2 is down, so it has no DBIRTH');
    assert.equal(node.stats.held.dropped, 3);
    node.close();
  });

  it('keeps every alias across a rebirth and a reload that keeps the metric; a DCMD may give a tag by alias', async () => {
    const { node, sent, writesDone } = edge({ writes: true });
    node.onHealth('plc', { state: 'up' });
    node.onValues('fast', values(1, 1000));
    node.born(0);
    node.onMessage(HOST, state(true));
    const aliasOf = (birth) => Object.fromEntries(birth.metrics.map((m) => [m.name, Number(m.alias)]));
    const first = aliasOf(sent.find((m) => m.type === 'DBIRTH'));
    node.rebirth('test');
    assert.deepEqual(aliasOf(sent.filter((m) => m.type === 'DBIRTH').pop()), first);
    const c = config();
    c.jobs[0].tags = [TAGS[1], { ...TAGS[0], name: 'level', address: 9 }, TAGS[0]];
    node.setModel(buildModel(c));
    const reborn = aliasOf(sent.filter((m) => m.type === 'DBIRTH').pop());
    assert.equal(reborn.temp, first.temp);
    assert.equal(reborn.run, first.run);
    assert.ok(!Object.values(first).includes(reborn.level), 'a new metric gets a new alias');
    await node.onMessage('spBv1.0/g/DCMD/n/plc', encodePayload({ metrics: [{ alias: first.temp, type: 'Int16', value: 5 }] }));
    assert.deepEqual(writesDone, [{ device: 'plc', values: { temp: 5 } }]);
    const refused = [];
    node.on('refused', (e) => refused.push(e));
    await node.onMessage('spBv1.0/g/DCMD/n/plc', encodePayload({ metrics: [{ alias: 999, type: 'Int16', value: 5 }] }));
    await node.onMessage('spBv1.0/g/DCMD/n/plc2', encodePayload({ metrics: [{ alias: first.temp, type: 'Int16', value: 5 }] }));
    assert.deepEqual(refused.map((e) => e.code), ['NINES_ERR_SPARKPLUG', 'NINES_ERR_SPARKPLUG']);
    assert.match(refused[0].message, /alias 999 is not a metric of device "plc"/);
    assert.equal(writesDone.length, 1);
    node.close();
  });

  it('with templates: one definition per tag group in the NBIRTH, an instance per device, DDATA by instance alias with the changed members', async () => {
    const { node, sent, writesDone } = edge({ templates: true, writes: true });
    node.onHealth('plc', { state: 'up' });
    node.onHealth('plc2', { state: 'up' });
    node.onValues('fast', values(1, 1000));
    node.onValues('fast2', values(2, 1000));
    node.born(0);
    node.onMessage(HOST, state(true));
    const nbirth = sent[0];
    const defs = nbirth.metrics.filter((m) => m.type === 'Template');
    assert.deepEqual(defs.map((m) => [m.name, m.value.isDefinition, m.value.metrics.map((x) => [x.name, x.type])]), [['pump', true, [['temp', 'Int16'], ['run', 'Boolean']]]]);
    const births = sent.filter((m) => m.type === 'DBIRTH');
    assert.deepEqual(births.map((b) => b.metrics.map((m) => [m.name, m.type, m.value.templateRef, m.value.isDefinition])), [[['pump', 'Template', 'pump', false]], [['pump', 'Template', 'pump', false]]]);
    assert.deepEqual(births[1].metrics[0].value.metrics.map((x) => [x.name, x.value]), [['temp', 2], ['run', true]]);
    assert.notEqual(Number(births[0].metrics[0].alias), Number(births[1].metrics[0].alias));
    node.onValues('fast', values(5, 1001));
    const ddata = sent[sent.length - 1];
    assert.equal(ddata.type, 'DDATA');
    assert.equal(ddata.metrics[0].name, 'pump');
    assert.deepEqual(ddata.metrics[0].value.metrics.map((x) => [x.name, x.value]), [['temp', 5]]);
    // a host writes a member through its instance
    await node.onMessage('spBv1.0/g/DCMD/n/plc2', encodePayload({ metrics: [{ alias: births[1].metrics[0].alias, type: 'Template', value: { metrics: [{ name: 'run', type: 'Boolean', value: false }] } }] }));
    assert.deepEqual(writesDone, [{ device: 'plc2', values: { run: false } }]);
    node.close();
  });
});

describe('Sparkplug hold on disk', () => {
  it('keeps held DATA across a restart, 64-bit values and all, in order', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-sp-hold-'));
    try {
      const a = new HeldData({ maxMessages: 10, maxBytes: 1 << 20, spool: { dir, syncIntervalMs: 0 } });
      assert.ok(a.dir.endsWith('sparkplug'));
      a.push('plc', 1000, [{ alias: 2, type: 'UInt64', value: Long.fromString('18446744073709551000', true), isHistorical: true }]);
      a.push(null, 1001, [{ alias: 7, type: 'Double', value: 1.5, isHistorical: true }]);
      a.close();
      const b = new HeldData({ maxMessages: 10, maxBytes: 1 << 20, spool: { dir, syncIntervalMs: 0 }, now: () => 3000 });
      assert.equal(b.count, 2);
      assert.equal(b.oldestAgeMs(), 2000);
      const one = b.next();
      assert.equal(one.device, 'plc');
      assert.equal(one.metrics[0].value.toString(), '18446744073709551000');
      b.ack(one);
      const two = b.next();
      assert.deepEqual([two.device, two.ts, two.metrics[0].value], [null, 1001, 1.5]);
      b.ack(two);
      assert.equal(b.count, 0);
      b.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
