'use strict';

const assert = require('node:assert/strict');
const { buildTags } = require('../../gateway/tags/spec');
const { encodeTagWrites, runTagWrites } = require('../../gateway/tags/write');
const { NinesError } = require('../../gateway/base/errors');

const MODBUS = { protocol: 'modbus+tcp' };
const tags = buildTags([
  { name: 'setpoint', table: 'holding', address: 10, type: 'int16', scale: 0.1 },
  { name: 'level', table: 'holding', address: 20, type: 'float32', order: 'CDAB' },
  { name: 'count', table: 'holding', address: 30, type: 'uint64' },
  { name: 'label', table: 'holding', address: 40, type: 'string', length: 2 },
  { name: 'pump', table: 'coil', address: 3 },
  { name: 'raw', table: 'holding', address: 50, type: 'uint16' },
  { name: 'temp', table: 'input', address: 0 },
  { name: 'alarm', table: 'holding', address: 60, type: 'bit', bit: 2 },
  { name: 'locked', table: 'holding', address: 70, readOnly: true }
], MODBUS);

function refused (values, code, re) {
  assert.throws(() => encodeTagWrites(tags, values, MODBUS), (err) => {
    assert.ok(err instanceof NinesError);
    assert.equal(err.code, code);
    assert.match(err.message, re);
    return true;
  });
}

