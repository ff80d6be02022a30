'use strict';

/**
 * The gateway as a Sparkplug B edge node, seen by an independent host in another process (Python:
 * paho-mqtt, and protobuf classes protoc made from Tahu's sparkplug_b.proto; test/helpers/
 * sparkplug-host.js) through a real Mosquitto. The host checks the birth, death and sequence rules
 * on every message; these tests check what it decoded against the simulator's registers.
 */

const assert = require('node:assert/strict');
const { validateConfig } = require('../../gateway/runtime/config');
const { Gateway } = require('../../gateway/runtime/gateway');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { startMosquitto } = require('../helpers/mosquitto');
const { startSparkplugHost } = require('../helpers/sparkplug-host');
const { until } = require('../helpers/wait');

const GROUP = 'plant';
const NODE = 'edge1';

/** Register words of a value, big-endian (ABCD), as a PLC holds them */
function words (type, value) {
  const sizes = { int16: 2, uint16: 2, int32: 4, uint32: 4, float32: 4, int64: 8, uint64: 8, float64: 8 };
  const b = Buffer.alloc(sizes[type]);
  const write = { int16: 'writeInt16BE', uint16: 'writeUInt16BE', int32: 'writeInt32BE', uint32: 'writeUInt32BE', float32: 'writeFloatBE', int64: 'writeBigInt64BE', uint64: 'writeBigUInt64BE', float64: 'writeDoubleBE' }[type];
  b[write](value, 0);
  const out = [];
  for (let i = 0; i < b.length; i += 2) out.push(b.readUInt16BE(i));
  return out;
}

/** The tags (two jobs: a fast one and a slow one, one Sparkplug device) and what the registers hold */
const FAST = [
  { name: 'temp', table: 'holding', address: 100, type: 'int16', scale: 0.1, unit: '°C' },
  { name: 'neg', table: 'holding', address: 101, type: 'int16' },
  { name: 'level', table: 'holding', address: 102, type: 'float32' },
  { name: 'pump', table: 'coil', address: 3 }
];
const SLOW = [
  { name: 'count32', table: 'holding', address: 110, type: 'uint32' },
  { name: 'big', table: 'holding', address: 112, type: 'uint64' },
  { name: 'i64', table: 'holding', address: 116, type: 'int64' },
  { name: 'avogadro', table: 'holding', address: 120, type: 'float64' },
  { name: 'label', table: 'holding', address: 124, type: 'string', length: 2 },
  { name: 'status/run', table: 'holding', address: 126, type: 'bit', bit: 4 }
];

/** Fills the simulator's registers; returns what each metric must read, computed here, not by nines */
function fill (model, { temp = -1234 } = {}) {
  const set = (addr, list) => model.setRegisters('holdingRegisters', addr, list);
  set(100, words('int16', temp));
  set(101, words('int16', -5));
  set(102, words('float32', 2.5));
  model.setBit('coils', 3, 1);
  set(110, words('uint32', 4000000000));
  set(112, words('uint64', 18446744073709551000n));
  set(116, words('int64', -9007199254740993n));
  set(120, words('float64', 6.02214076e23));
  set(124, [0x4142, 0x3132]); // "AB12"
  set(126, [1 << 4]);
  return {
    temp: { datatype: 'Double', value: temp * 0.1 },
    neg: { datatype: 'Int16', value: -5 },
    level: { datatype: 'Float', value: 2.5 },
    pump: { datatype: 'Boolean', value: true },
    count32: { datatype: 'UInt32', value: 4000000000 },
    big: { datatype: 'UInt64', value: '18446744073709551000' },
    i64: { datatype: 'Int64', value: '-9007199254740993' },
    avogadro: { datatype: 'Double', value: 6.02214076e23 },
    label: { datatype: 'String', value: 'AB12' },
    'status/run': { datatype: 'Boolean', value: true }
  };
}

