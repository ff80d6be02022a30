'use strict';

/**
 * Question 11: what does coalescing save? One poll of 50 tags scattered over 300 holding registers
 * (a fixed layout: uint16, float32 and float64 tags with gaps of 0-7 registers), read through one
 * device connection, closed loop: the tags' coalesced plan (maxGap 16, the default) against one
 * request per tag. Per poll: the requests sent and the poll time (first write to last reply), against
 * the reference server and against the nines simulator in its own process. Also maxGap 0 (merge only
 * adjacent tags), the plan a device that refuses to read unused registers would need.
 */

const path = require('node:path');
const { options, Row, interleave, run } = require('./lib/question');
const { closedLoop } = require('./lib/closed-loop');
const { startReferenceModbusServer, startSimProcess } = require('./lib/servers');

const ROOT = path.join(__dirname, '..');

/** 50 tags over 300 registers, the same every run (a small LCG, seeded) */
function layout () {
  let seed = 11;
  const rand = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
  const types = ['uint16', 'float32', 'float64'];
  const tags = [];
  let address = 0;
  for (let i = 0; i < 50; i++) {
    const type = types[Math.floor(rand() * 3)];
    tags.push({ name: `t${i}`, table: 'holding', address, type });
    address += { uint16: 1, float32: 2, float64: 4 }[type] + Math.floor(rand() * 8);
  }
  return tags;
}

run(async () => {
  const o = options();
  const { Device } = require(path.join(ROOT, 'gateway', 'devices'));
  const { buildTags, tagContext, planReads, TagReader } = require(path.join(ROOT, 'gateway', 'tags'));
  const { parseTarget } = require(path.join(ROOT, 'gateway', 'drivers', 'target'));
  const servers = [await startReferenceModbusServer(), { ...(await startSimProcess('modbus')), name: 'nines Modbus simulator' }];
  const raw = layout();
  const span = raw[raw.length - 1].address + 4;
  const size = { ...o, count: o.quick ? 300 : 20000, warmup: o.quick ? 30 : 500 };
  const sections = [];
  for (const server of servers) {
    const target = parseTarget(`modbus+tcp://127.0.0.1:${server.port}?unitId=1`);
    const plans = {};
    for (const [id, maxGap] of [['coalesced', 16], ['adjacent', 0]]) {
      const ctx = tagContext(target, { maxGap });
      const tags = buildTags(raw, ctx);
      plans[id] = { tags, blocks: planReads(tags, ctx) };
    }
    const perTag = plans.coalesced.tags.map((t, i) => ({ table: 'holding', fc: 3, address: t.address, quantity: t.span, tags: [i] }));
    plans.perTag = { tags: plans.coalesced.tags, blocks: perTag };
    const rows = {
      coalesced: new Row('coalesced', `coalesced, maxGap 16: ${plans.coalesced.blocks.length} requests per poll`, { requestsPerPoll: plans.coalesced.blocks.length }),
      adjacent: new Row('adjacent', `coalesced, maxGap 0: ${plans.adjacent.blocks.length} requests per poll`, { requestsPerPoll: plans.adjacent.blocks.length }),
      perTag: new Row('per-tag', `one request per tag: ${perTag.length} requests per poll`, { requestsPerPoll: perTag.length })
    };
    const device = new Device({ name: 'bench', target, timeoutMs: 2000, queueMax: 100 });
    await device.open();
    const user = device.user('bench', { queueMax: 100 });
    const rowRun = (id) => ({
      row: rows[id],
      run: async () => {
        const reader = new TagReader({ tags: plans[id].tags, blocks: plans[id].blocks, request: (op, opts) => user.request(op, opts) });
        rows[id].addLatency(await closedLoop(() => reader.poll(), size));
      }
    });
    await interleave(o.rounds, [rowRun('coalesced'), rowRun('adjacent'), rowRun('perTag')]);
    await device.close();
    await server.stop();
    sections.push({ title: `Against the ${server.name} (polls of 50 tags over ${span} registers)`, kind: 'latency', rows: Object.values(rows) });
  }
  return {
    question: 11,
    name: 'tags',
    title: 'Coalesced tag reads vs one request per tag (50 tags over 300 registers, one connection, closed loop)',
    latency: true,
    server: servers[0].name,
    sections,
    notes: ['Each latency sample is one whole poll: from its first write to its last reply; req/s is polls per second.'],
    cmdlines: servers.map((s) => s.cmdline).filter(Boolean)
  };
});
