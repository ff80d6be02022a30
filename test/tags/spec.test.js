'use strict';

const assert = require('node:assert/strict');
const { checkTags, buildTags, tagConflicts } = require('../../gateway/tags/spec');
const { NinesError } = require('../../gateway/base/errors');

const MODBUS = { protocol: 'modbus+tcp' };
const ASCII = { protocol: 'ascii' };

/** The problems of a list as [path, rule-fragment] pairs, path written as `[i].field` */
function problemsOf (list, ctx = MODBUS) {
  return checkTags(list, ctx).problems.map((p) => [p.path.map((s) => (typeof s === 'number' ? `[${s}]` : `.${s}`)).join(''), p.rule]);
}

function expectProblem (list, path, re, ctx) {
  const found = problemsOf(list, ctx);
  assert.ok(found.some(([p, rule]) => p === path && re.test(rule)), `expected ${path} ${re}; got ${JSON.stringify(found)}`);
}

describe('tags/spec: a tag list is checked once, every problem with its path', () => {
  it('normalizes a Modbus tag: table aliases, type defaults, orders, scale and unit', () => {
    const [t, c, b] = buildTags([
      { name: 'boiler_temp', table: 'HR', address: 100, type: 'REAL', order: 'cdab', scale: 0.1, unit: '°C', deadband: 0.2 },
      { name: 'pump_on', table: 'coils', address: 3 },
      { name: 'running', table: 'holding', address: 10, type: 'bit', bit: 4 }
    ], MODBUS);
    assert.deepEqual(t, {
      name: 'boiler_temp', table: 'holding', address: 100, type: 'float32', bit: null, span: 2, wordOrder: 'little', byteOrder: 'big',
      scale: 0.1, offset: 0, unit: '°C', deadband: 0.2, readOnly: false, description: null
    });
    assert.equal(c.type, 'bool');
    assert.equal(c.table, 'coil');
    assert.equal(c.readOnly, false);
    // a bit of a register is written with FC22 mask write, which leaves the other 15 bits alone
    assert.equal(b.readOnly, false);
    assert.equal(b.span, 1);
  });

  it('spans registers by type: 64-bit values four, strings their length', () => {
    const tags = buildTags([
      { name: 'a', table: 'input', address: 0, type: 'uint64' },
      { name: 's', table: 'holding', address: 10, type: 'string', length: 8 },
      { name: 'd', table: 'holding', address: 20, type: 'LREAL' }
    ], MODBUS);
    assert.deepEqual(tags.map((t) => t.span), [4, 8, 4]);
    assert.equal(tags[0].readOnly, true); // input registers cannot be written
  });

  it('knows the ED-series tables of an ASCII device: lines, counters and analog channels', () => {
    const tags = buildTags([
      { name: 'door', table: 'input', address: 3 },
      { name: 'lamp', table: 'output', address: 0 },
      { name: 'parts', table: 'counter', address: 2, scale: 10 },
      { name: 'valve', table: 'analog', address: 1, unit: 'V' }
    ], ASCII);
    assert.deepEqual(tags.map((t) => [t.type, t.readOnly]), [['bool', true], ['bool', false], ['uint32', true], ['float64', false]]);
    expectProblem([{ name: 'x', table: 'holding', address: 1 }], '[0].table', /one of input, output, counter, analog on an ASCII device/, ASCII);
    expectProblem([{ name: 'x', table: 'output', address: 8 }], '[0].address', /from 0 to 7/, ASCII);
    expectProblem([{ name: 'x', table: 'analog', address: 4 }], '[0].address', /from 0 to 3/, ASCII);
  });

  it('refuses overlapping tags, naming the tag overlapped', () => {
    expectProblem([
      { name: 'a', table: 'holding', address: 100, type: 'float32' },
      { name: 'b', table: 'holding', address: 101 }
    ], '[1].address', /overlaps tag "a" \(holding 100-101\)/);
    // the same address in another table is another register
    assert.deepEqual(problemsOf([{ name: 'a', table: 'holding', address: 1 }, { name: 'b', table: 'input', address: 1 }]), []);
    // bits may sit on a register another tag reads (a status word and its named bits), not on one bit twice
    assert.deepEqual(problemsOf([{ name: 'w', table: 'holding', address: 5 }, { name: 'b0', table: 'holding', address: 5, type: 'bit', bit: 0 }]), []);
    expectProblem([{ name: 'b0', table: 'holding', address: 5, type: 'bit', bit: 0 }, { name: 'b1', table: 'holding', address: 5, type: 'bit', bit: 0 }],
      '[1].address', /overlaps tag "b0" \(bit 0 of holding 5\)/);
  });

  it('refuses unknown types, addresses out of range, strings longer than a request and duplicate names', () => {
    expectProblem([{ name: 'a', table: 'holding', address: 0, type: 'float128' }], '[0].type', /must be one of bit, int16/);
    expectProblem([{ name: 'a', table: 'holding', address: 65536 }], '[0].address', /from 0 to 65535/);
    expectProblem([{ name: 'a', table: 'holding', address: -1 }], '[0].address', /from 0 to 65535/);
    expectProblem([{ name: 'a', table: 'holding', address: 65535, type: 'float32' }], '[0].address', /within 65536/);
    expectProblem([{ name: 's', table: 'holding', address: 0, type: 'string', length: 40 }], '[0].length',
      /needs 40 registers, more than one request of this device reads \(maxRegistersPerRequest 32\)/, { protocol: 'modbus+tcp', maxRegistersPerRequest: 32 });
    expectProblem([{ name: 'a', table: 'coil', address: 0 }, { name: 'a', table: 'coil', address: 1 }], '[1].name', /unique/);
  });

  it('says which field a type needs or does not take', () => {
    expectProblem([{ name: 'a', table: 'holding', address: 0, type: 'bit' }], '[0].bit', /from 0 to 15/);
    expectProblem([{ name: 'a', table: 'holding', address: 0, bit: 3 }], '[0].bit', /only used with type bit/);
    expectProblem([{ name: 'a', table: 'holding', address: 0, type: 'string' }], '[0].length', /for type string/);
    expectProblem([{ name: 'a', table: 'holding', address: 0, type: 'bool' }], '[0].type', /type bit with bit: 0-15/);
    expectProblem([{ name: 'a', table: 'coil', address: 0, type: 'int16' }], '[0].type', /must be bool/);
    expectProblem([{ name: 'a', table: 'coil', address: 0, order: 'CDAB' }], '[0].order', /register values only/);
    expectProblem([{ name: 'a', table: 'coil', address: 0, deadband: 1 }], '[0].deadband', /numeric tags only/);
    expectProblem([{ name: 'a', table: 'holding', address: 0, scale: 0 }], '[0].scale', /other than 0/);
    expectProblem([{ name: 'a', table: 'holding', address: 0, order: 'ACBD' }], '[0].order', /ABCD, CDAB, BADC, DCBA/);
    expectProblem([{ name: 'a', table: 'holding', address: 0, order: 'CDAB', wordOrder: 'big' }], '[0].order', /cannot be combined/);
    expectProblem([{ name: 'a', table: 'input', address: 0, readOnly: false }], '[0].readOnly', /read-only table/);
    expectProblem([{ name: 'a', table: 'holding', address: 0, colour: 'red' }], '[0].colour', /not a tag field/);
    expectProblem([{ name: '1st', table: 'holding', address: 0 }], '[0].name', /start with a letter/);
  });

  it('reports every problem of a list at once, and buildTags throws them as one coded error', () => {
    const list = [{ name: 'a', table: 'holdin', address: 0 }, { name: 'b', table: 'holding', address: 'x' }, { name: 'c', table: 'holding', address: 1, type: 'f32' }];
    assert.equal(problemsOf(list).length, 3);
    assert.throws(() => buildTags(list, MODBUS, 'jobs[0].tags'), (err) => {
      assert.ok(err instanceof NinesError);
      assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
      assert.equal(err.details.field, 'jobs[0].tags[0].table');
      assert.equal(err.details.problems.length, 3);
      assert.match(err.message, /3 problems in jobs\[0\]\.tags:\n {2}jobs\[0\]\.tags\[0\]\.table: "holdin" must be one of coil/);
      return true;
    });
    assert.deepEqual(problemsOf('x').map((p) => p[0]), ['']);
    assert.deepEqual(problemsOf([]).map((p) => p[0]), ['']);
  });

  it('takes a list it built as it is, and checks lists joined from built tags for clashes only', () => {
    const a = buildTags([{ name: 'a', table: 'holding', address: 1 }], MODBUS);
    assert.equal(buildTags(a, MODBUS), a);
    const b = buildTags([{ name: 'b', table: 'holding', address: 2 }], MODBUS);
    assert.deepEqual(buildTags([...a, ...b], MODBUS).map((t) => t.name), ['a', 'b']);
    const clash = buildTags([{ name: 'c', table: 'holding', address: 1 }], MODBUS);
    assert.throws(() => buildTags([...a, ...clash], MODBUS), /overlaps tag "a"/);
    assert.deepEqual(tagConflicts([...a, ...a]).map((c) => c.field), ['name', 'address']);
  });

  it('reads data sheet addresses: Modicon references, and numbers counted from 1 where the device does', () => {
    const [hr, ir, co, di] = buildTags([
      { name: 'hr', address: '40101', type: 'float32' }, { name: 'ir', address: '300001' },
      { name: 'co', address: '00017' }, { name: 'di', table: 'discrete', address: '10002' }
    ], MODBUS);
    assert.deepEqual([hr.table, hr.address, ir.table, ir.address, co.table, co.address, di.address], ['holding', 100, 'input', 0, 'coil', 16, 1]);
    expectProblem([{ name: 'x', table: 'coil', address: '40001' }], '[0].address', /Modicon reference to the holding table, but table says coil/);
    expectProblem([{ name: 'x', address: '40000' }], '[0].address', /Modicon reference/);
    const [one] = buildTags([{ name: 'one', table: 'holding', address: 1 }], { protocol: 'modbus+tcp', addressBase: 1 });
    assert.equal(one.address, 0);
    expectProblem([{ name: 'x', table: 'holding', address: 0 }], '[0].address', /from 1 to 65536/, { protocol: 'modbus+tcp', addressBase: 1 });
  });

  it('gives tags that name no order the device\'s order', () => {
    const [a, b] = buildTags([{ name: 'a', table: 'holding', address: 0, type: 'float32' }, { name: 'b', table: 'holding', address: 2, type: 'float32', order: 'ABCD' }], { protocol: 'modbus+tcp', order: 'CDAB' });
    assert.deepEqual([a.wordOrder, a.byteOrder, b.wordOrder], ['little', 'big', 'big']);
  });

  it('survives a trip through postMessage as plain data', () => {
    const tags = buildTags([{ name: 'a', table: 'holding', address: 1, type: 'int64', unit: 'Wh' }], MODBUS);
    assert.deepEqual(structuredClone(tags), tags);
  });
});
