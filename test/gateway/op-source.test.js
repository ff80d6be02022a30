'use strict';

const assert = require('node:assert/strict');
const { createOpSource, templateOf } = require('../../gateway/jobs/op-source');

describe('op source', () => {
  it('validates an ASCII command once and hands out the same command', () => {
    const s = createOpSource({ command: '@01' }, 'ascii://127.0.0.1:9500');
    assert.equal(s.kind, 'ascii');
    assert.equal(s.label, '@AA');
    assert.equal(s.nextOp(0), '@01');
    assert.equal(s.nextOp(1), '@01');
  });

  it('builds a generator for the target address', () => {
    const s = createOpSource({ generator: '@AA(Data)' }, 'ascii://127.0.0.1:9500?address=0A');
    assert.match(s.nextOp(0), /^@0A[0-9A-F]{4}$/);
    assert.equal(s.label, '@AA(Data)');
  });

  it('labels a generator given by its alias with its vendor name', () => {
    const { GENERATORS } = require('../../gateway/drivers/ascii');
    assert.ok(GENERATORS.length >= 5);
    for (const g of GENERATORS) {
      assert.equal(createOpSource({ generator: g.alias }, 'ascii://127.0.0.1:9500').label, g.name, g.alias);
      assert.equal(createOpSource({ generator: g.name }, 'ascii://127.0.0.1:9500').label, g.name);
    }
  });

  it('accepts Modbus ops as objects or strings and defaults the unit id to the target\'s', () => {
    const a = createOpSource({ read: '3:0:10' }, 'modbus+tcp://127.0.0.1:5020?unitId=2');
    assert.deepEqual({ ...a.nextOp(0) }, { fc: 3, address: 0, quantity: 10, unitId: 2 });
    assert.equal(a.label, 'fc3-0+10');
    const b = createOpSource({ read: { fc: 4, address: 5, quantity: 2 } }, 'modbus+tcp://127.0.0.1:5020');
    assert.equal(b.nextOp(0).unitId, 1);
    const w = createOpSource({ write: '16:0=1,2,3' }, 'modbus+tcp://127.0.0.1:5020');
    assert.equal(w.label, 'fc16-0+3');
  });

  it('labels a Modbus operation so it cannot be read as hex, and so it can name a file anywhere', () => {
    for (const [read, label] of [['3:0:10', 'fc3-0+10'], ['4:16:2', 'fc4-16+2'], ['1:100:8', 'fc1-100+8']]) {
      const s = createOpSource({ read }, 'modbus+tcp://127.0.0.1:5020');
      assert.equal(s.label, label);
      assert.doesNotMatch(s.label, /0x/, 'no hex look-alike');
      // the characters the probe keeps in .hgrm file names (gateway/measure/probe.js), none of Windows' reserved ones
      assert.match(s.label, /^[A-Za-z0-9@#$%~()+._-]+$/);
    }
  });

  it('rejects mismatches with codes: read given a write, ASCII op on Modbus, none or two ops', () => {
    assert.throws(() => createOpSource({ read: '6:0=1' }, 'modbus+tcp://h'), { code: 'NINES_ERR_INVALID_OP' });
    assert.throws(() => createOpSource({ command: '@01' }, 'modbus+tcp://h'), { code: 'NINES_ERR_INVALID_ARG' });
    assert.throws(() => createOpSource({ read: '3:0:1' }, 'ascii://h'), { code: 'NINES_ERR_INVALID_ARG' });
    assert.throws(() => createOpSource({}, 'ascii://h'), { code: 'NINES_ERR_INVALID_ARG' });
    assert.throws(() => createOpSource({ command: '@01', generator: '@AA' }, 'ascii://h'), { code: 'NINES_ERR_INVALID_ARG' });
    assert.throws(() => createOpSource({ command: '@1' }, 'ascii://h'), { code: 'NINES_ERR_INVALID_COMMAND' });
  });

  it('names a run like the vendor does: the address becomes AA', () => {
    assert.equal(templateOf('@01'), '@AA');
    assert.equal(templateOf('#0100FF'), '#AA00FF');
    assert.equal(templateOf('~**'), '~**');
  });
});
