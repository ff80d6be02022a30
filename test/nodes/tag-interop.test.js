'use strict';

/**
 * Decoding against a peer: modbus-serial (another Modbus client, its own framing) writes float32,
 * int32 and float64 values into the nines Modbus simulator in all four word/byte orders, as bytes
 * laid out here with Node's own Buffer writers; a nines-poll node and a nines-modbus-read node with
 * matching tags decode the written values. Nothing of nines encodes what is checked.
 */

const assert = require('node:assert/strict');
const ModbusRTU = require('modbus-serial');
const { helper, roundTrip, withModbusSim } = require('./harness');
const deviceNode = require('../../nodes/nines-modbus-device');
const pollNode = require('../../nodes/nines-poll');
const readNode = require('../../nodes/nines-modbus-read');
const { until } = require('../helpers/wait');

const ORDERS = ['ABCD', 'CDAB', 'BADC', 'DCBA'];
const VALUES = {
  float32: { value: -123.456, bytes: 4, write: (b, v) => b.writeFloatBE(v), expect: -123.456 }, // the float32 nearest -123.456, given as its shortest decimal
  int32: { value: -123456789, bytes: 4, write: (b, v) => b.writeInt32BE(v), expect: -123456789 },
  float64: { value: 1234567.891011, bytes: 8, write: (b, v) => b.writeDoubleBE(v), expect: 1234567.891011 }
};

/**
 * A value's bytes on the wire in one of the four orders: big-endian bytes (ABCD…), then the
 * registers reversed for a low word first (CDAB, DCBA), the bytes of each register swapped for a
 * low byte first (BADC, DCBA).
 */
function wireBytes (type, order) {
  const { value, bytes, write } = VALUES[type];
  const be = Buffer.alloc(bytes);
  write(be, value);
  const words = [];
  for (let i = 0; i < bytes; i += 2) words.push(be.subarray(i, i + 2));
  if (order === 'CDAB' || order === 'DCBA') words.reverse();
  const out = Buffer.concat(words);
  if (order === 'BADC' || order === 'DCBA') out.swap16();
  return out;
}

/** One tag per type and order, each at its own registers from 200 on, with the bytes to write there */
function layout () {
  const tags = [];
  let address = 200;
  for (const order of ORDERS) {
    for (const type of Object.keys(VALUES)) {
      tags.push({ tag: { name: `${type}_${order}`, table: 'holding', address, type, order }, bytes: wireBytes(type, order) });
      address += VALUES[type].bytes / 2;
    }
  }
  return tags;
}

describe('tag decoding against modbus-serial, all four orders', function () {
  let sim;
  withModbusSim(() => sim, (s) => { sim = s; });

  async function writeWithModbusSerial (items) {
    const client = new ModbusRTU();
    await client.connectTCP('127.0.0.1', { port: sim.port });
    client.setID(1);
    client.setTimeout(2000);
    try {
      for (const { tag, bytes } of items) await client.writeRegisters(tag.address, bytes);
    } finally {
      await new Promise((resolve) => client.close(resolve));
    }
  }

  function expected () {
    const out = {};
    for (const order of ORDERS) for (const type of Object.keys(VALUES)) out[`${type}_${order}`] = VALUES[type].expect;
    return out;
  }

  it('lays the bytes out as the letters say (a check of the test itself)', () => {
    // -123.456 as float32 is C2 F6 E9 79 (A B C D)
    assert.equal(wireBytes('float32', 'ABCD').toString('hex'), 'c2f6e979');
    assert.equal(wireBytes('float32', 'CDAB').toString('hex'), 'e979c2f6');
    assert.equal(wireBytes('float32', 'BADC').toString('hex'), 'f6c279e9');
    assert.equal(wireBytes('float32', 'DCBA').toString('hex'), '79e9f6c2');
  });

  it('decodes them through a nines-poll node and a nines-modbus-read node with matching tags', async () => {
    const items = layout();
    await writeWithModbusSerial(items);
    const tags = items.map((i) => i.tag);
    await helper.load([deviceNode, pollNode, readNode], [
      { id: 'dev', type: 'nines-modbus-device', transport: 'tcp', host: '127.0.0.1', port: sim.port, unitId: 1, timeout: 500 },
      { id: 'p', type: 'nines-poll', protocol: 'modbus', modbusDevice: 'dev', source: 'tags', tags, rate: '20/s', values: 'on-change', interval: 1, wires: [['polled'], []] },
      { id: 'r', type: 'nines-modbus-read', device: 'dev', source: 'tags', tags, wires: [['read']] },
      { id: 'polled', type: 'helper' },
      { id: 'read', type: 'helper' }
    ]);
    const polled = [];
    helper.getNode('polled').on('input', (m) => polled.push(m));
    const read = await roundTrip(helper.getNode('r'), helper.getNode('read'), {});
    await until(() => polled.length >= 1, 'the poll node\'s values');
    const want = expected();
    for (const [via, msg] of [['nines-modbus-read', read], ['nines-poll', polled[0]]]) {
      assert.deepEqual(msg.payload, want, via);
      assert.ok(Object.values(msg.quality).every((q) => q === 'ok'), via);
    }
    // 32 registers in one coalesced read per poll
    assert.equal(read.reads, 1);
  });
});
