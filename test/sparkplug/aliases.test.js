'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { AliasMap, ALIAS_FILE } = require('../../gateway/runtime/sparkplug/aliases');

describe('Sparkplug aliases', () => {
  it('assigns 1, 2, 3… in the order metrics are first seen, the same alias every time after', () => {
    const a = new AliasMap();
    assert.equal(a.aliasOf(null, 'bdSeq'), 1);
    assert.equal(a.aliasOf('plc', 'temp'), 2);
    assert.equal(a.aliasOf('meter', 'temp'), 3, 'unique across the node and its devices');
    assert.equal(a.aliasOf('plc', 'temp'), 2);
    assert.deepEqual(a.metricOf(3), { device: 'meter', name: 'temp' });
    assert.deepEqual(a.metricOf(1), { device: null, name: 'bdSeq' });
    assert.equal(a.metricOf(4), null);
  });

  it('keeps the map across a restart in its folder, and never gives a saved alias to another metric', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-aliases-'));
    try {
      const a = new AliasMap({ dir });
      a.aliasOf(null, 'bdSeq');
      a.aliasOf('plc', 'gone');
      a.aliasOf('plc', 'temp');
      a.save();
      const b = new AliasMap({ dir });
      // a config that no longer has "gone" and adds "new": temp keeps 3, new gets 4, not 2
      assert.equal(b.aliasOf('plc', 'new'), 4);
      assert.equal(b.aliasOf('plc', 'temp'), 3);
      fs.writeFileSync(path.join(dir, ALIAS_FILE), '{not json');
      const errors = [];
      const c = new AliasMap({ dir, onError: (e) => errors.push(e) });
      assert.equal(errors[0].code, 'NINES_ERR_IO');
      assert.equal(c.aliasOf('plc', 'temp'), 1, 'a damaged map starts afresh');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
