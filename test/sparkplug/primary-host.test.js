'use strict';

const assert = require('node:assert/strict');
const { stateTopics, parseState, PrimaryHostState } = require('../../gateway/runtime/sparkplug/primary-host');

describe('Sparkplug primary host STATE', () => {
  it('has the 3.0 topic and the 2.2 one', () => {
    assert.deepEqual(stateTopics('scada-1'), { v3: 'spBv1.0/STATE/scada-1', v22: 'STATE/scada-1' });
  });

  it('reads the 3.0 JSON and the 2.2 text, and nothing else', () => {
    assert.deepEqual(parseState(Buffer.from('{"online":true,"timestamp":1700000000000}')), { online: true, timestamp: 1700000000000 });
    assert.deepEqual(parseState(Buffer.from('{"online":false}')), { online: false, timestamp: null });
    assert.deepEqual(parseState(Buffer.from('ONLINE')), { online: true, timestamp: null });
    assert.deepEqual(parseState(Buffer.from('OFFLINE')), { online: false, timestamp: null });
    for (const bad of ['online', '{"online":"true"}', '[]', 'null', '', '{"online":true'.padEnd(2000, ' ')]) assert.equal(parseState(Buffer.from(bad)), null, bad);
  });

  it('ignores a 3.0 STATE older than the last one taken', () => {
    const s = new PrimaryHostState();
    assert.equal(s.take({ online: true, timestamp: 200 }), true);
    assert.equal(s.take({ online: false, timestamp: 100 }), false, 'a stale death certificate');
    assert.equal(s.online, true);
    assert.equal(s.ignored, 1);
    assert.equal(s.take({ online: false, timestamp: 300 }), true);
    assert.equal(s.take({ online: true, timestamp: null }), true, 'the 2.2 form has no timestamp');
  });
});
