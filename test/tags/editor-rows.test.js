'use strict';

/**
 * The editor's tag rows (resources/nines-tag-rows.js, run here in Node without a DOM) against the
 * runtime (gateway/tags): the same tag rows, from a CSV tag sheet and as a list in a flow, go the
 * editor's way (a row's fields shown, saved at Done, read by the node at deploy) and the runtime's
 * way (the sheet parsed and checked, the list checked); the tags and the problems must be the same.
 * Issue 21: a sheet row `level,holding,1,INT,,,0.1,%` lost its scale in the dialog (a value 10x too
 * large, with quality ok).
 */

const assert = require('node:assert/strict');
const Rows = require('../../resources/nines-tag-rows');
const { schema } = require('../../nodes/lib/tag-admin');
const { rawTags } = require('../../nodes/lib/tag-list');
const { checkTags, parseTagSheet, readTag } = require('../../gateway/tags');
const { MODBUS, ASCII, SHEETS, LISTS, protocolOf } = require('../fixtures/tag-rows');

/** What a tag list means to the runtime: its checked tags and every problem, by path */
function runtime (list, ctx) {
  const { tags, problems } = checkTags(list, ctx);
  return { tags, problems: problems.map((p) => ({ path: p.path.join('.'), rule: p.rule })) };
}

/** The editor's way: each tag becomes a row, saved unedited at Done, and read by the node at deploy (rawTags) */
function throughEditor (list, ctx) {
  const s = schema();
  const p = protocolOf(ctx);
  const saved = list.map((tag) => Rows.tagOf(Rows.texts(tag, s, p), tag, s, p));
  // node.tags is stored as JSON in the flow
  return runtime(rawTags(JSON.parse(JSON.stringify(saved))), ctx);
}

describe('editor tag rows against the runtime (issue 21)', () => {
  for (const c of SHEETS) {
    it(`a CSV sheet gives the same tags and problems in the editor as in the runtime: ${c.what}`, () => {
      const { tags } = parseTagSheet(c.text);
      assert.deepEqual(throughEditor(tags, c.ctx), runtime(tags, c.ctx));
    });
  }

  for (const c of LISTS) {
    it(`a list gives the same tags and problems in the editor as in the runtime: ${c.what}`, () => {
      assert.deepEqual(throughEditor(c.list, c.ctx), runtime(rawTags(c.list), c.ctx));
    });
  }

  it('keeps the issue\'s scale: level reads 1012 × 0.1 at holding 1, as an int16', () => {
    const { tags } = parseTagSheet(SHEETS[0].text);
    const { tags: deployed } = throughEditor(tags, MODBUS);
    assert.deepEqual(deployed.map((t) => [t.name, t.table, t.address, t.type, t.scale, t.offset, t.unit]), [['level', 'holding', 1, 'int16', 0.1, 0, '%']]);
  });

  it('takes a number typed into a field as the runtime takes the same text in a flow (the address aside: typed, it is the number)', () => {
    const s = schema();
    const texts = ['0.1', ' 2 ', '1e-1', '.5', '-3', '+4', '0,1', '0x10', '1.', 'abc'];
    for (const field of ['bit', 'length', 'scale', 'offset', 'deadband']) {
      for (const text of texts) {
        const given = { name: 'x', table: 'holding', address: 0, type: 'int16' };
        const now = { ...Rows.texts(given, s, 'modbus'), [field]: text };
        const saved = Rows.tagOf(now, given, s, 'modbus');
        const flow = rawTags([{ ...given, [field]: text }]);
        assert.deepEqual(runtime(rawTags([saved]), MODBUS), runtime(flow, MODBUS), `${field} ${JSON.stringify(text)}`);
      }
    }
    const given = { name: 'x', table: 'holding', address: '40101' };
    const retyped = Rows.tagOf({ ...Rows.texts(given, s, 'modbus'), address: '40103' }, given, s, 'modbus');
    assert.equal(retyped.address, 40103);
    assert.equal(Rows.tagOf(Rows.texts(given, s, 'modbus'), given, s, 'modbus').address, '40101', 'unedited, it stays the Modicon reference');
  });

  it('offers each table and type the fields the runtime takes: a value in any other field is refused by the runtime', () => {
    const s = schema();
    const samples = { order: 'CDAB', bit: 1, byte: 'high', length: 2, scale: 0.5, offset: 1, deadband: 1 };
    // the fields a type cannot do without: a bit, a range of bits, a byte, a length
    const needs = { bit: { bit: 1 }, bits: { bit: '0-3' }, int8: { byte: 'low' }, uint8: { byte: 'low' }, string: { length: 2 } };
    for (const [protocol, ctx] of [['modbus', MODBUS], ['ascii', ASCII]]) {
      for (const [table, info] of Object.entries(s.protocols[protocol].tables)) {
        for (const type of info.types) {
          const takes = Rows.takes(s, protocol, table, type);
          const base = { name: 'x', table, address: 0, type, ...needs[type] };
          assert.deepEqual(runtime([base], ctx).problems, [], `${table} ${type}`);
          for (const f of Rows.OPTIONAL) {
            const refused = runtime([{ ...base, [f]: samples[f] }], ctx).problems.length > 0;
            assert.equal(refused, !takes.includes(f), `${protocol} ${table} ${type}: ${f}`);
            assert.equal(Rows.emptied(s, protocol, table, type).includes(f), !takes.includes(f));
          }
        }
      }
    }
  });

  it('shows a field that holds a value whatever the table and type; an empty one as the runtime\'s reading says', () => {
    const s = schema();
    const given = { name: 'x', table: 'HR', address: 0, type: 'INT', deadband: 0.5 };
    const now = Rows.texts(given, s, 'modbus');
    // the schema knows neither spelling; the runtime reads them as holding / int16
    assert.equal(Rows.takes(s, 'modbus', now.table, now.type), null);
    assert.deepEqual(Rows.visible(now, null), { order: false, bit: false, byte: false, length: false, scale: false, offset: false, deadband: true });
    const reading = readTag(given, MODBUS);
    assert.deepEqual([reading.table, reading.type], ['holding', 'int16']);
    assert.deepEqual(Rows.visible(now, reading.fields), { order: true, bit: false, byte: false, length: false, scale: true, offset: true, deadband: true });
  });

  it('names the tags a sheet appended to a list would repeat, as the runtime refuses them (names exactly as spelled)', () => {
    const list = [{ name: 'level', table: 'holding', address: 1 }, { name: 'pump', table: 'coil', address: 0 }];
    const sheet = [{ name: 'Level', table: 'holding', address: 5 }, { name: 'pump', table: 'coil', address: 3 }, { name: 'pump', table: 'coil', address: 4 }, { name: 'flow', table: 'holding', address: 9 }];
    assert.deepEqual(Rows.repeatedNames(list, sheet), ['pump']);
    // the runtime agrees: "Level" is another name, "pump" a repeated one
    const { problems } = checkTags([...list, sheet[0], sheet[1]], MODBUS);
    assert.deepEqual(problems.map((p) => [p.path.join('.'), p.value]), [['3.name', 'pump']]);
    assert.deepEqual(Rows.repeatedNames(list, [sheet[0], sheet[3]]), []);
  });
});
