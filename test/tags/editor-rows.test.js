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
const { checkTags, parseTagSheet, tagContext, readTag } = require('../../gateway/tags');

const MODBUS = tagContext({ protocol: 'modbus+tcp' });
/** A device that counts addresses from 1 and orders words low first */
const MODBUS_1_CDAB = tagContext({ protocol: 'modbus+tcp' }, { addressBase: 1, order: 'CDAB' });
const ASCII = tagContext({ protocol: 'ascii', address: '01' });
const protocolOf = (ctx) => (ctx.protocol === 'ascii' ? 'ascii' : 'modbus');

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

const HEADER = 'name,table,address,type,order,offset,scale,unit';
const SHEETS = [
  { what: 'the issue\'s row: an IEC type name with a scale and a unit', ctx: MODBUS, text: `${HEADER}\nlevel,holding,1,INT,,,0.1,%\n` },
  {
    what: 'IEC names and other spellings, any case, with scale, offset and deadband',
    ctx: MODBUS,
    text: [
      'name,table,address,type,scale,offset,deadband',
      'a,holding,0,INT,0.1,,0.5', 'b,holding,1,Uint,0.01,-40,', 'c,holding,2,DINT,2,,1', 'd,holding,4,udint,,1.5,',
      'e,holding,6,REAL,0.1,,0.2', 'f,holding,8,LREAL,,,0.001', 'g,holding,12,WORD,0.5,,', 'h,holding,13,DWORD,10,,',
      'i,holding,15,LINT,0.1,,', 'j,holding,19,ULINT,,,', 'k,holding,23,Float,0.1,,', 'l,holding,25,double,,2,',
      'm,holding,29,Int16,0.1,,', 'n,input,0,uInt32,0.001,,', 'o,coil,0,BOOL,,,', 'p,discrete,0,Boolean,,,'
    ].join('\n')
  },
  {
    what: 'table aliases and spellings',
    ctx: MODBUS,
    text: ['name,table,address,type,scale', 'a,HR,0,INT,0.1', 'b,4x,1,,0.1', 'c,Holding Register,2,uint16,0.1', 'd,IR,0,int16,0.1',
      'e,input_register,1,REAL,0.1', 'f,CO,0,,', 'g,DI,0,,', 'h,Coils,1,,', 'i,discrete-inputs,1,,'].join('\n')
  },
  {
    what: 'word and byte order: letters in any case, wordOrder/byteOrder alone or together, on a CDAB device counting from 1',
    ctx: MODBUS_1_CDAB,
    text: ['name,table,address,type,order,wordOrder,byteOrder,scale', 'a,holding,1,float32,cdab,,,0.1', 'b,holding,3,REAL,,,little,',
      'c,holding,5,DINT,,big,,0.1', 'd,holding,7,int32,,little,little,', 'e,holding,9,uint32,,,,0.5', 'f,holding,11,int16,,,,',
      'g,holding,0,int16,,,,'].join('\n')
  },
  {
    what: 'strings, bits of a register and their misuse',
    ctx: MODBUS,
    text: ['name,table,address,type,bit,length,scale,deadband', 'a,holding,0,string,,4,,', 'b,holding,4,STRING,,2,,', 'c,holding,10,bit,15,,,',
      'd,holding,10,BIT,0,,,', 'e,holding,11,int16,3,,,', 'f,holding,12,uint16,,2,,', 'g,holding,13,string,,1,0.1,', 'h,coil,5,,,,,1',
      'i,holding,14,bit,16,,,'].join('\n')
  },
  {
    what: 'a semicolon sheet from a spreadsheet: BOM, decimal commas, quotes, comments, empty cells, readOnly and description',
    ctx: MODBUS,
    text: '\uFEFF# plant\nName;Table;Address;Type;Scale;Offset;Deadband;Unit;readOnly;Description\n' +
      'temp;input;7;INT;0,1;-40,5;0,2;"°C; abs";;"north; wall"\nsp;holding;0;REAL;;;;;yes;\npump;coil;3;;;;;;;\nflow;holding;2;udint;0,001;;;m³/h;no;\n'
  },
  {
    what: 'rows the runtime refuses: no name, an unknown type, a bad order, a scale of 0, a deadband on a bool',
    ctx: MODBUS,
    text: ['name,table,address,type,order,wordOrder,scale,deadband', ',holding,0,INT,,,0.1,', 'b,holding,1,float16,,,,', 'c,holding,2,REAL,XYZW,,,',
      'd,holding,4,REAL,,LITTLE,,', 'e,holding,6,INT,,,0,', 'f,coil,0,,,,,0.5', 'g,holding,7,REAL,ABCD,little,,'].join('\n')
  },
  {
    what: 'an ED-series module: lines, counters and analog channels, with scale and offset where they apply',
    ctx: ASCII,
    text: ['name,table,address,type,scale,offset,deadband,unit', 'door,input,0,,,,,', 'lamp,DO,7,BOOL,,,,', 'pulses,counter,3,,0.01,,1,m³',
      'valve,analog,0,,,-0.5,0.05,V', 'bad,input,8,,,,,', 'worse,counters,1,,0.1,,,', 'odd,input,1,,0.1,,,'].join('\n')
  }
];

const LISTS = [
  {
    what: 'a flow edited as JSON: Modicon addresses, numbers as text, empty and null fields',
    ctx: MODBUS,
    list: [
      { name: 'ref', address: '40101', type: 'INT', scale: '0.1', unit: '%' },
      { name: 'in', table: 'input', address: '30001', type: 'REAL', deadband: '0.5' },
      { name: 'co', address: '00010' },
      { name: 'plain', table: 'HR', address: 7, type: 'uint16', scale: 0.5, offset: null, deadband: '', unit: '' },
      { name: 'clash', table: 'coil', address: '40105' },
      { name: 'text_bit', table: 'holding', address: 8, type: 'bit', bit: '3' },
      { name: 'text_len', table: 'holding', address: 9, type: 'string', length: '2', description: 'lot' }
    ]
  },
  {
    what: 'a list with fields that do not apply and unknown keys',
    ctx: MODBUS_1_CDAB,
    list: [
      { name: 'a', table: 'holding', address: 1, type: 'bit', bit: 0, order: 'ABCD' },
      { name: 'b', table: 'coil', address: 1, scale: 2 },
      { name: 'c', table: 'holding', address: 2, Scale: 0.1 },
      { name: 'd', table: 'holding', address: 3, type: 'string', length: 2, wordOrder: 'little' },
      { name: 'e', table: 'holding', address: 5, type: 'LREAL', byteOrder: 'little', scale: '1e-3' }
    ]
  }
];

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
    const samples = { order: 'CDAB', bit: 1, length: 2, scale: 0.5, offset: 1, deadband: 1 };
    for (const [protocol, ctx] of [['modbus', MODBUS], ['ascii', ASCII]]) {
      for (const [table, info] of Object.entries(s.protocols[protocol].tables)) {
        for (const type of info.types) {
          const takes = Rows.takes(s, protocol, table, type);
          const base = { name: 'x', table, address: 0, type, ...(type === 'bit' ? { bit: 1 } : {}), ...(type === 'string' ? { length: 2 } : {}) };
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
    assert.deepEqual(Rows.visible(now, null), { order: false, bit: false, length: false, scale: false, offset: false, deadband: true });
    const reading = readTag(given, MODBUS);
    assert.deepEqual([reading.table, reading.type], ['holding', 'int16']);
    assert.deepEqual(Rows.visible(now, reading.fields), { order: true, bit: false, length: false, scale: true, offset: true, deadband: true });
  });
});
