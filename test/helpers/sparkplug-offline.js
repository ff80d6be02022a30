'use strict';

const assert = require('node:assert/strict');
const { validateConfig } = require('../../gateway/runtime/config');
const { Gateway } = require('../../gateway/runtime/gateway');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { startSparkplugHost } = require('./sparkplug-host');
const { until } = require('./wait');

/**
 * The primary host offline while values keep coming: the store-and-forward scenario of issue 22,
 * shared by the default suite (a few seconds) and test/long/ (30 s). An independent host (Python,
 * Tahu's sparkplug_b.proto; sparkplug-host.py) publishes its STATE, records every message, resolves
 * aliases from the births alone and checks templates; the gateway polls a counter that the test
 * moves `ratePerSec` times a second.
 */

const GROUP = 'plant';
const NODE = 'edge1';
const HOST = 'scada';
const START = 1000;

/** The `count` values of a message: a flat metric, or a member of the `pump` template instance */
function countsOf (m) {
  const out = [];
  for (const x of m.metrics || []) {
    if (x.name === 'count') out.push({ value: x.value, historical: x.is_historical });
    if (x.template) for (const y of x.template.metrics) if (y.name === 'count') out.push({ value: y.value, historical: y.is_historical || x.is_historical });
  }
  return out;
}

/**
 * @param {object} opts
 * @param {{url: string, port: number}} opts.mosq a running broker
 * @param {number} opts.offlineMs how long the host stays offline
 * @param {number} opts.ratePerSec how often the counter moves
 * @param {object} [opts.spool] mqtt.spool for the gateway (the hold goes to disk)
 * @returns {Promise<object>} what the assertions found (counts), for the caller to report
 */
async function runOfflineScenario ({ mosq, offlineMs, ratePerSec, spool }) {
  const sim = await createModbusTcpSimulator({ port: 0 });
  sim.model.setRegisters('holdingRegisters', 100, [START]);
  const host = await startSparkplugHost({ port: mosq.port, group: GROUP, node: NODE, host: HOST });
  await host.send({ cmd: 'state', online: true });
  const tags = [{ name: 'count', table: 'holding', address: 100, type: 'uint16' }, { name: 'run', table: 'coil', address: 3 }];
  const gw = new Gateway(validateConfig({
    gateway: { id: 'sp', interval: '1s', workers: 1 },
    mqtt: { url: mosq.url, ...(spool ? { spool } : {}), sparkplug: { group: GROUP, node: NODE, primaryHost: HOST, templates: true } },
    devices: { plc: { target: sim.url, timeout: '300ms', tags: { pump: tags } } },
    // polled twice as often as the counter moves, so the gateway sees every value
    jobs: [{ name: 'fast', device: 'plc', tags: 'pump', rate: `${ratePerSec * 2}/s`, values: { mode: 'on-change', maxRate: `${ratePerSec * 10}/s` } }]
  }, { env: {} }));
  /** every count value the gateway read, in order */
  const emitted = [];
  gw.on('values', (job, v) => { if (job === 'fast' && v.values && typeof v.values.count === 'number') emitted.push(v.values.count); });
  let n = START;
  let timer = null;
  try {
    await gw.start();
    await host.waitFor((m) => m.type === 'DBIRTH' && m.device === 'plc', 10000);
    timer = setInterval(() => sim.model.setRegisters('holdingRegisters', 100, [++n]), 1000 / ratePerSec);
    // live values at the host before it goes offline: half a second of the counter
    await until(() => host.messages.filter((m) => m.type === 'DDATA').flatMap(countsOf).length >= ratePerSec / 2, 'live DATA before the host goes offline', 15000);

    const offAt = host.messages.length;
    await host.send({ cmd: 'state', online: false });
    const ndeath = await host.waitFor((m) => m.type === 'NDEATH', 10000, offAt);
    await new Promise((resolve) => setTimeout(resolve, offlineMs));
    const stats = gw.sparkplug.edge.stats;
    assert.equal(stats.primaryHost.online, false);
    assert.ok(stats.held.count > 0 && stats.held.oldestAgeMs >= offlineMs * 0.8, JSON.stringify(stats.held));
    assert.equal(host.messages.slice(host.messages.indexOf(ndeath) + 1).filter((m) => /BIRTH|DATA/.test(m.type)).length, 0, 'nothing while the host is offline');

    const onAt = host.messages.length;
    await host.send({ cmd: 'state', online: true });
    const nbirth = await host.waitFor((m) => m.type === 'NBIRTH', 10000, onAt);
    await until(() => gw.sparkplug.edge.stats.held.count === 0, 'the held DATA published', 30000);
    clearInterval(timer);
    timer = null;
    await new Promise((resolve) => setTimeout(resolve, 500));

    // every message passed the host's checks: seq, bdSeq, births first, aliases, templates
    const bad = host.messages.filter((m) => m.violations && m.violations.length);
    assert.deepEqual(bad.map((m) => `${m.topic} seq ${m.seq}: ${m.violations.join('; ')}`), []);
    const bdSeq = (m) => m.metrics.find((x) => x.name === 'bdSeq').value;
    assert.equal(bdSeq(ndeath), '0');
    assert.equal(bdSeq(nbirth), '1', 'the session after the host came back is a new connection');

    // the last live value before the NDEATH, and the DBIRTH's value after the return
    const before = host.messages.slice(0, host.messages.indexOf(ndeath)).filter((m) => m.type === 'DDATA').flatMap(countsOf);
    assert.ok(before.every((c) => !c.historical));
    const last = before[before.length - 1].value;
    const after = host.messages.slice(host.messages.indexOf(nbirth));
    const dbirth = after.find((m) => m.type === 'DBIRTH');
    const born = countsOf(dbirth)[0].value;
    const data = after.filter((m) => m.type === 'DDATA');
    const counts = data.flatMap(countsOf);
    const firstLive = counts.findIndex((c) => !c.historical);
    const held = counts.slice(0, firstLive === -1 ? counts.length : firstLive);
    assert.ok(counts.slice(held.length).every((c) => !c.historical), 'historical DATA all comes before live DATA');
    // exactly what the gateway read between the two, once each, in order; and, as a replay from disk
    // follows the fsyncs, what it read while the replay went on, held behind it
    const heldLast = held.length ? held[held.length - 1].value : born;
    const want = emitted.slice(emitted.indexOf(last) + 1, emitted.indexOf(Math.max(born, heldLast)) + 1);
    assert.deepEqual(held.map((c) => c.value), want);
    // not vacuous: a good share of the offline time was held (the exact check is the one above; a
    // machine loaded by a second copy of the suite polls below its rate, so not all of it)
    assert.ok(held.length >= (offlineMs / 1000) * ratePerSec * 0.3, `${held.length} held values for ${offlineMs} ms at ${ratePerSec}/s`);
    const times = data.slice(0, held.length).map((m) => m.timestamp);
    assert.deepEqual(times, [...times].sort((a, b) => a - b), 'held DATA in time order');
    return { held: held.length, dropped: gw.sparkplug.edge.stats.held.dropped, messages: host.messages.length };
  } finally {
    if (timer) clearInterval(timer);
    await gw.stop();
    await host.stop();
    await sim.close();
  }
}

module.exports = { runOfflineScenario, countsOf };
