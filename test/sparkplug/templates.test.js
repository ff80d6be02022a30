'use strict';

const assert = require('node:assert/strict');
const { buildModel } = require('../../gateway/runtime/sparkplug/model');
const { buildTemplates } = require('../../gateway/runtime/sparkplug/templates');

const KWH = { name: 'kwh', table: 'holding', address: 0, type: 'uint32', scale: 1, offset: 0, unit: 'kWh' };
const V = { name: 'v', table: 'holding', address: 2, type: 'uint16', scale: 1, offset: 0, unit: 'V' };
const jobs = [
  { name: 'm1', device: 'line', unit: 'u1', kind: 'tags', tags: [KWH, V] },
  { name: 'm2', device: 'line', unit: 'u2', kind: 'tags', tags: [KWH, V] },
  { name: 'm3', device: 'line', unit: 'u3', kind: 'tags', tags: [KWH] },
  // polls only part of its group: no instance, its tags stay plain metrics
  { name: 'p', device: 'plc', unit: null, kind: 'tags', tags: [KWH] }
];

describe('Sparkplug templates', () => {
  for (const [shape, config] of [
    ['device options kept apart (deviceOptions)', {
      jobs,
      deviceOptions: {
        line: { tags: null, units: { u1: { groups: { meter: [KWH, V] } }, u2: { groups: { meter: [KWH, V] } }, u3: { groups: { meter: [KWH] } } } },
        plc: { tags: { groups: { all: [KWH, V] } }, units: null }
      }
    }],
    ['groups in the devices (units as a list)', {
      jobs,
      devices: {
        line: { units: [{ name: 'u1', tags: { groups: { meter: [KWH, V] } } }, { name: 'u2', tags: { groups: { meter: [KWH, V] } } }, { name: 'u3', tags: { groups: { meter: [KWH] } } }] },
        plc: { tags: { groups: { all: [KWH, V] } } }
      }
    }]
  ]) {
    it(`one definition per distinct group, an instance per unit that polls it whole: ${shape}`, () => {
      const t = buildTemplates(buildModel(config));
      assert.deepEqual(t.definitions.map((d) => [d.name, d.members.map((m) => [m.name, m.datatype, m.unit])]), [
        ['meter', [['kwh', 'UInt32', 'kWh'], ['v', 'UInt16', 'V']]],
        ['meter@line.u3', [['kwh', 'UInt32', 'kWh']]]
      ]);
      assert.deepEqual([...t.instances].map(([dev, list]) => [dev, list.map((i) => [i.name, i.ref])]), [
        ['line.u1', [['meter', 'meter']]],
        ['line.u2', [['meter', 'meter']]],
        ['line.u3', [['meter', 'meter@line.u3']]],
        ['plc', []]
      ]);
    });
  }
});