describe('tags/write: writes by name, every value checked before anything is sent', () => {
  it('encodes by the tag: FC6 for one register, FC16 for wider values and strings, FC5 for a coil', () => {
    const w = encodeTagWrites(tags, { setpoint: 71.3, level: 123.456, count: '18446744073709551615', label: 'OK', pump: true }, MODBUS);
    assert.deepEqual(w.map((x) => x.ops), [
      [{ fc: 6, address: 10, value: 713 }],
      [{ fc: 16, address: 20, values: [0xE979, 0x42F6] }],
      [{ fc: 16, address: 30, values: [0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF] }],
      [{ fc: 16, address: 40, values: [0x4F4B, 0x0000] }],
      [{ fc: 5, address: 3, value: true }]
    ]);
  });

  it('uses the function code that stands in for one the device lacks', () => {
    const lacking = (fcs, values) => encodeTagWrites(tags, values, { ...MODBUS, unsupportedFunctionCodes: fcs }).map((x) => x.ops);
    // no FC16: one FC6 per register, in register order
    assert.deepEqual(lacking([16], { level: 123.456 }), [[{ fc: 6, address: 20, value: 0xE979 }, { fc: 6, address: 21, value: 0x42F6 }]]);
    // no FC6: FC16 of one register; no FC5: FC15 of one coil
    assert.deepEqual(lacking([6, 5], { raw: 7, pump: false }), [[{ fc: 16, address: 50, values: [7] }], [{ fc: 15, address: 3, values: [false] }]]);
  });

  it('a write of several requests that fails part way says how much of it the device took', async () => {
    const [w] = encodeTagWrites(tags, { level: 1.5 }, { ...MODBUS, unsupportedFunctionCodes: [16] });
    let n = 0;
    const out = await runTagWrites([w], () => (n++ === 0 ? Promise.resolve({}) : Promise.reject(new NinesError('NINES_ERR_REPLY_TIMEOUT', 'no reply'))));
    // the second request went out and timed out: the device may hold it (issue 18)
    assert.equal(out.results.level.code, 'NINES_ERR_WRITE_UNKNOWN');
    assert.equal(out.results.level.written, 'unknown');
    assert.deepEqual(out.results.level.cause, { code: 'NINES_ERR_REPLY_TIMEOUT', message: 'no reply' });
    assert.match(out.results.level.message, /^1 of 2 requests went through, the next one sent, outcome unknown/);
    n = 0;
    const unsent = await runTagWrites([w], () => (n++ === 0 ? Promise.resolve({}) : Promise.reject(new NinesError('NINES_ERR_NOT_CONNECTED', 'not sent'))));
    assert.deepEqual(unsent.results.level, { ok: false, code: 'NINES_ERR_NOT_CONNECTED', message: 'not sent', written: '1 of 2' });
  });

  // issue 18: "not written" only when the write provably never reached the device, or it said no
  for (const [what, code, details, written] of [
    ['a timeout after it was sent', 'NINES_ERR_REPLY_TIMEOUT', { timeoutMs: 100 }, 'unknown'],
    ['a timeout while it waited in a queue', 'NINES_ERR_REPLY_TIMEOUT', { queued: true }, false],
    ['a connection that dropped with it in flight', 'NINES_ERR_CONNECTION_CLOSED', {}, 'unknown'],
    ['its device removed (a reload) with it in flight', 'NINES_ERR_CLOSED', { target: 'modbus+tcp://x' }, 'unknown'],
    ['its device removed (a reload) while it waited', 'NINES_ERR_CLOSED', { device: 'plc', queued: true }, false],
    ['a worker that died with it out', 'NINES_ERR_WORKER', { worker: 0 }, 'unknown'],
    ['a reply that could not be read', 'NINES_ERR_BAD_REPLY', {}, 'unknown'],
    ['a device that is down', 'NINES_ERR_NOT_CONNECTED', {}, false],
    ['its maximum age', 'NINES_ERR_WRITE_EXPIRED', { queued: true }, false],
    ['exception 2 (illegal address)', 'NINES_ERR_MODBUS_EXCEPTION', { exceptionCode: 2 }, false],
    ['exception 4 (server device failure)', 'NINES_ERR_MODBUS_EXCEPTION', { exceptionCode: 4 }, 'unknown'],
    ['a "?" from an ED module', 'NINES_ERR_DEVICE_INVALID', {}, false]
  ]) {
    it(`reports a write that failed by ${what} as ${written === false ? 'not written' : 'of unknown outcome'}`, async () => {
      const writes = encodeTagWrites(tags, { raw: 5 }, MODBUS);
      const out = await runTagWrites(writes, () => Promise.reject(new NinesError(code, 'it failed', details)));
      assert.equal(out.ok, false);
      assert.equal(out.results.raw.written, written);
      assert.equal(out.results.raw.code, written === false ? code : 'NINES_ERR_WRITE_UNKNOWN');
      if (written !== false) assert.deepEqual(out.results.raw.cause, { code, message: 'it failed' });
    });
  }

  it('refuses 3.7 for a one-register integer instead of writing 4', () => {
    refused({ raw: 3.7 }, 'NINES_ERR_INVALID_VALUE', /tag "raw" \(uint16\): 3\.7 \(values\[0\]\) is not representable as uint16/);
    refused({ setpoint: 71.35 }, 'NINES_ERR_INVALID_VALUE', /not a whole number/);
    refused({ raw: 70000 }, 'NINES_ERR_INVALID_VALUE', /outside uint16 range/);
    refused({ label: 'TOO LONG' }, 'NINES_ERR_INVALID_VALUE', /longer than count 4/);
    refused({ pump: 2 }, 'NINES_ERR_INVALID_VALUE', /true or false/);
  });

  describe('a part of a register: FC22 mask write, never a read and a write', () => {
    const parts = buildTags([
      { name: 'alarm', table: 'holding', address: 60, type: 'bit', bit: 2 },
      { name: 'top', table: 'holding', address: 60, type: 'bit', bit: 15 },
      { name: 'mode', table: 'holding', address: 61, type: 'bits', bit: '4-6', enum: '0=auto|1=manual|5=service' },
      { name: 'gain', table: 'holding', address: 62, type: 'uint8', byte: 'high', scale: 0.5 },
      { name: 'trim', table: 'holding', address: 62, type: 'int8', byte: 'low' },
      { name: 'status', table: 'input', address: 0, type: 'bit', bit: 0 },
      { name: 'kept', table: 'holding', address: 63, type: 'bit', bit: 0, readOnly: true },
      { name: 'word', table: 'holding', address: 64 }
    ], MODBUS);
    const ops = (values, ctx) => encodeTagWrites(parts, values, { ...MODBUS, ...ctx }).map((w) => w.ops);
    const refusedPart = (values, ctx, code, re) => assert.throws(() => ops(values, ctx), (err) => {
      assert.ok(err instanceof NinesError);
      assert.equal(err.code, code);
      assert.match(err.message, re);
      return true;
    });

    it('sets or clears one bit: the AND mask keeps the other 15, the OR mask carries the bit', () => {
      assert.deepEqual(ops({ alarm: true, top: 1 }), [
        [{ fc: 22, address: 60, andMask: 0xFFFB, orMask: 0x0004 }],
        [{ fc: 22, address: 60, andMask: 0x7FFF, orMask: 0x8000 }]
      ]);
      assert.deepEqual(ops({ alarm: false }, { unitId: 7 }), [[{ fc: 22, address: 60, andMask: 0xFFFB, orMask: 0, unitId: 7 }]]);
    });

    it('writes a bit field by its enum\'s label or number, and a byte after scale, each in its own bits', () => {
      assert.deepEqual(ops({ mode: 'service', gain: 100, trim: -1 }), [
        [{ fc: 22, address: 61, andMask: 0xFF8F, orMask: 0x0050 }],
        [{ fc: 22, address: 62, andMask: 0x00FF, orMask: 0xC800 }],
        [{ fc: 22, address: 62, andMask: 0xFF00, orMask: 0x00FF }]
      ]);
      assert.deepEqual(ops({ mode: 1 }), [[{ fc: 22, address: 61, andMask: 0xFF8F, orMask: 0x0010 }]]);
    });

    it('refuses a value the part cannot hold, a read-only part, and on a device that lacks FC22 any part at all', () => {
      refusedPart({ alarm: 2 }, {}, 'NINES_ERR_INVALID_VALUE', /tag "alarm" \(bit\): the value must be true or false/);
      refusedPart({ mode: 'off' }, {}, 'NINES_ERR_INVALID_VALUE', /"off" is not a label of its enum/);
      refusedPart({ gain: 128 }, {}, 'NINES_ERR_INVALID_VALUE', /outside uint8 range 0 to 255/);
      refusedPart({ status: true }, {}, 'NINES_ERR_INVALID_ARG', /input is a read-only table/);
      refusedPart({ kept: true }, {}, 'NINES_ERR_INVALID_ARG', /marked readOnly/);
      // no stand-in: a read and a write would undo what another writer changed between the two
      refusedPart({ alarm: true }, { unsupportedFunctionCodes: [22] }, 'NINES_ERR_FC_UNSUPPORTED', /bit 2 of holding 60: written only with FC22 mask write, which the device lacks/);
      assert.throws(() => ops({ alarm: true, trim: 1 }, { unsupportedFunctionCodes: [22, 16] }), (err) => {
        assert.equal(err.code, 'NINES_ERR_FC_UNSUPPORTED');
        assert.deepEqual(err.details.problems.map((p) => [p.tag, p.code]), [['alarm', 'NINES_ERR_FC_UNSUPPORTED'], ['trim', 'NINES_ERR_FC_UNSUPPORTED']]);
        return true;
      });
      // a value problem is still the more specific refusal
      assert.throws(() => ops({ alarm: true, word: 3.5 }, { unsupportedFunctionCodes: [22] }), { code: 'NINES_ERR_INVALID_VALUE' });
    });

    it('reports exception 1 to FC22 (the device lacks it) as not written', async () => {
      const writes = encodeTagWrites(parts, { alarm: true }, MODBUS);
      const out = await runTagWrites(writes, () => Promise.reject(new NinesError('NINES_ERR_FC_UNSUPPORTED', 'the device does not support FC22', { fc: 22, exceptionCode: 1 })));
      assert.deepEqual(out.results.alarm, { ok: false, code: 'NINES_ERR_FC_UNSUPPORTED', message: 'the device does not support FC22', written: false });
    });
  });

  it('refuses read-only and unknown tags by name, and a whole write when one value is bad', () => {
    refused({ temp: 1 }, 'NINES_ERR_INVALID_ARG', /"temp" is read-only \(input is a read-only table\)/);
    refused({ locked: 1 }, 'NINES_ERR_INVALID_ARG', /marked readOnly/);
    refused({ Pump: true }, 'NINES_ERR_INVALID_ARG', /not a tag of this device \(did you mean "pump"\?\)/);
    assert.throws(() => encodeTagWrites(tags, { pump: true, raw: 3.7 }, MODBUS), (err) => {
      assert.equal(err.code, 'NINES_ERR_INVALID_VALUE');
      assert.deepEqual(err.details.problems.map((p) => p.tag), ['raw']);
      return true;
    });
    refused([1], 'NINES_ERR_INVALID_ARG', /must be an object/);
    refused({}, 'NINES_ERR_INVALID_ARG', /names no tag/);
  });

  it('writes ED-series outputs and analog channels as commands', () => {
    const ascii = buildTags([{ name: 'lamp', table: 'output', address: 2 }, { name: 'valve', table: 'analog', address: 1, scale: 10, unit: '%' }], { protocol: 'ascii' });
    const w = encodeTagWrites(ascii, { lamp: true, valve: 55 }, { protocol: 'ascii', address: '01' });
    assert.deepEqual(w.map((x) => x.ops), [['#01A201'], ['#011+05.500']]);
    assert.throws(() => encodeTagWrites(ascii, { valve: 2000 }, { protocol: 'ascii', address: '01' }), /outside the module's -99.999 to \+99.999 V/);
  });

  it('runs writes in order, stops at the first that fails, and reports each tag, never throwing', async () => {
    const sent = [];
    const writes = encodeTagWrites(tags, { pump: true, raw: 5, setpoint: 20 }, MODBUS);
    const out = await runTagWrites(writes, (op) => {
      sent.push(op.address);
      return op.address === 50 ? Promise.reject(new NinesError('NINES_ERR_REPLY_TIMEOUT', 'no reply')) : Promise.resolve({});
    });
    // the setpoint after the failed write is not sent: order carries meaning (a setpoint, then its enable)
    assert.deepEqual(sent, [3, 50]);
    assert.deepEqual(out, {
      ok: false,
      results: {
        pump: { ok: true },
        raw: { ok: false, code: 'NINES_ERR_WRITE_UNKNOWN', message: 'sent, outcome unknown (the device may have executed it): NINES_ERR_REPLY_TIMEOUT: no reply', written: 'unknown', cause: { code: 'NINES_ERR_REPLY_TIMEOUT', message: 'no reply' } },
        setpoint: { ok: false, skipped: true, message: 'not sent: the write of tag "raw" before it failed' }
      }
    });
  });
});
