'use strict';

/**
 * The correlation drill's verdicts rest on wire-analysis.js putting each reply with the request the
 * simulator answered: these traces are written by hand, one case each, so a classification that
 * drifts (a reply paired by its address alone, a frame lost from a chunk) fails here first.
 */

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { crc16 } = require('../../gateway/drivers/modbus/frame');
const { analyseWire } = require('./wire-analysis');

const MS = 1000000n;
const URL = 'modbus+rtutcp://127.0.0.1:1';

/** An FC3 request for two registers of unit 1 @param {number} address @returns {string} hex */
function request (address) {
  const b = Buffer.from([1, 3, address >> 8, address & 0xff, 0, 2, 0, 0]);
  b.writeUInt16LE(crc16(b, 0, 6), 6);
  return b.toString('hex');
}

/** The signature simulator's reply for two registers at `address` of unit 1 @param {number} address @returns {string} hex */
function reply (address) {
  const v = 1000 + address;
  const b = Buffer.from([1, 3, 4, v >> 8, v & 0xff, (v + 1) >> 8, (v + 1) & 0xff, 0, 0]);
  b.writeUInt16LE(crc16(b, 0, 7), 7);
  return b.toString('hex');
}

/**
 * Writes a trace folder and analyses it.
 * @param {Array<[number, string, ...any[]]>} events [ms, kind, …]: gateway w/r/t (address or hex), simulator q/x (address)
 * @returns {object[]} the device's suspects
 */
function analyse (events) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-wire-test-'));
  try {
    const gw = [];
    const sim = [];
    for (const [ms, kind, arg] of events) {
      const ns = BigInt(ms * 1000) * 1000n + 1000n * MS;
      if (kind === 'w') gw.push(`w ${ns} ${URL} ${request(arg)}`);
      else if (kind === 'r') gw.push(`r ${ns} ${URL} ${typeof arg === 'number' ? reply(arg) : arg}`);
      else if (kind === 't') gw.push(`t ${ns} ${URL}`);
      else sim.push(`${kind} ${ns} 1 ${arg}`);
    }
    fs.writeFileSync(path.join(dir, 'gateway-1-0.trace'), gw.join('\n') + '\n');
    fs.writeFileSync(path.join(dir, 'sim-2-0.trace'), sim.join('\n') + '\n');
    const [device] = analyseWire(dir, { windowMs: 200, devices: [{ match: URL, sim: 'sim' }] });
    return device.suspects;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('wire analysis: each reply goes with the request the simulator answered (issue 18)', () => {
  it('a clean exchange has no suspect', () => {
    assert.deepEqual(analyse([[0, 'w', 0], [1, 'q', 0], [2, 'x', 0], [3, 'r', 0], [10, 'w', 10], [11, 'q', 10], [12, 'x', 10], [13, 'r', 10]]), []);
  });

  it('a write inside the window after a timeout is the gateway\'s fault (early-write)', () => {
    const s = analyse([[0, 'w', 0], [1, 'q', 0], [100, 't'], [101, 'w', 10], [110, 'x', 0], [111, 'r', 0], [112, 'q', 10]]);
    assert.equal(s.length, 1);
    assert.equal(s[0].cls, 'early-write');
    assert.equal(s[0].taken, true);
  });

  it('a reply beyond the window is arrived-late, and the reply it displaces is its cascade', () => {
    const s = analyse([[0, 'w', 0], [1, 'q', 0], [100, 't'], [210, 'w', 10], [250, 'x', 0], [251, 'r', 0], [260, 'w', 20], [261, 'q', 10], [262, 'x', 10], [263, 'r', 10], [264, 'q', 20], [265, 'x', 20], [266, 'r', 20]]);
    assert.deepEqual(s.map((x) => [x.cls, x.taken]), [['arrived-late', true], ['cascade', true]]);
  });

  it('a late reply of the same address is still another request\'s: its successor is a cascade, not an early write', () => {
    // request A (address 20) times out; its reply comes beyond the window while request C (also
    // address 20) is on the wire, and is taken for C's (right value, wrong request); C's own reply
    // then comes while D (address 10) is on the wire
    const s = analyse([[0, 'w', 20], [1, 'q', 20], [100, 't'], [205, 'w', 20], [300, 'x', 20], [301, 'r', 20], [303, 'w', 10], [304, 'q', 20], [305, 'x', 20], [306, 'r', 20]]);
    assert.deepEqual(s.map((x) => [x.cls, x.taken]), [['arrived-late', true], ['cascade', true]]);
  });

  it('two frames read in one chunk are both read (a foreign frame before ours)', () => {
    // the reply to address 10 and then the reply to address 20 arrive together while 20 is on the wire;
    // the next write then gets its own reply: no suspect beyond the first frame
    const s = analyse([[0, 'w', 10], [1, 'q', 10], [100, 't'], [210, 'w', 20], [211, 'q', 20], [250, 'x', 10], [251, 'x', 20], [252, 'r', reply(10) + reply(20)], [260, 'w', 20], [261, 'q', 20], [262, 'x', 20], [263, 'r', 20]]);
    assert.deepEqual(s.map((x) => [x.cls, x.taken]), [['arrived-late', true]]);
  });
});
