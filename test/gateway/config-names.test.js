'use strict';

/**
 * Names a user writes become keys: devices, units of a line, tag groups, tags, jobs, the gateway id,
 * Sparkplug ids. Names such as `constructor` or `toString` are plain names (a lookup never finds
 * Object.prototype's); `__proto__` is refused wherever a name is a key, with the field path, since
 * an object keyed by it would lose it (issue 18, minor 7). `nines run --check` either accepts a config
 * or refuses it with NINES_ERR_CONFIG naming each field: never a TypeError.
 */

const assert = require('node:assert/strict');
const fc = require('fast-check');
const { NinesError } = require('../../gateway/base/errors');
const { loadConfig } = require('../../gateway/runtime/config');

/** Object.prototype's own names, and a few that are keys elsewhere */
const TRICKY = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', 'propertyIsEnumerable',
  'toLocaleString', '__defineGetter__', '__lookupSetter__', 'prototype', 'length', 'name'];
const name = fc.oneof(fc.constantFrom(...TRICKY), fc.constantFrom('plc', 'line', 'g1', 'm1', 'x'));

/** A config with a TCP device with a tag group, a line with a unit with one, and three jobs: a name in every position */
const names = fc.record({
  gatewayId: name,
  device: name,
  line: name,
  unit: name,
  group: name,
  unitGroup: name,
  tag: name,
  unitTag: name,
  ownTag: name,
  jobs: fc.tuple(name, name, name),
  // what the jobs name: sometimes what is defined, sometimes anything
  refs: fc.record({ device: fc.option(name), line: fc.option(name), unit: fc.option(name), group: fc.option(name), unitGroup: fc.option(name) }),
  sparkplug: fc.option(fc.record({ group: name, node: name }))
});

function configOf (n) {
  const ref = (key, defined) => (n.refs[key] === null ? defined : n.refs[key]);
  // computed keys: own properties, even __proto__, as a parser makes them
  return {
    gateway: { id: n.gatewayId },
    mqtt: { url: 'mqtt://127.0.0.1:1883', ...(n.sparkplug ? { sparkplug: n.sparkplug } : {}) },
    devices: {
      [n.device]: { target: 'modbus+tcp://127.0.0.1:5020', tags: { [n.group]: [{ name: n.tag, table: 'holding', address: 0 }] } },
      [n.line]: {
        target: 'modbus+rtu:///dev/ttyUSB0',
        units: { [n.unit]: { unitId: 1, tags: { [n.unitGroup]: [{ name: n.unitTag, table: 'input', address: 0 }] } } }
      }
    },
    jobs: [
      { name: n.jobs[0], device: ref('device', n.device), tags: ref('group', n.group), rate: '1/s' },
      { name: n.jobs[1], device: ref('line', n.line), unit: ref('unit', n.unit), tags: [ref('unitGroup', n.unitGroup), { name: n.ownTag, table: 'coil', address: 1 }], rate: '1/s' },
      { name: n.jobs[2], device: ref('device', n.device), read: { fc: 3, address: 0, quantity: 1 }, rate: '1/s' }
    ]
  };
}

/** What --check does with the text, and what the gateway builds from a config it accepted */
function check (obj) {
  let config;
  try {
    config = loadConfig(JSON.stringify(obj), { format: 'json', env: {} });
  } catch (err) {
    if (!(err instanceof NinesError)) throw new Error(`uncoded ${err && err.name}: ${err && err.message}`, { cause: err });
    assert.equal(err.code, 'NINES_ERR_CONFIG', err.message);
    assert.ok(err.details.errors.length > 0);
    for (const e of err.details.errors) assert.ok(typeof e.path === 'string' && e.path !== '', `a problem without a field path: ${err.message}`);
    return { config: null, err };
  }
  // the specs the gateway runs, built by the config check
  const devices = Object.values(config.devices);
  const jobs = config.jobs;
  assert.deepEqual(devices.map((d) => d.name).sort(), Object.keys(obj.devices).sort());
  assert.deepEqual(jobs.map((j) => j.name), obj.jobs.map((j) => j.name));
  return { config, err: null };
}

