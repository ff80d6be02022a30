'use strict';

const assert = require('node:assert/strict');
const { validateConfig } = require('../../gateway/runtime/config');
const { planReload } = require('../../gateway/runtime/reload');

const TAG = { name: 't1', table: 'holding', address: 0, type: 'int16' };
const base = (sparkplug, jobs) => ({
  gateway: { id: 'gw1' },
  mqtt: sparkplug === undefined ? {} : { sparkplug },
  devices: { plc1: { target: 'modbus+tcp://127.0.0.1:5020?unitId=1', tags: { a: [TAG] } } },
  jobs: jobs || [{ name: 'j1', device: 'plc1', tags: 'a', rate: '1/s' }]
});
const problems = (obj) => {
  try {
    validateConfig(obj, { env: {} });
  } catch (err) {
    assert.equal(err.code, 'NINES_ERR_CONFIG');
    return err.details.errors.map((e) => `${e.path}: ${e.rule}`);
  }
  return [];
};

describe('config: mqtt.sparkplug', () => {
  it('is off when omitted, and fills in the node (gateway.id), its own client id and writes off', () => {
    assert.equal(validateConfig(base(undefined), { env: {} }).mqtt.sparkplug, null);
    const off = { primaryHost: null, hold: { maxMessages: 100000, maxBytes: 64 * 1024 * 1024 }, templates: false };
    assert.deepEqual(validateConfig(base({ group: 'plant' }), { env: {} }).mqtt.sparkplug, { group: 'plant', node: 'gw1', clientId: 'nines-gw1-sparkplug', writes: false, ...off });
    assert.deepEqual(validateConfig(base({ group: 'plant', node: 'Edge 1', clientId: 'sp', writes: true }), { env: {} }).mqtt.sparkplug, { group: 'plant', node: 'Edge 1', clientId: 'sp', writes: true, ...off });
  });

  it('takes a primary host, the hold\'s bounds and templates, and names the field of a wrong one', () => {
    const sp = validateConfig(base({ group: 'g', primaryHost: 'scada-1', hold: { maxMessages: 500, maxBytes: '2MiB' }, templates: true }), { env: {} }).mqtt.sparkplug;
    assert.equal(sp.primaryHost, 'scada-1');
    assert.deepEqual(sp.hold, { maxMessages: 500, maxBytes: 2 * 1024 * 1024 });
    assert.equal(sp.templates, true);
    const got = problems(base({ group: 'g', primaryHost: 'a/b', hold: { maxMessages: 0, maxBytes: '1kB', other: 1 }, templates: 'yes' }));
    assert.match(got.find((p) => p.startsWith('mqtt.sparkplug.primaryHost')), /without \/ \+ #/);
    assert.match(got.find((p) => p.startsWith('mqtt.sparkplug.hold.maxMessages')), /integer from 1 to 10000000/);
    assert.match(got.find((p) => p.startsWith('mqtt.sparkplug.hold.other')), /not a known key/);
    assert.match(got.find((p) => p.startsWith('mqtt.sparkplug.templates')), /must be true or false/);
    assert.match(problems(base({ group: 'g', hold: { maxBytes: '1kB' } }))[0], /^mqtt\.sparkplug\.hold\.maxBytes: must be at least 1048576 bytes/);
  });

  it('names the field and the rule of every wrong id, key or client id', () => {
    const got = problems(base({ group: 'a/b', node: 'x#', clientId: 'nines-gw1', extra: 1 }));
    assert.equal(got.length, 4, got.join('\n'));
    assert.match(got.find((p) => p.startsWith('mqtt.sparkplug.group')), /without \/ \+ #/);
    assert.match(got.find((p) => p.startsWith('mqtt.sparkplug.node')), /without \/ \+ #/);
    assert.match(got.find((p) => p.startsWith('mqtt.sparkplug.clientId')), /must differ from the client id of the gateway's publisher/);
    assert.match(got.find((p) => p.startsWith('mqtt.sparkplug.extra')), /not a known key/);
    assert.match(problems(base({ node: 'n' }))[0], /^mqtt\.sparkplug\.group: is required/);
    assert.match(problems(base({ group: 'g', writes: 'yes' }))[0], /^mqtt\.sparkplug\.writes: must be true or false/);
  });

  it('refuses two different tags of one name on one device, since they would be one metric', () => {
    const jobs = [
      { name: 'j1', device: 'plc1', tags: 'a', rate: '1/s' },
      { name: 'j2', device: 'plc1', tags: [{ ...TAG, address: 5 }], rate: '1/s' },
      { name: 'j3', device: 'plc1', tags: 'a', rate: '5/s' }
    ];
    assert.deepEqual(problems(base({ group: 'g' }, jobs)), ['jobs[1].tags: names a tag other than the "t1" of job "j1" on device "plc1"; with mqtt.sparkplug a device\'s tags are one metric set, so a name must mean one tag (rename one, or read the same tag)']);
    assert.deepEqual(problems(base(undefined, jobs)), [], 'without Sparkplug the jobs are separate topics');
  });

  it('is part of mqtt, so a reload that changes it is refused and changes nothing', () => {
    const a = validateConfig(base({ group: 'g' }), { env: {} });
    const b = validateConfig(base({ group: 'h' }), { env: {} });
    assert.throws(() => planReload({ config: a, devices: [], jobs: [] }, { config: b, devices: [], jobs: [] }), (e) => e.code === 'NINES_ERR_CONFIG' && /mqtt/.test(e.message));
  });
});
