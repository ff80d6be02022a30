'use strict';

/**
 * A node's stored tag list → the raw tags the core checks (nodes/lib/tag-list.js): what the dialog
 * and hand-edited flow JSON hold, read the same way; a read node's reader key follows its tags.
 */

const assert = require('node:assert/strict');
const { rawTag, tagRead, badTags } = require('../../nodes/lib/tag-list');
const { buildDeviceSpec } = require('../../gateway/devices/spec');
const { parseTarget } = require('../../gateway/drivers/target');

describe('node tag lists', () => {
  it('reads numbers typed as text as numbers, and empty cells and nulls as absent fields', () => {
    assert.deepEqual(rawTag({ name: 'a', table: 'holding', address: 100, scale: ' 0.1 ', offset: '-5', deadband: '1e-1', unit: '', bit: null, readOnly: 'true' }),
      { name: 'a', table: 'holding', address: 100, scale: 0.1, offset: -5, deadband: 0.1, readOnly: true });
  });

  it('leaves an address given as text as it is: the core reads it as a Modicon reference, as in the YAML', () => {
    assert.deepEqual(rawTag({ name: 'a', address: '40101' }), { name: 'a', address: '40101' });
    const device = buildDeviceSpec({ name: 'd', target: parseTarget('modbus+tcp://127.0.0.1:502?unitId=1') });
    const { tags } = tagRead({ tags: [{ name: 'a', address: '40101' }] }, device, 'n1');
    assert.deepEqual([tags[0].table, tags[0].address], ['holding', 100]);
  });

  it('leaves what is not a number for the core to refuse, naming it', () => {
    assert.deepEqual(rawTag({ name: 'a', address: '0x10', length: 'ten', type: 'float32' }), { name: 'a', address: '0x10', length: 'ten', type: 'float32' });
    assert.equal(rawTag('not a tag'), 'not a tag');
  });

  it('keys a read node\'s reader by its id and its tags, so a changed list never meets the old plan', () => {
    const device = buildDeviceSpec({ name: 'd', target: parseTarget('modbus+tcp://127.0.0.1:502?unitId=1') });
    const one = tagRead({ tags: [{ name: 'a', table: 'holding', address: 0 }] }, device, 'n1');
    const same = tagRead({ tags: [{ name: 'a', table: 'holding', address: 0, scale: '1' }] }, device, 'n1');
    const moved = tagRead({ tags: [{ name: 'a', table: 'holding', address: 1 }] }, device, 'n1');
    assert.equal(one.key, same.key);
    assert.notEqual(one.key, moved.key);
    assert.match(one.key, /^n1:/);
    assert.deepEqual(one.plan.map((b) => [b.fc, b.address, b.quantity]), [[3, 0, 1]]);
  });

  it('names the tags a poll did not read and the first code', () => {
    assert.deepEqual(badTags({ a: 'ok', b: 'NINES_ERR_REPLY_TIMEOUT', c: 'NINES_ERR_MODBUS_EXCEPTION' }), { names: ['b', 'c'], code: 'NINES_ERR_REPLY_TIMEOUT' });
    assert.deepEqual(badTags({ a: 'ok' }), { names: [], code: null });
  });
});
