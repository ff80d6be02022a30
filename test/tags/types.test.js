'use strict';

/**
 * The types field devices use, as tags (issue 23): BCD, float16, a byte of a register, bit fields,
 * enums, a scale from another register, and registers that hold no value published as a quality
 * code, never as a value. Read through a TagReader against a device map in memory.
 */

const assert = require('node:assert/strict');
const { buildTags, checkTags, tagContext, loadTagSheet, encodeTagWrites } = require('../../gateway/tags');
const { planReads } = require('../../gateway/tags/plan');
const { TagReader } = require('../../gateway/tags/reader');
const { NinesError } = require('../../gateway/base/errors');
const { parseTarget } = require('../../gateway/drivers/target');
const { tagDatatype } = require('../../gateway/runtime/sparkplug/metrics');

const MODBUS = { protocol: 'modbus+tcp' };
const CTX = tagContext(parseTarget('modbus+tcp://127.0.0.1:502'), {});

/** A device map in memory: holding registers by address; an address in `holes` answers exception 2 */
function fakeDevice (registers, holes = []) {
  const calls = [];
  const request = (op) => {
    calls.push(`${op.address}+${op.quantity}`);
    for (let a = op.address; a < op.address + op.quantity; a++) {
      if (holes.includes(a)) return Promise.reject(new NinesError('NINES_ERR_MODBUS_EXCEPTION', `exception 2 at ${a}`, { exceptionCode: 2 }));
    }
    const data = Array.from({ length: op.quantity }, (_, i) => registers[op.address + i] || 0);
    const buffer = Buffer.alloc(2 * op.quantity);
    data.forEach((w, i) => buffer.writeUInt16BE(w, 2 * i));
    return Promise.resolve({ data, buffer, sentNs: 1n, doneNs: 2n });
  };
  return { request, calls };
}

/** One poll of a tag list against registers: {values, quality} */
async function poll (list, registers, holes) {
  const tags = buildTags(list, CTX);
  const device = fakeDevice(registers, holes);
  const r = new TagReader({ tags, blocks: planReads(tags, CTX), request: device.request });
  const { values, quality } = await r.poll();
  return { values, quality, calls: device.calls };
}

/** The problems of a list as `path: rule` lines */
function problems (list) {
  return checkTags(list, MODBUS).problems.map((p) => `${p.path.join('.')}: ${p.rule}`);
}

function expectProblem (list, path, re) {
  const found = problems(list);
  assert.ok(found.some((l) => l.startsWith(`${path}: `) && re.test(l)), `expected ${path} ${re}; got ${JSON.stringify(found)}`);
}

const H = (name, address, more) => ({ name, table: 'holding', address, ...more });

