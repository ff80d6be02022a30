'use strict';

const assert = require('node:assert/strict');
const { configCases, problemsOf } = require('./config-problems');
const { validateConfig } = require('../../gateway/runtime/config');
const { planReload } = require('../../gateway/runtime/reload');

/**
 * A meter whose measurements and nameplate sit side by side (holding 0-5 and 6-9): one job would
 * read them in one request; scan classes read them at their own rates. Each case breaks one thing.
 */
function base () {
  return {
    gateway: { id: 'edge-1' },
    mqtt: { url: 'mqtt://127.0.0.1:1883' },
    profiles: {
      meter: {
        tags: {
          measurements: [
            { name: 'voltage', table: 'holding', address: 0, type: 'float32' },
            { name: 'current', table: 'holding', address: 2, type: 'float32' },
            { name: 'power', table: 'holding', address: 4, type: 'float32' }
          ],
          nameplate: [
            { name: 'serial', table: 'holding', address: 6, type: 'string', length: 3 },
            { name: 'rating', table: 'holding', address: 9, type: 'uint16' }
          ]
        },
        scan: { fast: { rate: '10/s', tags: 'measurements' }, slow: { rate: '1/min', tags: ['nameplate'], values: 'every' } }
      }
    },
    devices: {
      plc: {
        target: 'modbus+tcp://127.0.0.1:5020?unitId=1',
        tags: {
          fast: [{ name: 'level', table: 'input', address: 0 }],
          slow: [{ name: 'hours', table: 'input', address: 1, type: 'uint32' }],
          spare: [{ name: 'spare', table: 'input', address: 3 }]
        },
        scan: { fast: { rate: '20/s', tags: 'fast' }, slow: { rate: '1/s', tags: ['slow'] } }
      },
      m0: { target: 'modbus+tcp://127.0.0.1:5020?unitId=2', profile: 'meter' },
      bus: { target: 'modbus+rtutcp://127.0.0.1:4001', profile: 'meter', units: { a: { unitId: 1 }, b: { unitId: 2, scan: { slow: { rate: '1/h', tags: 'nameplate' } } } } }
    },
    jobs: [{ name: 'spare', device: 'plc', tags: 'spare', rate: '1/s' }]
  };
}

const { expectOne } = configCases(base);

