'use strict';

/**
 * The editor's tag endpoints on the admin API (nodes/lib/tag-admin.js): the core's problems with
 * their paths for a tag list, a CSV tag sheet parsed into rows with each problem's line and column,
 * a malformed sheet's line and column, and the tables and types the dialog offers.
 */

const assert = require('node:assert/strict');
const { helper, withModbusSim } = require('./harness');
const deviceNode = require('../../nodes/nines-modbus-device');
const pollNode = require('../../nodes/nines-poll');

describe('tag endpoints of the editor', function () {
  let sim;
  withModbusSim(() => sim, (s) => { sim = s; });

  beforeEach(() => helper.load([deviceNode, pollNode], [
    { id: 'dev', type: 'nines-modbus-device', transport: 'tcp', host: '127.0.0.1', port: sim.port, unitId: 1 }
  ]));

  const post = (path, body) => helper.request().post(path).send(body).expect('Content-Type', /json/);

  it('gives every problem of a list with its path, the value and the rule; nothing for a good list but its reads', async () => {
    const bad = await post('/nines-tags/check', {
      protocol: 'modbus',
      tags: [
        { name: 'a', table: 'holding', address: 0, type: 'float32' },
        { name: 'b', table: 'holding', address: 1 },
        { name: 'a', table: 'coil', address: 5 },
        { name: 'c', table: 'holding', address: 5, type: 'float128' },
        { name: 'd', table: 'holding', address: 9, type: 'string', length: 200 },
        { name: 'e', table: 'coil', address: 70000 }
      ]
    }).expect(200);
    const paths = bad.body.problems.map((p) => p.path.join('.')).sort();
    assert.deepEqual(paths, ['1.address', '2.name', '3.type', '4.length', '5.address'].sort());
    const p = bad.body.problems.find((x) => x.path.join('.') === '5.address');
    assert.equal(p.value, 70000);
    assert.match(p.rule, /0 to 65535/);
    // in plain words, by the row the dialog shows (from 1), the value last
    assert.match(p.text, /^row 6, address: must be an integer from 0 to 65535 .*; got 70000$/);

    const good = await post('/nines-tags/check', { protocol: 'modbus', tags: [{ name: 'a', table: 'holding', address: 0, type: 'float32' }, { name: 'b', table: 'coil', address: 1 }] }).expect(200);
    assert.deepEqual(good.body, {
      count: 2,
      problems: [],
      reads: 2,
      writable: 2,
      rows: [{ table: 'holding', type: 'float32', fields: ['order', 'wordOrder', 'byteOrder', 'scale', 'offset', 'deadband', 'scaleFrom'] }, { table: 'coil', type: 'bool', fields: [] }],
      addressBase: 0
    });
  });

  it('says an empty field "is required" (not "nothing must be"), a list problem of the list, and what a write can write', async () => {
    const res = await post('/nines-tags/check', { protocol: 'modbus', tags: [{ table: 'holding', address: 0 }, { name: 'b', table: 'holding' }] }).expect(200);
    assert.deepEqual(res.body.problems.map((p) => p.text), [
      'row 1, name: is required; it must start with a letter or _ and hold 1-128 letters, digits, _ . - or /, and not be __proto__',
      'row 2, address: is required; it must be an integer from 0 to 65535 (the 0-based protocol address), or a Modicon reference such as "40101"'
    ]);
    const empty = await post('/nines-tags/check', { protocol: 'modbus', tags: [] }).expect(200);
    assert.deepEqual(empty.body.problems.map((p) => p.text), ['the tag list: must hold at least one tag']);
    const mixed = await post('/nines-tags/check', { protocol: 'modbus', tags: [{ name: 'a', table: 'holding', address: 0 }, { name: 'b', table: 'input', address: 0 }] }).expect(200);
    assert.equal(mixed.body.writable, 1, 'an input register is not written');
  });

  it('gives each row as the core reads it, aliases and IEC names resolved, whatever else is wrong with it', async () => {
    const res = await post('/nines-tags/check', {
      protocol: 'modbus',
      tags: [
        { name: 'level', table: 'HR', address: 1, type: 'INT', scale: 0.1 },
        { address: '30001', type: 'bit', bit: 99 },
        { name: 'x', table: 'holding', address: 2, type: 'float128' },
        { name: 'y', table: 'nowhere', address: 3 }
      ]
    }).expect(200);
    assert.deepEqual(res.body.rows, [
      { table: 'holding', type: 'int16', fields: ['order', 'wordOrder', 'byteOrder', 'scale', 'offset', 'deadband', 'enum', 'scaleFrom'] },
      { table: 'input', type: 'bit', fields: ['bit'] },
      null,
      null
    ]);
  });

  it('checks against the protocol of the device: ASCII tables on an ED device', async () => {
    const res = await post('/nines-tags/check', { protocol: 'ascii', tags: [{ name: 'door', table: 'input', address: 8 }, { name: 'x', table: 'holding', address: 0 }] }).expect(200);
    assert.deepEqual(res.body.problems.map((p) => p.path.join('.')), ['0.address', '1.table']);
  });

  it('uses a deployed device\'s request limits', async () => {
    // the device node deployed here has the protocol's limits: a 125-register string passes, 126 not
    const res = await post('/nines-tags/check', { protocol: 'modbus', device: 'dev', tags: [{ name: 's', table: 'holding', address: 0, type: 'string', length: 126 }] }).expect(200);
    assert.deepEqual(res.body.problems.map((p) => p.path.join('.')), ['0.length']);
  });

  it('parses a CSV tag sheet into rows, each problem with its line and column', async () => {
    const text = [
      '# plant IO list',
      'name;table;address;type;order;scale;unit',
      'boiler_temp;holding;100;float32;CDAB;0,1;°C',
      'pump_on;coil;3;;;;',
      'bad;holding;70000;int16;;;'
    ].join('\n');
    const res = await post('/nines-tags/sheet', { protocol: 'modbus', text }).expect(200);
    assert.equal(res.body.tags.length, 3);
    assert.deepEqual(res.body.tags[0], { name: 'boiler_temp', table: 'holding', address: 100, type: 'float32', order: 'CDAB', scale: 0.1, unit: '°C' });
    assert.deepEqual(res.body.tags[1], { name: 'pump_on', table: 'coil', address: 3 });
    assert.equal(res.body.problems.length, 1);
    const p = res.body.problems[0];
    assert.deepEqual([p.line, p.column, p.field, p.path], [5, 3, 'address', [2, 'address']]);
    assert.match(p.text, /^line 5, column 3 \(address\): must be an integer .*; got 70000$/);
  });

  for (const [what, text, line, column] of [
    ['an unclosed quote', 'name,table,address\n"pump,coil,3\n', 2, undefined],
    ['a row with more cells than the header', 'name,table,address\npump,coil,3,extra\n', 2, undefined],
    ['a column that is not a tag field', 'name,table,adress\npump,coil,3\n', 1, 3],
    ['a number that is not one', 'name,table,address\npump,coil,three\n', 2, 3]
  ]) {
    it(`gives the line${column ? ' and column' : ''} of a malformed sheet: ${what}, and no rows`, async () => {
      const res = await post('/nines-tags/sheet', { protocol: 'modbus', text }).expect(200);
      assert.equal(res.body.tags, undefined);
      assert.equal(res.body.error.code, 'NINES_ERR_INVALID_ARG');
      assert.equal(res.body.error.line, line);
      assert.equal(res.body.error.column, column);
      assert.match(res.body.error.message, new RegExp(`line ${line}`));
    });
  }

  it('refuses a request without a protocol with a 400 and a coded error', async () => {
    const res = await post('/nines-tags/check', { tags: [] }).expect(400);
    assert.equal(res.body.error.code, 'NINES_ERR_INVALID_ARG');
  });

  it('offers the tables of each protocol with their types, the default type first', async () => {
    const res = await helper.request().get('/nines-tags/schema').expect(200);
    const { modbus, ascii } = res.body.protocols;
    assert.deepEqual(Object.keys(modbus.tables), ['coil', 'discrete', 'holding', 'input']);
    assert.deepEqual(Object.keys(ascii.tables), ['input', 'output', 'counter', 'analog']);
    assert.equal(modbus.tables.holding.types[0], 'uint16');
    assert.ok(modbus.tables.holding.types.includes('bit') && modbus.tables.holding.types.includes('string'));
    assert.deepEqual(modbus.tables.coil.types, ['bool']);
    assert.deepEqual(ascii.tables.counter.types, ['uint32']);
    assert.equal(ascii.tables.output.max, 7);
    assert.deepEqual(Object.keys(res.body.orders), ['ABCD', 'CDAB', 'BADC', 'DCBA']);
    // the fields each table and type take (tags/spec.js tagFields), so the dialog needs no rule of its own
    assert.deepEqual(modbus.tables.holding.fields.string, ['order', 'wordOrder', 'byteOrder', 'length']);
    assert.deepEqual(ascii.tables.counter.fields.uint32, ['scale', 'offset', 'deadband']);
    assert.deepEqual(ascii.tables.input.fields.bool, []);
  });
});
