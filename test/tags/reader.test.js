'use strict';

const assert = require('node:assert/strict');
const { buildTags, tagContext } = require('../../gateway/tags/spec');
const { planReads } = require('../../gateway/tags/plan');
const { TagReader } = require('../../gateway/tags/reader');
const { NinesError } = require('../../gateway/base/errors');
const { parseTarget } = require('../../gateway/drivers/target');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { Device } = require('../../gateway/devices');

const CTX = tagContext(parseTarget('modbus+tcp://127.0.0.1:502'), {});

/** A device map in memory: holding registers by address, some addresses missing (holes) */
function fakeDevice ({ registers = {}, holes = [], fail = null } = {}) {
  const calls = [];
  let t = 1000n;
  const request = (op) => {
    calls.push(`${op.address}+${op.quantity}`);
    const sentNs = (t += 10n);
    if (fail) return Promise.reject(Object.assign(fail(op), { sentNs }));
    for (let a = op.address; a < op.address + op.quantity; a++) {
      if (holes.includes(a)) {
        return Promise.reject(Object.assign(new NinesError('NINES_ERR_MODBUS_EXCEPTION', `exception 2 at ${op.address}`, { exceptionCode: 2 }), { sentNs }));
      }
    }
    const data = Array.from({ length: op.quantity }, (_, i) => registers[op.address + i] || 0);
    const buffer = Buffer.alloc(2 * op.quantity);
    data.forEach((w, i) => buffer.writeUInt16BE(w, 2 * i));
    return Promise.resolve({ data, buffer, sentNs, doneNs: (t += 100n) });
  };
  return { request, calls };
}

function reader (list, device, extra = {}) {
  const tags = buildTags(list, CTX);
  return new TagReader({ tags, blocks: planReads(tags, CTX), request: device.request, ...extra });
}