describe('gateway/config: names that are Object.prototype\'s', () => {
  it('--check accepts a config or refuses it with NINES_ERR_CONFIG and field paths, whatever names it uses where (fast-check)', () => {
    fc.assert(fc.property(names, (n) => { check(configOf(n)); }), { seed: 18, numRuns: 400 });
  });

  it('constructor, toString, hasOwnProperty and valueOf are plain names in every position', () => {
    const n = {
      gatewayId: 'constructor',
      device: 'constructor',
      line: 'toString',
      unit: 'hasOwnProperty',
      group: 'valueOf',
      unitGroup: 'constructor',
      tag: 'toString',
      unitTag: 'constructor',
      ownTag: 'valueOf',
      jobs: ['constructor', 'toString', 'valueOf'],
      refs: { device: null, line: null, unit: null, group: null, unitGroup: null },
      sparkplug: { group: 'constructor', node: 'toString' }
    };
    const { config } = check(configOf(n));
    assert.deepEqual(Object.keys(config.devices), ['constructor', 'toString']);
    assert.deepEqual(config.jobs[0].tags.map((t) => t.name), ['toString']);
    assert.deepEqual(config.jobs[1].tags.map((t) => t.name), ['constructor', 'valueOf']);
  });

  it('a job naming a device, unit or group that is not there, by a name Object.prototype has, is refused at that field', () => {
    const base = {
      gatewayId: 'gw', device: 'plc', line: 'line', unit: 'm1', group: 'g1', unitGroup: 'g1', tag: 'x', unitTag: 'x', ownTag: 'y',
      jobs: ['a', 'b', 'c'], sparkplug: null
    };
    for (const [key, field, job] of [['device', 'device', 0], ['line', 'device', 1], ['unit', 'unit', 1], ['group', 'tags', 0], ['unitGroup', 'tags[0]', 1]]) {
      for (const bad of ['constructor', 'toString', '__proto__']) {
        const { err } = check(configOf({ ...base, refs: { device: null, line: null, unit: null, group: null, unitGroup: null, [key]: bad } }));
        assert.ok(err, `${key}: ${bad} accepted`);
        assert.ok(err.details.errors.some((e) => e.path === `jobs[${job}].${field}` && e.value === bad), `${key}: ${bad}: ${err.message}`);
      }
    }
  });

  it('__proto__ is refused as the name of a device, unit, tag group, tag or job, at its path', () => {
    const base = {
      gatewayId: 'gw', device: 'plc', line: 'line', unit: 'm1', group: 'g1', unitGroup: 'g2', tag: 'x', unitTag: 'x', ownTag: 'y',
      jobs: ['a', 'b', 'c'], refs: { device: null, line: null, unit: null, group: null, unitGroup: null }, sparkplug: null
    };
    for (const [key, where] of [
      ['device', 'devices.__proto__'],
      ['line', 'devices.__proto__'],
      ['unit', 'devices.line.units.__proto__'],
      ['group', 'devices.plc.tags.__proto__'],
      ['unitGroup', 'devices.line.units.m1.tags.__proto__'],
      ['tag', 'devices.plc.tags.g1[0].name'],
      ['ownTag', 'jobs[1].tags[1].name'],
      ['gatewayId', 'gateway.id']
    ]) {
      const { err } = check(configOf({ ...base, [key]: '__proto__' }));
      assert.ok(err, `${key}: __proto__ accepted`);
      assert.ok(err.details.errors.some((e) => e.path === where), `${key}: no problem at ${where}: ${err.message}`);
    }
    const { err } = check(configOf({ ...base, jobs: ['a', '__proto__', 'c'] }));
    assert.ok(err.details.errors.some((e) => e.path === 'jobs[1].name'), err.message);
  });
});
