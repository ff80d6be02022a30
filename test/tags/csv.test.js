'use strict';

const assert = require('node:assert/strict');
const { parseTagSheet, loadTagSheet } = require('../../gateway/tags/csv');

const MODBUS = { protocol: 'modbus+tcp' };

function refused (fn, check) {
  assert.throws(fn, (err) => {
    assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
    check(err);
    return true;
  });
}

describe('tags/csv: tag sheets as plants keep them', () => {
  it('reads a comma sheet with any column order and case, empty cells absent, comments skipped', () => {
    const tags = loadTagSheet('# boiler room\nName,Address,TABLE,type,order,scale,unit,deadband\nboiler_temp,100,holding,float32,CDAB,0.1,°C,0.2\npump_on,3,coil,,,,,\n', MODBUS);
    assert.deepEqual(tags.map((t) => [t.name, t.table, t.address, t.type, t.wordOrder, t.scale, t.unit, t.deadband]), [
      ['boiler_temp', 'holding', 100, 'float32', 'little', 0.1, '°C', 0.2],
      ['pump_on', 'coil', 3, 'bool', 'big', 1, null, null]
    ]);
  });

  it('reads semicolon sheets with decimal commas, tab sheets, a BOM and quoted cells', () => {
    const semi = loadTagSheet('\uFEFFname;table;address;scale;description\ntemp;input;7;0,01;"room; north"\n', MODBUS);
    assert.deepEqual([semi[0].scale, semi[0].description], [0.01, 'room; north']);
    const tab = loadTagSheet('name\ttable\taddress\treadOnly\nsp\tholding\t1\tyes\n', MODBUS);
    assert.equal(tab[0].readOnly, true);
  });

  it('names the line and column of a tag that breaks the tag rules, every one, in sheet order', () => {
    refused(() => loadTagSheet('name,table,address,type\na,holding,1,\nb,holding,1,\nc,holding,5,float128\n', MODBUS, 'plc1.csv'), (err) => {
      assert.match(err.message, /2 problems in plc1\.csv:\n {2}plc1\.csv line 3, column 3 \(address\): 1 overlaps tag "a"/);
      assert.match(err.message, /plc1\.csv line 4, column 4 \(type\): "float128" must be one of/);
      assert.deepEqual(err.details.problems.map((p) => [p.line, p.column, p.field]), [[3, 3, 'address'], [4, 4, 'type']]);
    });
  });

  it('names the line of a malformed sheet: an unclosed quote, a row longer than the header', () => {
    refused(() => parseTagSheet('name,table,address\nx,"holding,1\n'), (err) => {
      assert.equal(err.details.line, 2);
      assert.match(err.message, /line 2: a quote opened on this line is never closed/);
    });
    refused(() => parseTagSheet('name,table,address\nx,holding,1,4\n'), (err) => {
      assert.match(err.message, /line 2: has 4 cells, but the header names 3 columns/);
    });
  });

  it('names the column of a cell of the wrong kind, and an unknown header', () => {
    refused(() => parseTagSheet('name,table,address\nx,holding,ten\n'), (err) => {
      assert.deepEqual([err.details.line, err.details.column, err.details.field], [2, 3, 'address']);
      assert.match(err.message, /"ten" is not a whole number/);
    });
    refused(() => parseTagSheet('name,table,adress\n'), (err) => {
      assert.deepEqual([err.details.line, err.details.column], [1, 3]);
      assert.match(err.message, /"adress" is not a tag field/);
    });
    refused(() => parseTagSheet('name,table,readOnly\nx,coil,maybe\n'), (err) => assert.match(err.message, /column 3 \(readOnly\): "maybe" is not true or false/));
    refused(() => parseTagSheet('name,name\n'), (err) => assert.match(err.message, /"name" appears twice/));
    refused(() => loadTagSheet('name,table,address\n', MODBUS), (err) => assert.match(err.message, /holds a header but no tag/));
    refused(() => parseTagSheet(''), (err) => assert.match(err.message, /needs a header row/));
  });
});
