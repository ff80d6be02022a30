'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseBytes } = require('../../gateway/base/quantities');
const { ValueGate } = require('../../gateway/values/gate');
const { validateConfig } = require('../../gateway/runtime/config');
const { publisherOptions } = require('../../gateway/runtime/mqtt/publisher-options');
const { MemoryStore } = require('../../gateway/runtime/mqtt/message-store');

/** The small parts of store and forward: sizes, the spool's config, read times, the memory store. */

const base = {
  mqtt: { url: 'mqtt://127.0.0.1:1883' },
  devices: { plc: { target: 'modbus+tcp://127.0.0.1:5020' } },
  jobs: [{ name: 'hr', device: 'plc', read: { fc: 3, address: 0, quantity: 2 }, rate: '10/s' }]
};
const withSpool = (spool) => ({ ...base, mqtt: { ...base.mqtt, spool } });
const problems = (raw) => {
  try {
    validateConfig(raw, { baseDir: os.tmpdir() });
    return [];
  } catch (err) {
    return err.details.errors.map((e) => `${e.path}: ${e.value === undefined ? '' : `${JSON.stringify(e.value)} `}${e.rule}`);
  }
};

describe('store and forward: the small parts', () => {
  it('parseBytes reads bytes and sizes with decimal and binary units', () => {
    assert.equal(parseBytes(1048576), 1048576);
    assert.equal(parseBytes('1GB'), 1e9);
    assert.equal(parseBytes('512 MiB'), 512 * 1024 * 1024);
    assert.equal(parseBytes('1.5kb'), 1500);
    for (const bad of ['1 GB extra', '-1', 1.5, 'GB', '', null]) {
      assert.throws(() => parseBytes(bad, 'mqtt.spool.maxBytes'), (err) => err.code === 'NINES_ERR_INVALID_ARG' && err.message.startsWith('mqtt.spool.maxBytes'));
    }
  });

  it('mqtt.spool: dir relative to the config, maxBytes as a size, sync as a duration, with defaults', () => {
    const c = validateConfig(withSpool({ dir: 'spool', maxBytes: '1GB', sync: '250ms' }), { baseDir: '/var/lib/nines' });
    assert.deepEqual(c.mqtt.spool, { dir: '/var/lib/nines/spool', maxBytes: 1e9, syncIntervalMs: 250 });
    assert.deepEqual(publisherOptions(c).spool, { dir: '/var/lib/nines/spool', maxBytes: 1e9, syncIntervalMs: 250 });
    const d = validateConfig(withSpool({ dir: '/tmp/nines-spool' }));
    assert.deepEqual(d.mqtt.spool, { dir: '/tmp/nines-spool', maxBytes: 256e6, syncIntervalMs: 100 });
    assert.equal(validateConfig(base).mqtt.spool, null);
  });

  it('mqtt.spool problems name the field, the value and the rule', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'nines-cfg-')), 'not-a-folder');
    fs.writeFileSync(file, '');
    assert.deepEqual(problems(withSpool({ dir: file, maxBytes: '1 lot', sync: 'soon' })), [
      `mqtt.spool.dir: "${file}" is not a folder: ${file}`,
      'mqtt.spool.maxBytes: "1 lot" is not a size; use e.g. "1GB", "512MiB" or a number of bytes',
      'mqtt.spool.sync: "soon" is not a duration; use e.g. "500ms", "10s", "2m" or a number of milliseconds'
    ]);
    assert.deepEqual(problems(withSpool({ dir: '/tmp/x', maxBytes: 1000 })), ['mqtt.spool.maxBytes: 1000 must be at least 1048576 bytes (1MiB)']);
    assert.match(problems(withSpool({ maxBytes: '1GB' }))[0], /^mqtt\.spool\.dir: is required/);
    assert.match(problems(withSpool({ dir: '/tmp/x', size: 1 }))[0], /^mqtt\.spool\.size: /);
  });

  it('a value carries the time it was read, not the time it left the rate cap', async () => {
    let now = 1000;
    const out = [];
    const gate = new ValueGate({ mode: 'on-change', minIntervalMs: 50, nowMs: () => now, emit: (v, info) => out.push([v, info.ts]) });
    gate.offer(1); // at once, read at 1000
    now = 1010;
    gate.offer(2); // held by the cap, read at 1010
    now = 1060;
    gate.close(); // leaves at 1060
    assert.deepEqual(out, [[1, 1000], [2, 1010]]);
  });

  it('the memory store hands out in order, takes back what was not acknowledged, and counts what it drops', () => {
    const drops = [];
    const s = new MemoryStore({ maxItems: 3, maxBytes: Infinity, onDrop: (kind, job, n) => drops.push([kind, job, n]) });
    const msg = (i) => ({ kind: 'value', job: 'j', bytes: 1, i });
    for (let i = 0; i < 4; i++) s.push(msg(i));
    assert.deepEqual(drops, [['value', 'j', 1]]);
    const a = s.next();
    const b = s.next();
    s.rewind([a, b]);
    assert.deepEqual([s.next().i, s.next().i, s.next().i], [1, 2, 3]);
    assert.equal(s.close([msg(9)]), 1);
    assert.equal(drops.length, 2);
  });
});