function config (sim, { url, writes = false, allowWrites = false, sparkplug = {} } = {}) {
  return {
    gateway: { id: 'sp', interval: '1s', workers: 1 },
    mqtt: { ...(url ? { url } : { embedded: { port: 0 } }), sparkplug: { group: GROUP, node: NODE, writes, ...sparkplug } },
    devices: {
      plc: { target: sim.url, timeout: '300ms', backoff: { min: '100ms', max: '200ms' }, allowWrites, tags: { fast: FAST, slow: SLOW } },
      // raw reads: no names or types, so no Sparkplug device; its latency is a node metric all the same
      meter: { target: sim.url, timeout: '300ms' }
    },
    jobs: [
      { name: 'fast', device: 'plc', tags: 'fast', rate: '10/s' },
      { name: 'slow', device: 'plc', tags: 'slow', rate: '4/s' },
      { name: 'raw', device: 'meter', read: { fc: 3, address: 0, quantity: 2 }, rate: '5/s' }
    ]
  };
}

/** A device's metrics as the host knows them: its DBIRTH, then every DDATA after it */
function deviceState (messages, device, from = 0) {
  const state = new Map();
  for (const m of messages.slice(from)) {
    if (m.device !== device) continue;
    if (m.type === 'DBIRTH') state.clear();
    if (m.type === 'DBIRTH' || m.type === 'DDATA') for (const x of m.metrics) state.set(x.name, x);
    if (m.type === 'DDEATH') state.clear();
  }
  return state;
}

function assertValues (state, want) {
  assert.deepEqual([...state.keys()].sort(), Object.keys(want).sort());
  for (const [name, w] of Object.entries(want)) {
    const got = state.get(name);
    assert.equal(got.datatype, w.datatype, `${name} datatype`);
    if (w.datatype === 'Float') assert.equal(got.value, Math.fround(w.value), name);
    else if (w.datatype === 'Double' && name === 'temp') assert.ok(Math.abs(got.value - w.value) < 1e-9, `${name}: ${got.value} vs ${w.value}`);
    else assert.equal(got.value, w.value, name);
    assert.equal(got.properties.Quality.value, 192, `${name} quality`);
  }
}

const noViolations = (messages) => {
  const bad = messages.filter((m) => m.violations && m.violations.length);
  assert.deepEqual(bad.map((m) => `${m.topic} seq ${m.seq}: ${m.violations.join('; ')}`), []);
};