describe('tags/reader: one poll, every read at once, values by name with quality', () => {
  it('decodes every tag of a coalesced read and times the poll from its first write to its last reply', async () => {
    const dev = fakeDevice({ registers: { 100: 0xE979, 101: 0x42F6, 104: 0xFFFE, 110: 0b10000 } });
    const r = reader([
      { name: 'temp', table: 'holding', address: 100, type: 'float32', order: 'CDAB' },
      { name: 'offset', table: 'holding', address: 104, type: 'int16', scale: 0.5 },
      { name: 'run', table: 'holding', address: 110, type: 'bit', bit: 4 }
    ], dev);
    const res = await r.poll();
    assert.deepEqual(dev.calls, ['100+11']);
    assert.equal(Math.round(res.values.temp * 1000) / 1000, 123.456);
    assert.equal(res.values.offset, -1);
    assert.equal(res.values.run, true);
    assert.deepEqual(res.quality, { temp: 'ok', offset: 'ok', run: 'ok' });
    assert.equal(res.requests, 1);
    assert.equal(typeof res.sentNs, 'bigint');
    assert.ok(res.doneNs > res.sentNs);
    assert.ok(Math.abs(res.ts - Date.now()) < 1000);
  });

  it('splits a read across a hole until the readable tags arrive, names the unreadable one, and keeps the split', async () => {
    const dev = fakeDevice({ registers: { 0: 7, 9: 9, 20: 20 }, holes: [5] });
    const refused = [];
    const r = reader([
      { name: 'a', table: 'holding', address: 0 }, { name: 'hole', table: 'holding', address: 5 },
      { name: 'b', table: 'holding', address: 9 }, { name: 'c', table: 'holding', address: 20 }
    ], dev, { onTagError: (err, names) => refused.push([err.code, names]) });
    const first = await r.poll();
    assert.deepEqual(first.values, { a: 7, hole: null, b: 9, c: 20 });
    assert.deepEqual(first.quality, { a: 'ok', hole: 'NINES_ERR_MODBUS_EXCEPTION', b: 'ok', c: 'ok' });
    assert.deepEqual(refused, [['NINES_ERR_MODBUS_EXCEPTION', ['hole']]]);
    assert.equal(r.splits, 2); // [a hole b c] → [a hole] [b c] → [a] [hole]
    // the next poll reads the plan as split: no merged read across the hole any more
    dev.calls.length = 0;
    await r.poll();
    assert.deepEqual(dev.calls.sort(), ['0+1', '5+1', '9+12']);
  });

  it('does not split on an exception that says nothing of the map (device busy)', async () => {
    const dev = fakeDevice({ fail: () => new NinesError('NINES_ERR_MODBUS_EXCEPTION', 'busy', { exceptionCode: 6 }) });
    const r = reader([{ name: 'a', table: 'holding', address: 0 }, { name: 'b', table: 'holding', address: 3 }], dev);
    const res = await r.poll();
    assert.deepEqual(res.quality, { a: 'NINES_ERR_MODBUS_EXCEPTION', b: 'NINES_ERR_MODBUS_EXCEPTION' });
    assert.equal(r.splits, 0);
    assert.equal(r.readsPerPoll, 1);
  });

  it('a timed-out read fails the poll as a timeout, and the error still carries what was read', async () => {
    let n = 0;
    const ok = fakeDevice({ registers: { 0: 1 } });
    const request = (op) => (n++ === 0 ? ok.request(op) : Promise.reject(Object.assign(new NinesError('NINES_ERR_REPLY_TIMEOUT', 'no reply'), { sentNs: 5n })));
    const tags = buildTags([{ name: 'a', table: 'holding', address: 0 }, { name: 'c', table: 'coil', address: 0 }], CTX);
    const plan = planReads(tags, CTX); // the coil read goes first, and times out here
    const r = new TagReader({ tags, blocks: plan.reverse(), request });
    await assert.rejects(r.poll(), (err) => {
      assert.equal(err.code, 'NINES_ERR_REPLY_TIMEOUT');
      assert.deepEqual(err.poll.quality, { a: 'ok', c: 'NINES_ERR_REPLY_TIMEOUT' });
      assert.deepEqual(err.poll.values, { a: 1, c: null });
      assert.equal(err.sentNs, 5n); // the poll's first write
      return true;
    });
  });

  it('a device that is down fails the poll at once with its code for every tag, nothing sent', async () => {
    const r = reader([{ name: 'a', table: 'input', address: 0 }], { request: () => Promise.reject(new NinesError('NINES_ERR_NOT_CONNECTED', 'down')) });
    await assert.rejects(r.poll(), (err) => {
      assert.equal(err.code, 'NINES_ERR_NOT_CONNECTED');
      assert.equal(err.sentNs, undefined);
      assert.deepEqual(err.poll.quality, { a: 'NINES_ERR_NOT_CONNECTED' });
      return true;
    });
  });

  it('against the simulator: a map with a hole still yields every readable tag, over a real device', async function () {
    const sim = await createModbusTcpSimulator({ port: 0, modelOptions: { holes: { holdingRegisters: [[50, 59]] } } });
    const device = new Device({ name: 'plc', target: sim.url, timeoutMs: 1000 });
    try {
      sim.model.setRegisters('holdingRegisters', 40, [0x4049, 0x0FDB]);
      sim.model.setRegister('holdingRegisters', 60, 1234);
      await device.open();
      const user = device.user('test', { queueMax: 16 });
      const tags = buildTags([
        { name: 'pi', table: 'holding', address: 40, type: 'float32' },
        { name: 'missing', table: 'holding', address: 55 },
        { name: 'count', table: 'holding', address: 60 }
      ], CTX);
      const r = new TagReader({ tags, blocks: planReads(tags, CTX), request: (op, o) => user.request(op, o) });
      const res = await r.poll();
      assert.equal(Math.round(res.values.pi * 1e5) / 1e5, 3.14159);
      assert.equal(res.values.count, 1234);
      assert.equal(res.quality.missing, 'NINES_ERR_MODBUS_EXCEPTION');
      assert.equal(r.readsPerPoll, 3);
    } finally {
      await device.close();
      await sim.close();
    }
  });
});