describe('gateway/config: scan classes, the tag groups of one device at their own rates', () => {
  it('makes one job per class, <device>.<class> and on a line <device>.<unit>.<class>, after the jobs written', () => {
    const c = validateConfig(base(), { env: {} });
    assert.deepEqual(c.jobs.map((j) => [j.name, j.device, j.unit, j.ratePerSec]), [
      ['spare', 'plc', null, 1],
      ['plc.fast', 'plc', null, 20],
      ['plc.slow', 'plc', null, 1],
      ['m0.fast', 'm0', null, 10],
      ['m0.slow', 'm0', null, 1 / 60],
      ['bus.a.fast', 'bus', 'a', 10],
      ['bus.a.slow', 'bus', 'a', 1 / 60],
      ['bus.b.fast', 'bus', 'b', 10],
      ['bus.b.slow', 'bus', 'b', 1 / 3600]
    ]);
    const job = (n) => c.jobs.find((j) => j.name === n);
    assert.equal(job('bus.b.fast').target.unitId, 2);
    assert.equal(job('m0.slow').values.mode, 'every');
    assert.equal(job('m0.fast').values.mode, 'on-change');
    assert.equal(job('m0.fast').policy, 'skip');
  });

  it('never merges reads across classes: registers side by side are read once per class, at its rate', () => {
    const c = validateConfig(base(), { env: {} });
    const plan = (n) => c.jobs.find((j) => j.name === n).plan.map((b) => [b.fc, b.address, b.quantity]);
    assert.deepEqual(plan('m0.fast'), [[3, 0, 6]]);
    assert.deepEqual(plan('m0.slow'), [[3, 6, 4]]);
    // the same tags in one job are one read: the classes are what keeps them apart
    const one = base();
    one.jobs.push({ name: 'all', device: 'm0', tags: ['measurements', 'nameplate'], rate: '1/s' });
    assert.deepEqual(validateConfig(one, { env: {} }).jobs.find((j) => j.name === 'all').plan.map((b) => [b.address, b.quantity]), [[0, 10]]);
  });

  it('a line\'s scan classes describe every unit that names no profile of its own; a unit\'s class of the same name wins', () => {
    const o = base();
    o.devices.bus.scan = { fast: { rate: '2/s', tags: 'measurements' } };
    const c = validateConfig(o, { env: {} });
    assert.deepEqual(c.jobs.filter((j) => j.device === 'bus').map((j) => [j.name, j.ratePerSec]),
      [['bus.a.fast', 2], ['bus.a.slow', 1 / 60], ['bus.b.fast', 2], ['bus.b.slow', 1 / 3600]]);
  });

  it('a config may have no jobs written when its devices have scan classes, but must poll something', () => {
    const o = base();
    delete o.jobs;
    assert.equal(validateConfig(o, { env: {} }).jobs.length, 8);
    const { errors } = problemsOf({ devices: { plc: { target: 'modbus+tcp://127.0.0.1:5020' } } });
    assert.deepEqual(errors.map((e) => e.path), ['jobs']);
    assert.match(errors[0].rule, /is required; list at least one job.*or give a device scan classes/);
  });

  it('names each problem of a class by its path, in the device or in the profile', () => {
    expectOne((o) => { o.devices.plc.scan.fast.tags = 'fats'; }, 'devices.plc.scan.fast.tags', /is not a tag group of device "plc" \(groups: fast, slow, spare\)/);
    expectOne((o) => { o.profiles.meter.scan.slow.tags = ['nameplate', 'extra']; }, 'profiles.meter.scan.slow.tags[1]', /is not a tag group of device "m0"/);
    expectOne((o) => { o.devices.plc.scan.slow.rate = 'often'; }, 'devices.plc.scan.slow.rate', /is not a rate/);
    expectOne((o) => { o.devices.plc.scan.slow.rate = '0/s'; }, 'devices.plc.scan.slow.rate', /must be more than 0/);
    expectOne((o) => { delete o.devices.plc.scan.slow.rate; }, 'devices.plc.scan.slow.rate', /is required/);
    expectOne((o) => { o.devices.plc.scan.slow.values = { mode: 'every', deadband: 1 }; }, 'devices.plc.scan.slow.values.deadband', /only used with mode: on-change/);
    expectOne((o) => { o.devices.plc.scan.slow.connections = 2; }, 'devices.plc.scan.slow.connections', /is not a known key/);
  });

  it('a tag group has one rate: a group in two classes is an error at the second', () => {
    expectOne((o) => { o.devices.plc.scan.slow.tags = ['slow', 'fast']; }, 'devices.plc.scan.slow.tags[1]', /is read by scan class "fast" already: a tag group has one rate/);
  });

  it('the job a class makes must have a name of its own', () => {
    expectOne((o) => { o.jobs[0].name = 'plc.fast'; }, 'devices.plc.scan.fast', /makes the job "plc.fast", which is already the name of jobs\[0\]/);
    expectOne((o) => { o.devices.plc.scan['a.b'] = { rate: '1/s', tags: 'spare' }; }, 'devices.plc.scan["a.b"]', /is not a scan class name/);
    expectOne((o) => { o.devices['d'.repeat(60)] = { target: 'modbus+tcp://127.0.0.1:5020', scan: { measure: { rate: '1/s', tags: 'x' } }, tags: { x: [{ name: 'x', table: 'coil', address: 0 }] } }; },
      `devices.${'d'.repeat(60)}.scan.measure`, /longer than 64 characters/);
  });

  it('a reload restarts only the class whose rate changed', () => {
    const before = validateConfig(base(), { env: {} });
    const o = base();
    o.profiles.meter.scan.slow.rate = '2/min';
    const after = validateConfig(o, { env: {} });
    const specs = (c) => ({ config: c, devices: Object.values(c.devices), jobs: c.jobs });
    const plan = planReload(specs(before), specs(after));
    // unit b has a slow class of its own
    assert.deepEqual(plan.jobs.changed, ['m0.slow', 'bus.a.slow']);
    assert.deepEqual(plan.jobs.kept, ['spare', 'plc.fast', 'plc.slow', 'm0.fast', 'bus.a.fast', 'bus.b.fast', 'bus.b.slow']);
    assert.deepEqual([plan.devicesRemoved, plan.jobs.added, plan.jobs.removed], [[], [], []]);
    // a class taken out is a job removed
    delete o.devices.plc.scan.slow;
    assert.deepEqual(planReload(specs(before), specs(validateConfig(o, { env: {} }))).jobs.removed, ['plc.slow']);
  });

  it('the jobs of scan classes count towards the job limit', () => {
    const o = base();
    o.jobs = Array.from({ length: 9999 }, (_, i) => ({ name: `j${i}`, device: 'plc', read: { fc: 3, address: 0, quantity: 1 }, rate: '1/s' }));
    const { errors } = problemsOf(o);
    assert.deepEqual(errors.map((e) => e.path), ['devices']);
    assert.match(errors[0].rule, /scan classes make 8 jobs, beside the 9999 written: at most 10000 per gateway/);
  });
});
