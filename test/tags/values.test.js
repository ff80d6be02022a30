'use strict';

const assert = require('node:assert/strict');
const { buildTags } = require('../../gateway/tags/spec');
const { tagComparer } = require('../../gateway/tags/values');
const { ValueGate } = require('../../gateway/values/gate');

const tags = buildTags([
  { name: 't', table: 'holding', address: 0, type: 'float32', deadband: 0.5 },
  { name: 'p', table: 'holding', address: 2 },
  { name: 'on', table: 'coil', address: 0 }
], { protocol: 'modbus+tcp' });

const poll = (t, p, on, q = {}) => ({ values: { t, p, on }, quality: { t: 'ok', p: 'ok', on: 'ok', ...q } });

describe('tags/values: a change is per tag, in engineering units, or a change of quality', () => {
  it('applies each tag its own deadband, and the job\'s to tags without one', () => {
    const { compare, changedNames } = tagComparer(tags, 2);
    assert.equal(compare(poll(20, 100, true), poll(20.4, 101, true)), false); // both within their bands
    assert.equal(compare(poll(20, 100, true), poll(20.6, 100, true)), true);
    assert.equal(compare(poll(20, 100, true), poll(20, 103, true)), true);
    assert.equal(compare(poll(20, 100, true), poll(20, 100, false)), true);
    assert.deepEqual(changedNames(poll(20, 100, true), poll(20.6, 101, false)), ['t', 'on']);
    assert.deepEqual(changedNames(undefined, poll(1, 2, true)), ['t', 'p', 'on']);
  });

  it('a tag that becomes unreadable is a change even when its value stays null', () => {
    const { compare } = tagComparer(tags);
    const bad = poll(null, 100, true, { t: 'NINES_ERR_REPLY_TIMEOUT' });
    assert.equal(compare(poll(20, 100, true), bad), true);
    assert.equal(compare(bad, bad), false);
  });

  it('drift adds up: the gate compares with what it last emitted, so slow steps are published once they pass the band', () => {
    const out = [];
    const { compare } = tagComparer(tags);
    const gate = new ValueGate({ mode: 'on-change', compare, emit: (v) => out.push(v.values.t) });
    for (const t of [20, 20.2, 20.4, 20.6, 20.8, 21.0, 21.2]) gate.offer(poll(t, 1, true));
    assert.deepEqual(out, [20, 20.6, 21.2]);
  });
});
