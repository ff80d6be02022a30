'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { configCases } = require('./config-problems');
const { validateConfig, loadConfig } = require('../../gateway/runtime/config');

/** A config with tag groups on a Modbus device and an ED-588; each case breaks one thing */
function base () {
  return {
    gateway: { id: 'edge-1' },
    mqtt: { url: 'mqtt://127.0.0.1:1883' },
    devices: {
      plc1: {
        target: 'modbus+tcp://127.0.0.1:5020?unitId=1',
        maxRegistersPerRequest: 64,
        tags: {
          boiler: [
            { name: 'boiler_temp', table: 'holding', address: 100, type: 'float32', order: 'CDAB', scale: 0.1, unit: '°C', deadband: 0.2 },
            { name: 'boiler_press', table: 'holding', address: 102, type: 'int16', scale: 0.01, unit: 'bar' }
          ],
          pumps: [{ name: 'pump1_on', table: 'coil', address: 0 }, { name: 'pump2_on', table: 'coil', address: 1 }]
        }
      },
      ed588: { target: 'ascii://127.0.0.1:9500', tags: { io: [{ name: 'door', table: 'input', address: 0 }, { name: 'lamp', table: 'output', address: 0 }] } }
    },
    jobs: [
      { name: 'boiler', device: 'plc1', tags: 'boiler', rate: '1/s' },
      { name: 'plant', device: 'plc1', tags: ['boiler', 'pumps', { name: 'flow', table: 'input', address: 7, type: 'uint32' }], rate: '10/s' },
      { name: 'io', device: 'ed588', tags: 'io', rate: '20/s' }
    ]
  };
}

const { expectOne } = configCases(base);

describe('gateway/config: tags, in groups per device and per job', () => {
  it('builds each job\'s tags from the groups it names and its own, checked for its device', () => {
    const c = validateConfig(base(), { env: {} });
    assert.deepEqual(c.jobs.map((j) => [j.kind, j.tags.map((t) => t.name)]), [
      ['tags', ['boiler_temp', 'boiler_press']],
      ['tags', ['boiler_temp', 'boiler_press', 'pump1_on', 'pump2_on', 'flow']],
      ['tags', ['door', 'lamp']]
    ]);
    // a tag job publishes its values on change unless it says otherwise
    assert.equal(c.jobs[0].values.mode, 'on-change');
    assert.deepEqual(Object.keys(c.deviceOptions.plc1.tags.groups), ['boiler', 'pumps']);
    assert.equal(c.deviceOptions.plc1.tags.all.length, 4);
  });

  it('gives every bad tag its field path, in a device group or in a job', () => {
    expectOne((o) => { o.devices.plc1.tags.boiler[1].type = 'float128'; }, 'devices.plc1.tags.boiler[1].type', /must be one of bit, int16/);
    expectOne((o) => { o.devices.plc1.tags.boiler[1].address = 101; }, 'devices.plc1.tags.boiler[1].address', /overlaps tag "boiler_temp"/);
    expectOne((o) => { o.devices.plc1.tags.pumps[0].address = 70000; }, 'devices.plc1.tags.pumps[0].address', /from 0 to 65535/);
    expectOne((o) => { o.devices.plc1.tags.pumps.push({ name: 's', table: 'holding', address: 500, type: 'string', length: 80 }); }, 'devices.plc1.tags.pumps[2].length', /maxRegistersPerRequest 64/);
    expectOne((o) => { o.jobs[1].tags[2].table = 'coils-please'; }, 'jobs[1].tags[2].table', /must be one of coil, discrete, holding, input/);
    expectOne((o) => { o.devices.ed588.tags.io[0].table = 'holding'; }, 'devices.ed588.tags.io[0].table', /on an ASCII device/);
  });

  it('refuses duplicate names across a device\'s groups, and between a job\'s groups and its own tags', () => {
    expectOne((o) => { o.devices.plc1.tags.pumps[1].name = 'boiler_temp'; }, 'devices.plc1.tags.pumps[1].name', /unique/);
    expectOne((o) => { o.jobs[1].tags[2].name = 'pump1_on'; }, 'jobs[1].tags[2]', /holds tag "pump1_on", which has the name of an earlier tag/);
    expectOne((o) => { o.jobs[1].tags[2] = { name: 'x', table: 'coil', address: 1 }; }, 'jobs[1].tags[2]', /overlaps tag "pump2_on"/);
  });

  it('names an unknown group, a group named twice, and tags on a device with none', () => {
    expectOne((o) => { o.jobs[0].tags = 'boilr'; }, 'jobs[0].tags', /is not a tag group of device "plc1" \(groups: boiler, pumps\)/);
    expectOne((o) => { o.jobs[1].tags[1] = 'boiler'; }, 'jobs[1].tags[1]', /names the same tag group twice/);
    expectOne((o) => { delete o.devices.ed588.tags; }, 'jobs[2].tags', /device "ed588" has no tags/);
    expectOne((o) => { o.jobs[0].tags = []; }, 'jobs[0].tags', /tag group|at least one/);
  });

  it('a job has tags or another operation, not both', () => {
    expectOne((o) => { o.jobs[0].read = { fc: 3, address: 0, quantity: 1 }; }, 'jobs[0].tags', /cannot be combined with read/);
  });

  it('reads a CSV tag sheet next to the config file, and names its line and column when it is wrong', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-tags-'));
    try {
      fs.writeFileSync(path.join(dir, 'pumps.csv'), 'name,table,address,type\npump1_on,coil,0,\nflow,input,4,uint32\n');
      const yaml = `devices:\n  plc1:\n    target: "modbus+tcp://127.0.0.1:5020"\n    tags:\n      pumps: { csv: pumps.csv }\njobs:\n  - { name: p, device: plc1, tags: pumps, rate: 1/s }\n`;
      fs.writeFileSync(path.join(dir, 'gw.yaml'), yaml);
      const c = loadConfig(path.join(dir, 'gw.yaml'), { env: {} });
      assert.deepEqual(c.jobs[0].tags.map((t) => [t.name, t.type]), [['pump1_on', 'bool'], ['flow', 'uint32']]);
      fs.writeFileSync(path.join(dir, 'pumps.csv'), 'name,table,address,type\npump1_on,coil,0,\nflow,input,4,uint33\n');
      assert.throws(() => loadConfig(path.join(dir, 'gw.yaml'), { env: {} }), (err) => {
        assert.equal(err.code, 'NINES_ERR_CONFIG');
        assert.match(err.message, /devices\.plc1\.tags\.pumps\.csv: "pumps\.csv" is not a valid tag sheet: pumps\.csv line 3, column 4 \(type\): "uint33"/);
        // the job naming the broken group is not reported a second time
        assert.equal(err.details.errors.length, 1);
        return true;
      });
      fs.rmSync(path.join(dir, 'pumps.csv'));
      assert.throws(() => loadConfig(path.join(dir, 'gw.yaml'), { env: {} }), /pumps\.csv: "pumps\.csv" cannot be read \(ENOENT\)/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