describe('Sparkplug B: the gateway as an edge node, checked by an independent host', function () {
  this.timeout(60000);
  let mosq, sim, host, gw, errors;

  async function start (opts = {}) {
    mosq = mosq || await startMosquitto();
    sim = await createModbusTcpSimulator({ port: 0 });
    const want = fill(sim.model);
    host = await startSparkplugHost({ port: mosq.port, group: GROUP, node: NODE });
    gw = new Gateway(validateConfig(config(sim, { url: mosq.url, ...opts }), { env: {} }));
    errors = [];
    gw.on('job-error', (job, err) => { if (job === null) errors.push(err); });
    await gw.start();
    return want;
  }

  afterEach(async () => {
    if (gw) await gw.stop();
    if (host) await host.stop();
    if (sim) await sim.close();
    gw = host = sim = null;
  });
  after(async () => { if (mosq) await mosq.stop(); });

  it('births the node, then its device with every tag of both jobs, values equal to the registers, and DDATA on a change', async () => {
    const want = await start();
    const nbirth = await host.waitFor((m) => m.type === 'NBIRTH');
    assert.equal(nbirth.seq, 0);
    assert.equal(nbirth.qos, 0);
    const names = nbirth.metrics.map((m) => m.name);
    assert.deepEqual(nbirth.metrics.find((m) => m.name === 'bdSeq'), { name: 'bdSeq', alias: 1, datatype: 'Int64', value: '0', is_null: false, is_historical: false, timestamp: null, properties: {} });
    assert.equal(nbirth.metrics.find((m) => m.name === 'Node Control/Rebirth').value, false);
    for (const job of ['fast', 'slow', 'raw']) for (const s of ['p50', 'p90', 'p99', 'p99_9', 'max', 'count', 'errors', 'timeouts', 'skipped']) assert.ok(names.includes(`Latency/${job}/${s}`), `Latency/${job}/${s}`);
    await host.waitFor((m) => m.type === 'DBIRTH' && m.device === 'plc');
    assert.equal(host.messages.filter((m) => m.device === 'meter').length, 0);
    // both jobs' tags, every one read and good (the DBIRTH, then DDATA for tags the other job read after it)
    await until(() => { const s = deviceState(host.messages, 'plc'); return s.size === 10 && [...s.values()].every((x) => !x.is_null); });
    assertValues(deviceState(host.messages, 'plc'), want);
    const dbirth = host.messages.find((m) => m.type === 'DBIRTH');
    assert.equal(dbirth.metrics.find((m) => m.name === 'temp').properties.engUnit.value, '°C');

    // report by exception: a changed register is one DDATA with that metric only
    const from = host.messages.length;
    sim.model.setRegisters('holdingRegisters', 100, words('int16', 715));
    const ddata = await host.waitFor((m) => m.type === 'DDATA' && m.metrics.some((x) => x.name === 'temp'), 5000, from);
    assert.deepEqual(ddata.metrics.map((x) => x.name), ['temp']);
    assert.ok(Math.abs(ddata.metrics[0].value - 71.5) < 1e-9);
    assert.ok(Math.abs(ddata.metrics[0].timestamp - Date.now()) < 5000, 'the metric carries its read time');

    // latency node metrics: an NDATA carries what a summary of the gateway said
    const p99s = [];
    gw.on('summary', (job, s) => { if (job === 'fast') p99s.push(s.p99); });
    const nFrom = host.messages.length;
    const ndata = await host.waitFor((m) => m.type === 'NDATA' && m.metrics.some((x) => x.name === 'Latency/fast/p99') && p99s.length > 0, 5000, nFrom);
    assert.ok(p99s.includes(ndata.metrics.find((x) => x.name === 'Latency/fast/p99').value));
    assert.equal(ndata.metrics.find((x) => x.name === 'Latency/fast/errors').value, '0');
    noViolations(host.messages);
  });

  it('DDEATH when the simulator stops and DBIRTH with its values when it is back; NDEATH as the will with the NBIRTH\'s bdSeq, and bdSeq + 1 on the next session', async () => {
    const want = await start();
    await host.waitFor((m) => m.type === 'DBIRTH');
    const port = sim.port;
    await sim.close();
    sim = null;
    const ddeath = await host.waitFor((m) => m.type === 'DDEATH' && m.device === 'plc');
    const deathAt = host.messages.indexOf(ddeath);
    sim = await createModbusTcpSimulator({ port });
    fill(sim.model);
    await host.waitFor((m) => m.type === 'DBIRTH' && m.device === 'plc', 10000, deathAt);
    await until(() => { const s = deviceState(host.messages, 'plc', deathAt); return s.size === 10 && [...s.values()].every((x) => !x.is_null); });
    assertValues(deviceState(host.messages, 'plc', deathAt), want);
    // a value in the new birth is good, a missing one is null with a bad quality, never a mix
    const reborn = host.messages.slice(deathAt).find((m) => m.type === 'DBIRTH');
    for (const x of reborn.metrics) assert.equal(x.is_null, x.properties.Quality.value !== 192, JSON.stringify(x));

    // the connection dies without a DISCONNECT: Mosquitto publishes the will, the session comes back
    const before = host.messages.length;
    gw.sparkplug.session._client.stream.destroy();
    const ndeath = await host.waitFor((m) => m.type === 'NDEATH', 10000, before);
    assert.equal(ndeath.qos, 1);
    assert.equal(ndeath.metrics.find((x) => x.name === 'bdSeq').value, '0');
    const nbirth = await host.waitFor((m) => m.type === 'NBIRTH', 10000, before);
    assert.equal(nbirth.metrics.find((x) => x.name === 'bdSeq').value, '1');
    await host.waitFor((m) => m.type === 'DBIRTH', 10000, host.messages.indexOf(nbirth));

    // a clean stop publishes the NDEATH of the session itself
    const end = host.messages.length;
    await gw.stop();
    gw = null;
    const last = await host.waitFor((m) => m.type === 'NDEATH', 5000, end);
    assert.equal(last.metrics.find((x) => x.name === 'bdSeq').value, '1');
    noViolations(host.messages);
  });

  it('rebirth on the host\'s NCMD; malformed NCMDs are refused with NINES_ERR_SPARKPLUG and change nothing', async () => {
    await start();
    await host.waitFor((m) => m.type === 'DBIRTH');
    const from = host.messages.length;
    await host.send({ cmd: 'rebirth' });
    const nbirth = await host.waitFor((m) => m.type === 'NBIRTH', 5000, from);
    assert.equal(nbirth.seq, 0);
    assert.equal(nbirth.metrics.find((x) => x.name === 'bdSeq').value, '0', 'same session, same bdSeq');
    const dbirth = await host.waitFor((m) => m.type === 'DBIRTH', 5000, host.messages.indexOf(nbirth));
    assert.equal(dbirth.seq, 1);
    assert.equal(dbirth.metrics.length, 10);

    const stats = gw.sparkplug.edge.stats;
    const mark = host.messages.length;
    await host.send({ cmd: 'raw', topic: `spBv1.0/${GROUP}/NCMD/${NODE}`, hex: 'ffffffff0102' });
    await host.send({ cmd: 'ncmd', metrics: [{ name: 'Node Control/Reboot', datatype: 'Boolean', value: true }] });
    await host.send({ cmd: 'ncmd', metrics: [{ name: 'Node Control/Rebirth', datatype: 'Int32', value: 1 }] });
    await host.send({ cmd: 'ncmd', metrics: [{ name: 'Node Control/Rebirth', datatype: 'Boolean', value: true }, { name: 'bdSeq', datatype: 'Int64', value: 7 }] });
    await host.send({ cmd: 'dcmd', device: 'plc', metrics: [{ name: 'temp', datatype: 'Double', value: 20 }] });
    await until(() => errors.length >= 5);
    assert.deepEqual(errors.map((e) => e.code), Array(5).fill('NINES_ERR_SPARKPLUG'));
    assert.match(errors[0].message, /not a Sparkplug B protobuf payload/);
    assert.match(errors[1].message, /unknown metric "Node Control\/Reboot"/);
    assert.match(errors[2].message, /must be a Boolean/);
    assert.match(errors[3].message, /unknown metric "bdSeq"/, 'refused whole: the Rebirth beside it is not done');
    assert.match(errors[4].message, /writes by DCMD are off/);
    // an NDATA after them: no birth in between, and the sequence goes on (the host checks seq)
    const ndata = await host.waitFor((m) => m.type === 'NDATA', 5000, mark);
    const between = host.messages.slice(mark, host.messages.indexOf(ndata) + 1).filter((m) => m.type !== 'NCMD' && m.type !== 'DCMD');
    assert.equal(between.filter((m) => /BIRTH|DEATH/.test(m.type)).length, 0, JSON.stringify(between.map((m) => m.type)));
    const after = gw.sparkplug.edge.stats;
    assert.equal(after.bdSeq, stats.bdSeq);
    assert.equal(after.counts.rebirths, stats.counts.rebirths);
    assert.equal(after.counts.NBIRTH, stats.counts.NBIRTH);
    assert.equal(after.counts.refused, stats.counts.refused + 5);
    assert.equal(sim.model.banks.holdingRegisters[100], words('int16', -1234)[0], 'the refused DCMD wrote nothing');
    noViolations(host.messages);
  });

  it('a DCMD writes tags through writeTags when mqtt.sparkplug.writes is on, and refuses what writeTags refuses', async () => {
    await start({ writes: true, allowWrites: true });
    await host.waitFor((m) => m.type === 'DBIRTH');
    await host.send({ cmd: 'dcmd', device: 'plc', metrics: [{ name: 'temp', datatype: 'Double', value: 20.5 }, { name: 'pump', datatype: 'Boolean', value: false }] });
    await until(() => sim.model.banks.holdingRegisters[100] === 205 && sim.model.banks.coils[3] === 0);
    // the new values come back as DDATA from the next poll
    await until(() => { const s = deviceState(host.messages, 'plc'); return s.get('temp').value === 20.5 && s.get('pump').value === false; });
    // 20.55 does not fit an int16 at scale 0.1: writeTags refuses, nothing is written
    await host.send({ cmd: 'dcmd', device: 'plc', metrics: [{ name: 'temp', datatype: 'Double', value: 20.55 }] });
    await host.send({ cmd: 'dcmd', device: 'plc', metrics: [{ name: 'temp', datatype: 'Int16', value: 3 }] });
    await until(() => errors.length >= 2);
    assert.equal(errors[0].code, 'NINES_ERR_INVALID_VALUE');
    assert.equal(errors[1].code, 'NINES_ERR_SPARKPLUG');
    assert.match(errors[1].message, /is Double \(as in its DBIRTH\); got Int16/);
    assert.equal(sim.model.banks.holdingRegisters[100], 205);
    noViolations(host.messages);
  });

  it('a reload that changes a device\'s tags is its DDEATH and a DBIRTH with the new metric set; a new job is a rebirth', async () => {
    await start();
    await host.waitFor((m) => m.type === 'DBIRTH');
    await until(() => deviceState(host.messages, 'plc').size === 10);
    const c = config(sim, { url: mosq.url });
    c.devices.plc.tags.fast = FAST.slice(0, 2); // level and pump go
    let from = host.messages.length;
    await gw.reload(validateConfig(c, { env: {} }));
    await host.waitFor((m) => m.type === 'DDEATH', 5000, from);
    const dbirth = await host.waitFor((m) => m.type === 'DBIRTH', 5000, from);
    assert.deepEqual(dbirth.metrics.map((x) => x.name).sort(), ['avogadro', 'big', 'count32', 'i64', 'label', 'neg', 'status/run', 'temp']);

    c.jobs.push({ name: 'raw2', device: 'meter', read: { fc: 3, address: 0, quantity: 1 }, rate: '1/s' });
    from = host.messages.length;
    await gw.reload(validateConfig(c, { env: {} }));
    const nbirth = await host.waitFor((m) => m.type === 'NBIRTH', 5000, from);
    assert.ok(nbirth.metrics.some((x) => x.name === 'Latency/raw2/p99'));
    await host.waitFor((m) => m.type === 'DBIRTH', 5000, host.messages.indexOf(nbirth));
    noViolations(host.messages);
  });

  it('runs on the embedded broker too, where only the gateway may speak as its edge node and any client may command it', async () => {
    sim = await createModbusTcpSimulator({ port: 0 });
    fill(sim.model);
    gw = new Gateway(validateConfig(config(sim, { sparkplug: { node: 'emb' } }), { env: {} }));
    await gw.start();
    // the host joins a node already alive: it ignores the node until the birth it asks for
    host = await startSparkplugHost({ port: Number(new URL(gw.broker.url).port), group: GROUP, node: 'emb', late: true });
    await host.send({ cmd: 'rebirth' });
    await host.waitFor((m) => m.type === 'NBIRTH');
    await host.waitFor((m) => m.type === 'DBIRTH' && m.device === 'plc');
    // a forged birth is refused (the client is disconnected) and reaches nobody
    const from = host.messages.length;
    const mqtt = require('mqtt');
    const rogue = await mqtt.connectAsync(gw.broker.url, { clientId: 'rogue', reconnectPeriod: 0 });
    const closed = new Promise((resolve) => rogue.once('close', resolve));
    rogue.publish(`spBv1.0/${GROUP}/NBIRTH/emb`, Buffer.from([0x08, 0x01]), { qos: 1 });
    await closed;
    rogue.end(true);
    // the edge node's client id is reserved for it
    await assert.rejects(mqtt.connectAsync(gw.broker.url, { clientId: 'nines-sp-sparkplug', reconnectPeriod: 0 }), /Identifier rejected/);
    await host.send({ cmd: 'rebirth' });
    // the asked-for rebirth's own NBIRTH, then its DBIRTH (a DBIRTH of another device from the first
    // rebirth may still arrive after `from`, so a DBIRTH alone does not say the rebirth is in)
    const nbirth = await host.waitFor((m) => m.type === 'NBIRTH', 5000, from);
    await host.waitFor((m) => m.type === 'DBIRTH' && m.device === 'plc', 5000, host.messages.indexOf(nbirth));
    assert.equal(host.messages.slice(from).filter((m) => m.type === 'NBIRTH').length, 1, 'only the rebirth the host asked for');
    noViolations(host.messages);
  });
});