describe('tags: the rest of the types field devices use (issue 23)', () => {
  describe('read by tag', () => {
    it('decodes bcd, lbcd, float16, int8/uint8 of either byte and a bit field', async () => {
      const { values, quality } = await poll([
        H('count', 0, { type: 'bcd' }),
        H('total', 1, { type: 'lbcd', order: 'CDAB' }),
        H('ratio', 3, { type: 'float16' }),
        H('hi', 4, { type: 'int8', byte: 'high' }),
        H('lo', 4, { type: 'uint8', byte: 'low' }),
        H('mode', 5, { type: 'bits', bit: '4-6' }),
        H('ready', 5, { type: 'bit', bit: 0 }),
        H('scaled', 6, { type: 'bcd', scale: 0.1 })
      ], { 0: 0x1234, 1: 0x5678, 2: 0x1234, 3: 0x3555, 4: 0xFF7F, 5: 0b1010001, 6: 0x0701 });
      assert.deepEqual(values, { count: 1234, total: 12345678, ratio: 0.3333, hi: -1, lo: 127, mode: 5, ready: true, scaled: 70.1 });
      assert.ok(Object.values(quality).every((q) => q === 'ok'), JSON.stringify(quality));
    });

    it('publishes NaN, ±Infinity and the ±3.4e38 float32 sentinel as null with NINES_ERR_NO_VALUE, and a bad BCD nibble as NINES_ERR_BAD_BCD', async () => {
      const f32 = (x) => { const b = Buffer.alloc(4); b.writeFloatBE(x); return [b.readUInt16BE(0), b.readUInt16BE(2)]; };
      const f64 = (x) => { const b = Buffer.alloc(8); b.writeDoubleBE(x); return [0, 2, 4, 6].map((o) => b.readUInt16BE(o)); };
      const regs = {};
      const put = (at, words) => words.forEach((w, i) => { regs[at + i] = w; });
      put(0, f32(NaN));
      put(2, f32(-3.4e38));
      put(4, f32(3.4028234663852886e38));
      put(6, f32(Infinity));
      put(8, f32(3.3e38));
      put(10, f64(NaN));
      put(14, f64(-Infinity));
      put(18, [0x7C00, 0x7E00, 0x12A4]);
      const { values, quality } = await poll([
        H('nan', 0, { type: 'float32' }), H('sentinel', 2, { type: 'float32' }), H('max', 4, { type: 'float32' }),
        H('inf', 6, { type: 'float32' }), H('big', 8, { type: 'float32' }), H('nan64', 10, { type: 'float64' }),
        H('inf64', 14, { type: 'float64' }), H('inf16', 18, { type: 'float16' }), H('nan16', 19, { type: 'float16' }),
        H('bcd', 20, { type: 'bcd' })
      ], regs);
      assert.deepEqual(values, { nan: null, sentinel: null, max: null, inf: null, big: 3.3e38, nan64: null, inf64: null, inf16: null, nan16: null, bcd: null });
      assert.deepEqual(quality, {
        nan: 'NINES_ERR_NO_VALUE',
        sentinel: 'NINES_ERR_NO_VALUE',
        max: 'NINES_ERR_NO_VALUE',
        inf: 'NINES_ERR_NO_VALUE',
        big: 'ok',
        nan64: 'NINES_ERR_NO_VALUE',
        inf64: 'NINES_ERR_NO_VALUE',
        inf16: 'NINES_ERR_NO_VALUE',
        nan16: 'NINES_ERR_NO_VALUE',
        bcd: 'NINES_ERR_BAD_BCD'
      });
    });

    it('publishes an enum tag\'s label, and a value without one as null with NINES_ERR_UNKNOWN_ENUM', async () => {
      const list = [H('state', 0, { type: 'uint16', enum: { 0: 'off', 1: 'heat', 2: 'cool' } }), H('fan', 1, { type: 'bits', bit: '0-1', enum: '0=auto|1=low|2=high' })];
      let r = await poll(list, { 0: 2, 1: 0xFF02 });
      assert.deepEqual(r.values, { state: 'cool', fan: 'high' });
      assert.deepEqual(r.quality, { state: 'ok', fan: 'ok' });
      r = await poll(list, { 0: 7, 1: 3 });
      assert.deepEqual(r.values, { state: null, fan: null });
      assert.deepEqual(r.quality, { state: 'NINES_ERR_UNKNOWN_ENUM', fan: 'NINES_ERR_UNKNOWN_ENUM' });
    });

    it('scales a value by the power of ten its scale register holds, read in the same poll even in another request', async () => {
      const list = [
        H('power', 0, { type: 'uint16', unit: 'W', scaleFrom: 'power_sf' }),
        H('current', 1, { type: 'int16', scale: 0.1, scaleFrom: 'power_sf' }),
        H('energy', 2, { type: 'uint32', scaleFrom: 'energy_sf' }),
        H('power_sf', 100, { type: 'int16' }),
        H('energy_sf', 4, { type: 'int16' })
      ];
      const { values, quality, calls } = await poll(list, { 0: 12345, 1: 5, 2: 0, 3: 1500, 4: 3, 100: 0xFFFE });
      assert.deepEqual(values, { power: 123.45, current: 0.005, energy: 1500000, power_sf: -2, energy_sf: 3 });
      assert.ok(Object.values(quality).every((q) => q === 'ok'));
      assert.deepEqual(calls.sort(), ['0+5', '100+1']);
    });

    it('gives a value whose scale register failed, or holds no exponent, NINES_ERR_SCALE_FACTOR; its own read failing keeps its own code', async () => {
      const list = [H('power', 0, { type: 'uint16', scaleFrom: 'sf' }), H('sf', 100, { type: 'int16' })];
      let r = await poll(list, { 0: 100 }, [100]);
      assert.deepEqual(r.values, { power: null, sf: null });
      assert.deepEqual(r.quality, { power: 'NINES_ERR_SCALE_FACTOR', sf: 'NINES_ERR_MODBUS_EXCEPTION' });
      // SunSpec's "not implemented" (0x8000) and anything beyond ±10 is no exponent
      for (const sf of [0x8000, 11, 0xFFF5]) {
        r = await poll(list, { 0: 100, 100: sf });
        assert.deepEqual([r.values.power, r.quality.power], [null, 'NINES_ERR_SCALE_FACTOR'], `sf register 0x${sf.toString(16)}`);
      }
      r = await poll(list, { 100: 1 }, [0]);
      assert.deepEqual(r.quality, { power: 'NINES_ERR_MODBUS_EXCEPTION', sf: 'ok' });
    });
  });

  describe('checked at load, with field paths', () => {
    it('takes a bit range for type bits, and a byte for int8 and uint8; IEC SINT and USINT too', () => {
      const [m, a, b, c] = buildTags([H('m', 0, { type: 'bits', bit: '4 - 6' }), H('a', 0, { type: 'SINT', byte: 'HIGH' }), H('b', 1, { type: 'USINT', byte: 'low' }), H('c', 2, { type: 'bits', bit: 15 })], MODBUS);
      // parts of a holding register are writable: FC22 mask write changes only their bits
      assert.deepEqual([m.bit, m.width, m.span, m.readOnly], [4, 3, 1, false]);
      assert.deepEqual([a.type, a.byte, a.readOnly, b.type, b.byte], ['int8', 'high', false, 'uint8', 'low']);
      assert.deepEqual([c.bit, c.width], [15, 1]);
      expectProblem([H('m', 0, { type: 'bits', bit: '6-4' })], '0.bit', /range of bits such as "4-6"/);
      expectProblem([H('m', 0, { type: 'bits', bit: '4-16' })], '0.bit', /range of bits/);
      expectProblem([H('m', 0, { type: 'bits' })], '0.bit', /range of bits/);
      expectProblem([H('a', 0, { type: 'int8' })], '0.byte', /must be high or low for type int8/);
      expectProblem([H('a', 0, { type: 'int16', byte: 'high' })], '0.byte', /only used with type int8 or uint8/);
      expectProblem([H('a', 0, { type: 'int8', byte: 'low', order: 'BADC' })], '0.order', /applies to register values only/);
    });

    it('lets parts of one register share it, not a bit: a byte and a bit field over it clash', () => {
      assert.deepEqual(problems([H('w', 0), H('hi', 0, { type: 'uint8', byte: 'high' }), H('lo', 0, { type: 'uint8', byte: 'low' }), H('b', 1, { type: 'bit', bit: 3 })]), []);
      // the one of the two starting at the higher bit is named
      expectProblem([H('hi', 0, { type: 'uint8', byte: 'high' }), H('f', 0, { type: 'bits', bit: '6-9' })], '0.address', /overlaps tag "f" \(bits 8-9 of holding 0\)/);
      expectProblem([H('lo', 0, { type: 'int8', byte: 'low' }), H('b', 0, { type: 'bit', bit: 7 })], '1.address', /overlaps tag "lo" \(bit 7 of holding 0\)/);
      expectProblem([H('f', 0, { type: 'bits', bit: '0-7' }), H('b', 0, { type: 'bit', bit: 3 })], '1.address', /overlaps tag "f" \(bit 3 of holding 0\)/);
    });

    it('refuses an enum with a value twice ("1" and "01"), a label twice, a value the type cannot hold, or beside scale', () => {
      expectProblem([H('s', 0, { enum: { 1: 'on', '01': 'off' } })], '0.enum.01', /is the value 1 again/);
      expectProblem([H('s', 0, { enum: '1=on|1=off' })], '0.enum.1', /is the value 1 again/);
      expectProblem([H('s', 0, { enum: { 0: 'on', 1: 'on' } })], '0.enum.1', /is the label of 0 too/);
      expectProblem([H('s', 0, { enum: { '-1': 'x' } })], '0.enum.-1', /outside the tag's raw values, 0 to 65535/);
      expectProblem([H('s', 0, { type: 'bits', bit: '0-1', enum: { 4: 'x' } })], '0.enum.4', /0 to 3/);
      expectProblem([H('s', 0, { enum: { x: 'a' } })], '0.enum.x', /not a whole number/);
      expectProblem([H('s', 0, { enum: { 1: true } })], '0.enum.1', /label of 1-64 characters/);
      expectProblem([H('s', 0, { enum: {} })], '0.enum', /at least one value/);
      expectProblem([H('s', 0, { enum: { 1: 'a' }, scale: 0.1 })], '0.scale', /cannot be combined with enum/);
      expectProblem([H('s', 0, { type: 'float32', enum: { 1: 'a' } })], '0.enum', /integer register tags only/);
    });

    it('refuses a scaleFrom that names no tag of the list, itself, or a tag that is not a plain int16', () => {
      expectProblem([H('p', 0, { scaleFrom: 'sf' })], '0.scaleFrom', /names no tag of this list/);
      expectProblem([H('p', 0, { scaleFrom: 'p' })], '0.scaleFrom', /names the tag itself/);
      expectProblem([H('p', 0, { scaleFrom: 'sf' }), H('sf', 1, { type: 'uint16' })], '0.scaleFrom', /must be an int16 without scale/);
      expectProblem([H('p', 0, { scaleFrom: 'sf' }), H('sf', 1, { type: 'int16', scale: 10 })], '0.scaleFrom', /must be an int16 without scale/);
      expectProblem([H('p', 0, { type: 'string', length: 2, scaleFrom: 'sf' }), H('sf', 4, { type: 'int16' })], '0.scaleFrom', /numeric register tags only/);
      assert.throws(() => buildTags([H('p', 0, { scaleFrom: 'sf' })], MODBUS, 'devices.inv.tags.ac'), { code: 'NINES_ERR_INVALID_ARG', message: /^devices\.inv\.tags\.ac\[0\]\.scaleFrom: "sf" names no tag/ });
    });

    it('reads the new fields from a tag sheet: a bit range, a byte, enum pairs, a scale tag; a repeated enum value names its line and column', () => {
      const tags = loadTagSheet([
        'name,table,address,type,bit,byte,enum,scaleFrom',
        'mode,holding,1,bits,4-6,,"0=off,1=heat",',
        'b,holding,1,int8,,high,,',
        'sf,holding,2,int16,,,,',
        'p,holding,3,uint16,,,,sf'
      ].join('\n'), MODBUS);
      assert.deepEqual(tags.map((t) => [t.name, t.type, t.bit, t.width, t.byte, t.enum, t.scaleFrom]), [
        ['mode', 'bits', 4, 3, undefined, { 0: 'off', 1: 'heat' }, undefined],
        ['b', 'int8', null, undefined, 'high', undefined, undefined],
        ['sf', 'int16', null, undefined, undefined, undefined, undefined],
        ['p', 'uint16', null, undefined, undefined, undefined, 'sf']
      ]);
      assert.throws(() => loadTagSheet('name,table,address,type,enum\nmode,holding,1,uint16,0=off|1=on|1=off\n', MODBUS, 'plc.csv'), (err) => {
        assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
        assert.match(err.message, /^plc\.csv line 2, column 5 \(enum\): "1" is the value 1 again/);
        assert.deepEqual([err.details.line, err.details.column, err.details.field], [2, 5, 'enum']);
        return true;
      });
    });
  });

  describe('written by tag', () => {
    const tags = buildTags([
      H('count', 0, { type: 'bcd' }),
      H('total', 1, { type: 'lbcd', order: 'CDAB' }),
      H('ratio', 3, { type: 'float16' }),
      H('state', 4, { enum: { 0: 'off', 1: 'heat', 2: 'cool' } }),
      H('hi', 5, { type: 'int8', byte: 'high' }),
      H('mode', 6, { type: 'bits', bit: '0-2' }),
      H('p', 7, { scaleFrom: 'sf' }),
      H('sf', 8, { type: 'int16' })
    ], MODBUS);
    const write = (values) => encodeTagWrites(tags, values, { protocol: 'modbus+tcp' }).map((w) => w.ops[0]);

    it('encodes bcd, lbcd in its word order, float16 and an enum\'s label (or a value it names)', () => {
      assert.deepEqual(write({ count: 1234, total: 12345678, ratio: 0.3333, state: 'cool' }), [
        { fc: 6, address: 0, value: 0x1234 },
        { fc: 16, address: 1, values: [0x5678, 0x1234] },
        { fc: 6, address: 3, value: 0x3555 },
        { fc: 6, address: 4, value: 2 }
      ]);
      assert.deepEqual(write({ state: 1 }), [{ fc: 6, address: 4, value: 1 }]);
    });

    it('writes a part of a register with FC22 mask write: a byte, and a bit field by number or by its enum\'s label', () => {
      assert.deepEqual(write({ hi: -2, mode: 5 }), [
        { fc: 22, address: 5, andMask: 0x00FF, orMask: 0xFE00 },
        { fc: 22, address: 6, andMask: 0xFFF8, orMask: 0x0005 }
      ]);
    });

    it('refuses what a type cannot hold, a label its enum lacks, and a scaled tag as read-only', () => {
      const refused = (values, code, re) => assert.throws(() => write(values), (err) => {
        assert.equal(err.code, code);
        assert.match(err.message, re);
        return true;
      });
      refused({ count: 3.7 }, 'NINES_ERR_INVALID_VALUE', /3\.7 \(values\[0\]\) is not representable as bcd/);
      refused({ count: 10000 }, 'NINES_ERR_INVALID_VALUE', /outside bcd range 0 to 9999/);
      refused({ ratio: 70000 }, 'NINES_ERR_INVALID_VALUE', /outside the float16 range/);
      refused({ state: 'warm' }, 'NINES_ERR_INVALID_VALUE', /"warm" is not a label of its enum \("off", "heat", "cool"\)/);
      refused({ state: 3 }, 'NINES_ERR_INVALID_VALUE', /not a label of its enum/);
      refused({ hi: 128 }, 'NINES_ERR_INVALID_VALUE', /outside int8 range -128 to 127/);
      refused({ mode: 8 }, 'NINES_ERR_INVALID_VALUE', /tag "mode" \(bits\): needs an integer from 0 to 7 \(3 bits\); got 8/);
      refused({ p: 1 }, 'NINES_ERR_INVALID_ARG', /read-only \(its scale comes from tag "sf"/);
    });
  });

  it('gives each a Sparkplug datatype: an enum its label\'s String, a scaled-from tag a Double', () => {
    const byName = Object.fromEntries(buildTags([
      H('a', 0, { type: 'bcd' }), H('b', 1, { type: 'lbcd' }), H('c', 3, { type: 'float16' }), H('d', 4, { type: 'int8', byte: 'low' }),
      H('e', 4, { type: 'uint8', byte: 'high' }), H('f', 5, { type: 'bits', bit: '0-3' }), H('g', 6, { enum: { 0: 'x' } }),
      H('h', 7, { scaleFrom: 'sf' }), H('sf', 8, { type: 'int16' }), H('i', 9, { type: 'bcd', scale: 0.1 })
    ], MODBUS).map((t) => [t.name, tagDatatype(t)]));
    assert.deepEqual(byName, { a: 'UInt16', b: 'UInt32', c: 'Float', d: 'Int8', e: 'UInt8', f: 'UInt16', g: 'String', h: 'Double', sf: 'Int16', i: 'Double' });
  });
});
