'use strict';

const assert = require('node:assert/strict');
const { configCases } = require('./config-problems');
const { validateConfig } = require('../../gateway/runtime/config');
const { buildModel } = require('../../gateway/runtime/sparkplug/model');

/** A serial bus of two meters and a TCP gateway with a unit of its own; each case breaks one thing */
function base () {
  return {
    gateway: { id: 'edge-1' },
    mqtt: { url: 'mqtt://127.0.0.1:1883' },
    devices: {
      bus: {
        target: 'modbus+rtu:///dev/ttyUSB0?baudRate=19200&parity=even',
        order: 'CDAB',
        units: {
          meter1: { unitId: 1, tags: { energy: [{ name: 'kwh', table: 'input', address: 0, type: 'float32' }] } },
          meter2: { unitId: 2, order: 'ABCD', backoff: { min: '2s', max: '20s' }, tags: { energy: [{ name: 'kwh', table: 'input', address: 0, type: 'float32' }] } }
        }
      },
      gw: { target: 'modbus+tcp://127.0.0.1:5020', units: { plc: { unitId: 255 } } }
    },
    jobs: [
      { name: 'm1', device: 'bus', unit: 'meter1', tags: 'energy', rate: '1/s' },
      { name: 'm2', device: 'bus', unit: 'meter2', tags: 'energy', rate: '1/s' },
      { name: 'plc', device: 'gw', unit: 'plc', read: { fc: 3, address: 0, quantity: 2 }, rate: '1/s' }
    ]
  };
}

const { expectOne } = configCases(base);

describe('gateway/config: lines of units', () => {
  it('gives each unit its unit id, tags, quirks over its line\'s, and backoff; a job names its unit', () => {
    const c = validateConfig(base(), { env: {} });
    assert.deepEqual(c.jobs.map((j) => j.unit), ['meter1', 'meter2', 'plc']);
    // meter1 takes the line's word order, meter2 its own
    assert.deepEqual(c.jobs.slice(0, 2).map((j) => j.tags[0].wordOrder), ['little', 'big']);
    // a raw read on a unit asks that unit
    assert.equal(c.jobs[2].target.unitId, 255);
    // the config carries the specs that run (built once, by devices/spec.js and jobs/spec.js)
    assert.deepEqual(c.devices.bus.units.map((u) => [u.name, u.unitId, u.backoff.initialMs, u.backoff.maxMs]), [['meter1', 1, 1000, 10000], ['meter2', 2, 2000, 20000]]);
    const jobs = c.jobs;
    assert.deepEqual(jobs.map((j) => [j.unit, j.target.unitId]), [['meter1', 1], ['meter2', 2], ['plc', 255]]);
    // and the URL a summary carries names the unit too, not the line's first (issue 19)
    assert.deepEqual(jobs.map((j) => new URLSearchParams(j.target.url.split('?')[1]).get('unitId')), ['1', '2', '255']);
  });

  it('refuses unit ids outside the line\'s range, twice the same id, and negative quirks, with field paths', () => {
    expectOne((o) => { o.devices.bus.units.meter2.unitId = 248; }, 'devices.bus.units.meter2.unitId', /from 1 to 247 on a serial line/);
    expectOne((o) => { o.devices.bus.units.meter2.unitId = 0; }, 'devices.bus.units.meter2.unitId', /0 is broadcast/);
    expectOne((o) => { o.devices.bus.units.meter2.unitId = 1; }, 'devices.bus.units.meter2.unitId', /unit id of another unit/);
    expectOne((o) => { o.devices.gw.units.plc.unitId = 250; }, 'devices.gw.units.plc.unitId', /0 to 247, or 255/);
    expectOne((o) => { o.devices.bus.units.meter1.maxGap = -2; }, 'devices.bus.units.meter1.maxGap', /from 0 to 2000/);
    expectOne((o) => { o.devices.bus.units.meter1.backoff = { min: '5s', max: '1s' }; }, 'devices.bus.units.meter1.backoff.max', /at least backoff.min/);
  });

  it('a job on a line names one of its units; a job elsewhere names none', () => {
    expectOne((o) => { delete o.jobs[0].unit; }, 'jobs[0].unit', /is required: device "bus" is a line of units \(meter1, meter2\)/);
    expectOne((o) => { o.jobs[0].unit = 'meter3'; }, 'jobs[0].unit', /is not a unit of device "bus"/);
    expectOne((o) => { o.devices.solo = { target: 'modbus+tcp://127.0.0.1:5021' }; o.jobs.push({ name: 's', device: 'solo', unit: 'x', read: { fc: 3, address: 0, quantity: 1 }, rate: '1/s' }); }, 'jobs[3].unit', /not a line of units/);
    expectOne((o) => { o.jobs[0].tags = 'power'; }, 'jobs[0].tags', /is not a tag group of unit "meter1" of device "bus" \(groups: energy\)/);
  });

  it('on a line, tags belong to its units', () => {
    expectOne((o) => { o.devices.bus.tags = { x: [{ name: 'x', table: 'coil', address: 0 }] }; }, 'devices.bus.tags', /belongs to the units of a line/);
    expectOne((o) => { o.devices.bus.units.meter1.tags.energy[0].type = 'float128'; }, 'devices.bus.units.meter1.tags.energy[0].type', /must be one of/);
  });

  it('each unit is a Sparkplug device of its own, so two meters may both have a "kwh"', () => {
    const c = validateConfig(base(), { env: {} });
    const model = buildModel(c);
    assert.deepEqual([...model.devices.keys()], ['bus.meter1', 'bus.meter2']);
    assert.deepEqual([...model.devices.values()].map((d) => [d.device, d.unit, d.metrics.map((m) => m.name)]), [['bus', 'meter1', ['kwh']], ['bus', 'meter2', ['kwh']]]);
  });
});
