'use strict';

const assert = require('node:assert/strict');
const mqtt = require('mqtt');
const { validateConfig } = require('../../gateway/runtime/config');
const { Gateway } = require('../../gateway/runtime/gateway');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');

function config (url, { writes = true, allowWrites = true, metrics, timeout = '1s' } = {}) {
  return validateConfig({
    gateway: { id: 'w1', workers: 1, ...(metrics ? { metrics: { listen: '127.0.0.1:0' } } : {}) },
    mqtt: { embedded: { port: 0 }, writes },
    devices: {
      plc: {
        target: url,
        allowWrites,
        timeout,
        tags: { io: [{ name: 'setpoint', table: 'holding', address: 10, type: 'int16', scale: 0.1 }, { name: 'pump_on', table: 'coil', address: 3 }, { name: 'temp', table: 'input', address: 0 }] }
      }
    },
    jobs: [{ name: 'io', device: 'plc', tags: 'io', rate: '2/s' }]
  }, { env: {} });
}

describe('writes by tag over MQTT (mqtt.writes)', function () {
  this.timeout(20000);
  let sim, gw, client;
  afterEach(async () => {
    // forced: a client the broker dropped is reconnecting, and a clean end would wait for it
    if (client) await new Promise((resolve) => client.end(true, {}, resolve));
    if (gw) await gw.stop();
    if (sim) await sim.close();
    sim = gw = client = null;
  });

  /** Publishes a command and waits for its answer */
  async function command (payload, topic = 'nines/w1/plc/write') {
    const answer = new Promise((resolve) => {
      const on = (t, p) => { if (t === `${topic}/result`) { client.removeListener('message', on); resolve(JSON.parse(p.toString())); } };
      client.on('message', on);
    });
    await client.publishAsync(topic, typeof payload === 'string' ? payload : JSON.stringify(payload), { qos: 1 });
    return answer;
  }

  async function start (opts) {
    sim = await createModbusTcpSimulator({ port: 0 });
    gw = new Gateway(config(sim.url, opts));
    await gw.start();
    client = await mqtt.connectAsync(gw.broker.url, { reconnectPeriod: 0 });
    await client.subscribeAsync('nines/w1/+/write/result', { qos: 1 });
  }

  it('writes the values a client publishes, encoded by their tags, and answers each tag', async () => {
    await start();
    const out = await command({ id: 'a1', values: { setpoint: 71.3, pump_on: true } });
    assert.deepEqual(out, { id: 'a1', ok: true, results: { setpoint: { ok: true }, pump_on: { ok: true } } });
    assert.equal(sim.model.banks.holdingRegisters[10], 713);
    assert.equal(sim.model.banks.coils[3], 1);
  });

  it('refuses a value its tag cannot hold, a read-only tag, an unknown device and a malformed command, writing nothing', async () => {
    await start();
    const bad = await command({ id: 'b1', values: { setpoint: 3.75, pump_on: true } });
    assert.deepEqual([bad.id, bad.ok, bad.error.code], ['b1', false, 'NINES_ERR_INVALID_VALUE']);
    assert.equal(sim.model.banks.coils[3], 0, 'nothing of a refused command is written');
    assert.equal((await command({ values: { temp: 1 } })).error.code, 'NINES_ERR_INVALID_ARG');
    assert.match((await command({ values: { x: 1 } }, 'nines/w1/nope/write')).error.message, /no device "nope"/);
    assert.match((await command('{not json')).error.message, /must be JSON/);
    assert.match((await command({ values: { pump_on: true }, extra: 1 })).error.message, /takes id, values and maxAgeMs/);
    assert.equal(sim.model.banks.coils[3], 0);
    assert.equal(gw.writeCommands.stats.invalid, 5);
  });

  it('a device without allowWrites refuses, and with writes off nobody may publish a command', async () => {
    await start({ allowWrites: false });
    assert.match((await command({ values: { pump_on: true } })).error.message, /does not allow writes/);
    await new Promise((resolve) => client.end(true, {}, resolve));
    await gw.stop();
    await sim.close();
    await start({ writes: false });
    // the embedded broker refuses the publish (and drops the client): no answer, nothing written
    const closed = new Promise((resolve) => client.once('close', resolve));
    client.publish('nines/w1/plc/write', JSON.stringify({ values: { pump_on: true } }), { qos: 1 });
    await closed;
    assert.equal(sim.model.banks.coils[3], 0);
  });

  it('refuses coerced values and shows them as sent: 1e309, "0x10", true for a number, "on" for a coil (issue 18)', async () => {
    await start();
    const inf = await command('{"id": "r1", "values": {"setpoint": 1e309}}');
    assert.equal(inf.error.code, 'NINES_ERR_INVALID_VALUE');
    assert.match(inf.error.message, /setpoint.*got 1e309/);
    assert.doesNotMatch(inf.error.message, /null|Infinity/);
    assert.match((await command('{"values": {"setpoint": "0x10"}}')).error.message, /got "0x10"/);
    assert.match((await command('{"values": {"setpoint": true}}')).error.message, /got true/);
    assert.match((await command('{"values": {"pump_on": "on"}}')).error.message, /pump_on.*got "on"/);
    assert.equal(sim.model.banks.holdingRegisters[10], 0);
    assert.equal(sim.model.banks.coils[3], 0);
  });

  /** Publishes commands without waiting, and collects one answer per id (bounded wait) */
  async function flood (payloads, timeoutMs = 8000) {
    const answers = new Map();
    const on = (t, p) => {
      if (t !== 'nines/w1/plc/write/result') return;
      const a = JSON.parse(p.toString());
      answers.set(a.id, [...(answers.get(a.id) || []), a]);
    };
    client.on('message', on);
    await Promise.all(payloads.map((p) => client.publishAsync('nines/w1/plc/write', JSON.stringify(p), { qos: 1 })));
    const until = Date.now() + timeoutMs;
    while (answers.size < payloads.length && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 100)); // a second answer to one id would show here
    client.removeListener('message', on);
    return answers;
  }

  it('refuses commands past the device\'s queue (NINES_ERR_WRITE_BACKLOG), each answered once, and counts them', async () => {
    // a write may wait behind a poll (500 ms) before its own 500 ms: well within its timeout
    await start({ writes: { queue: 2, maxAge: '10s' }, metrics: true, timeout: '5s' });
    sim.faults.set('latency=500ms');
    const cmds = Array.from({ length: 8 }, (_, i) => ({ id: `b${i}`, values: { setpoint: i } }));
    const answers = await flood(cmds);
    assert.equal(answers.size, 8, JSON.stringify({ a: [...answers.values()], s: gw.writeCommands.stats }));
    for (const list of answers.values()) assert.equal(list.length, 1, 'one answer per command');
    const backlog = [...answers.values()].map((l) => l[0]).filter((a) => a.error && a.error.code === 'NINES_ERR_WRITE_BACKLOG');
    const written = [...answers.values()].map((l) => l[0]).filter((a) => a.ok);
    // one running and two waiting when the flood arrives: at least five refused
    assert.ok(backlog.length >= 5, `${backlog.length} refused for backlog`);
    assert.equal(backlog.length + written.length, 8, JSON.stringify([...answers.values()]));
    const s = gw.writeCommands.stats;
    assert.equal(s.backlog, backlog.length);
    assert.equal(s.written, written.length);
    assert.equal(s.queued, 0);
    // the last command written is what the device holds (int16 at scale 0.1)
    const last = written.map((a) => Number(a.id.slice(1))).sort((a, b) => a - b).pop();
    assert.equal(sim.model.banks.holdingRegisters[10], last * 10);
    // where operators look: the retained status and the metrics
    const status = await new Promise((resolve) => {
      const on = (t, p) => { const j = JSON.parse(p.toString()); if (t === 'nines/w1/status' && j.writes && j.writes.backlog === backlog.length && j.writes.written === written.length) { client.removeListener('message', on); resolve(j); } };
      client.on('message', on);
      client.subscribe('nines/w1/status', { qos: 1 });
    });
    assert.equal(status.writes.written, written.length);
    const text = await (await fetch(gw.metrics.url)).text();
    assert.match(text, new RegExp(`nines_write_commands_total\\{gateway="w1",outcome="backlog"\\} ${backlog.length}\\b`));
  });

  it('refuses a command that could not start within its maximum age (NINES_ERR_WRITE_EXPIRED), and takes a shorter maxAgeMs, never a longer one', async () => {
    await start({ writes: { queue: 10, maxAge: '150ms' } });
    sim.faults.set('latency=400ms');
    const answers = await flood([{ id: 'e0', values: { setpoint: 1 } }, { id: 'e1', values: { setpoint: 2 } }, { id: 'e2', values: { setpoint: 3 }, maxAgeMs: 50 }]);
    const [e0, e1, e2] = ['e0', 'e1', 'e2'].map((id) => answers.get(id)[0]);
    // e0 runs at once, unless it finds a poll on the wire (400 ms): then it expires in the device's
    // queue (its request's latest start), unsent
    const e0Expired = !e0.ok;
    if (e0Expired) assert.equal(e0.results.setpoint.code, 'NINES_ERR_WRITE_EXPIRED');
    // e1 and e2 wait behind e0's 400 ms
    assert.equal(e1.error.code, 'NINES_ERR_WRITE_EXPIRED');
    assert.equal(e2.error.code, 'NINES_ERR_WRITE_EXPIRED');
    assert.match(e2.error.message, /maximum age of 50 ms/);
    assert.equal(sim.model.banks.holdingRegisters[10], e0Expired ? 0 : 10, 'nothing expired was written');
    assert.equal(gw.writeCommands.stats.expired, e0Expired ? 3 : 2);
    const longer = await command({ id: 'e3', values: { setpoint: 4 }, maxAgeMs: 5000 });
    assert.equal(longer.error.code, 'NINES_ERR_INVALID_ARG');
    assert.match(longer.error.message, /maxAgeMs must be an integer from 1 to 150.*got 5000/);
    assert.equal(longer.id, 'e3');
  });

  it('checks mqtt.writes at load, naming the field and the value, and fills in the defaults', () => {
    assert.deepEqual(config('modbus+tcp://127.0.0.1:5020').mqtt.writes, { queueMax: 100, maxAgeMs: 2000 });
    assert.deepEqual(config('modbus+tcp://127.0.0.1:5020', { writes: { queue: 5, maxAge: '500ms' } }).mqtt.writes, { queueMax: 5, maxAgeMs: 500 });
    assert.equal(config('modbus+tcp://127.0.0.1:5020', { writes: false }).mqtt.writes, null);
    for (const [writes, re] of [
      [{ queue: 0 }, /mqtt\.writes\.queue: 0 must be an integer from 1 to 10000/],
      [{ maxAge: '5ms' }, /mqtt\.writes\.maxAge: "5ms" must be from 10ms to 1m/],
      [{ maxAge: '2h' }, /mqtt\.writes\.maxAge: "2h" must be from 10ms to 1m/],
      [{ age: '1s' }, /mqtt\.writes\.age: "1s" is not a known key/],
      ['yes', /mqtt\.writes: "yes" must be true, false, or a mapping/]
    ]) {
      assert.throws(() => config('modbus+tcp://127.0.0.1:5020', { writes }), (err) => err.code === 'NINES_ERR_CONFIG' && re.test(err.message), JSON.stringify(writes));
    }
  });
});
