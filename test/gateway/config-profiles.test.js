'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const YAML = require('yaml');
const { configCases, problemsOf } = require('./config-problems');
const { validateConfig, loadConfig } = require('../../gateway/runtime/config');
const { shippedNames, SHIPPED_DIR } = require('../../gateway/runtime/config/shipped-profiles');

const REPO = path.join(__dirname, '..', '..');

/** 50 meters on one serial line, described once: the whole config */
const FIFTY = `profiles:
  meter:
    order: CDAB
    timeout: 300ms
    tags:
      measurements:
        - { name: voltage, table: input, address: 0, type: float32, unit: V }
        - { name: current, table: input, address: 2, type: float32, unit: A }
        - { name: power, table: input, address: 4, type: float32, unit: W, scale: 0.001 }
      nameplate:
        - { name: serial, table: input, address: 6, type: string, length: 8 }
        - { name: rating, table: holding, address: 0, type: uint16, unit: A }
    scan:
      fast: { rate: 10/s, tags: measurements }
      slow: { rate: 1/min, tags: nameplate }
devices:
  bus:
    target: "modbus+rtutcp://127.0.0.1:4001"
    profile: meter
    units: "1-50"
`;

/** A profile on a single device and on units of a line, with local changes; each case breaks one thing */
function base () {
  return {
    gateway: { id: 'edge-1' },
    mqtt: { url: 'mqtt://127.0.0.1:1883' },
    profiles: {
      meter: {
        order: 'CDAB',
        maxGap: 4,
        timeout: '300ms',
        tags: {
          measurements: [
            { name: 'voltage', table: 'input', address: 0, type: 'float32', unit: 'V' },
            { name: 'current', table: 'input', address: 2, type: 'float32', unit: 'A' },
            { name: 'power', table: 'input', address: 4, type: 'float32', unit: 'W' }
          ],
          nameplate: [{ name: 'rating', table: 'holding', address: 0, type: 'uint16', unit: 'A' }]
        }
      },
      drive: { order: 'ABCD', tags: { status: [{ name: 'speed', table: 'holding', address: 10, type: 'int16' }] } }
    },
    devices: {
      m0: { target: 'modbus+tcp://127.0.0.1:5020?unitId=1', profile: 'meter' },
      bus: {
        target: 'modbus+rtu:///dev/ttyUSB0?baudRate=19200',
        profile: 'meter',
        units: {
          m1: { unitId: 1 },
          m2: { unitId: 2, order: 'ABCD', overrides: { power: { scale: 0.001, unit: 'kW' } } },
          m3: { unitId: 3, tags: { nameplate: [{ name: 'rating', table: 'holding', address: 20, type: 'uint32' }] } },
          d1: { unitId: 9, profile: 'drive' }
        }
      }
    },
    jobs: [
      { name: 'm0', device: 'm0', tags: ['measurements', 'nameplate'], rate: '1/s' },
      { name: 'm1', device: 'bus', unit: 'm1', tags: 'measurements', rate: '1/s' },
      { name: 'm2', device: 'bus', unit: 'm2', tags: 'measurements', rate: '1/s' },
      { name: 'm3', device: 'bus', unit: 'm3', tags: 'nameplate', rate: '1/s' },
      { name: 'd1', device: 'bus', unit: 'd1', tags: 'status', rate: '1/s' }
    ]
  };
}

const { expectOne, problems } = configCases(base);

describe('gateway/config: profiles, a device described once for many devices and units', () => {
  it('50 units on one line from one profile: a config of under 30 lines, 100 jobs, each unit with the profile\'s tags, order and the line\'s timeout', () => {
    assert.ok(FIFTY.trimEnd().split('\n').length < 30, `${FIFTY.split('\n').length} lines`);
    const c = loadConfig(FIFTY, { format: 'yaml', env: {} });
    assert.equal(c.devices.bus.units.length, 50);
    assert.equal(c.devices.bus.timeoutMs, 300);
    assert.deepEqual(c.devices.bus.units.map((u) => u.unitId), Array.from({ length: 50 }, (_, i) => i + 1));
    assert.ok(c.devices.bus.units.every((u) => u.order === 'CDAB'));
    assert.equal(c.jobs.length, 100);
    assert.deepEqual(c.jobs.slice(0, 4).map((j) => [j.name, j.unit, j.target.unitId, j.ratePerSec]),
      [['bus.unit-1.fast', 'unit-1', 1, 10], ['bus.unit-1.slow', 'unit-1', 1, 1 / 60], ['bus.unit-2.fast', 'unit-2', 2, 10], ['bus.unit-2.slow', 'unit-2', 2, 1 / 60]]);
    const u50 = c.jobs.find((j) => j.name === 'bus.unit-50.fast');
    assert.deepEqual(u50.tags.map((t) => [t.name, t.wordOrder]), [['voltage', 'little'], ['current', 'little'], ['power', 'little']]);
    assert.equal(c.deviceOptions.bus.units['unit-50'].all.length, 5);
  });

  it('checks the profile at load, with the field path into the profile and its line, once for all 50 units', () => {
    const text = FIFTY.replace('address: 2, type: float32, unit: A', 'address: 1, type: float32, unit: A');
    let err;
    try { loadConfig(text, { format: 'yaml', env: {} }); } catch (e) { err = e; }
    assert.equal(err.code, 'NINES_ERR_CONFIG');
    assert.deepEqual(err.details.errors, [{
      path: 'profiles.meter.tags.measurements[1].address',
      value: 1,
      rule: 'overlaps tag "voltage" (input 0-1); two tags may not read the same register or bit',
      line: 8,
      column: 42
    }]);
  });

  it('a device takes the profile\'s fields unless it sets its own; a unit its quirks, tags and overrides', () => {
    const o = base();
    o.devices.m0.timeout = '2s';
    const c = validateConfig(o, { env: {} });
    assert.equal(c.devices.m0.timeoutMs, 2000); // its own field wins
    assert.equal(c.devices.bus.timeoutMs, 300); // the line's profile
    assert.equal(c.devices.m0.maxGap, 4);
    const unit = (n) => c.devices.bus.units.find((u) => u.name === n);
    assert.deepEqual(['m1', 'm2', 'm3', 'd1'].map((n) => unit(n).order), ['CDAB', 'ABCD', 'CDAB', 'ABCD']);
    // an override changes one tag of the profile for this unit only
    const tag = (job, name) => c.jobs.find((j) => j.name === job).tags.find((t) => t.name === name);
    assert.deepEqual([tag('m2', 'power').scale, tag('m2', 'power').unit], [0.001, 'kW']);
    assert.deepEqual([tag('m1', 'power').scale, tag('m1', 'power').unit], [1, 'W']);
    // a group of the unit's own replaces the profile's group of that name, whole
    assert.deepEqual(c.jobs.find((j) => j.name === 'm3').tags.map((t) => [t.name, t.address, t.type]), [['rating', 20, 'uint32']]);
    assert.deepEqual(Object.keys(c.deviceOptions.bus.units.m3.groups), ['measurements', 'nameplate']);
    // a unit naming its own profile has that profile's tags, not the line's
    assert.deepEqual(Object.keys(c.deviceOptions.bus.units.d1.groups), ['status']);
  });

  it('an override of a tag the profile does not have is an error at the override', () => {
    expectOne((o) => { o.devices.bus.units.m2.overrides = { pwr: { scale: 2 } }; }, 'devices.bus.units.m2.overrides.pwr', /is not a tag of profile "meter"/);
    expectOne((o) => { o.devices.m0.overrides = { powr: { scale: 2 } }; }, 'devices.m0.overrides.powr', /is not a tag of profile "meter" \(did you mean "power"\?\)/);
    // the unit replaced the group the tag was in: the change belongs in its own group
    expectOne((o) => { o.devices.bus.units.m3.overrides = { rating: { unit: 'mA' } }; }, 'devices.bus.units.m3.overrides.rating',
      /is a tag of group "nameplate" of profile "meter", which devices.bus.units.m3.tags.nameplate replaces/);
    expectOne((o) => { o.devices.m0.overrides = { power: { name: 'p' } }; }, 'devices.m0.overrides.power.name', /a tag keeps its name/);
    expectOne((o) => { delete o.devices.m0.profile; o.devices.m0.tags = { x: [{ name: 'x', table: 'holding', address: 0 }] }; o.jobs[0].tags = 'x'; o.devices.m0.overrides = { x: { scale: 2 } }; },
      'devices.m0.overrides.x', /names no profile/);
  });

  it('a bad value in an override is reported at the override, a bad tag of the profile inside the profile', () => {
    expectOne((o) => { o.devices.bus.units.m2.overrides.power.type = 'float128'; }, 'devices.bus.units.m2.overrides.power.type', /must be one of/);
    expectOne((o) => { o.profiles.meter.tags.measurements[2].type = 'float128'; }, 'profiles.meter.tags.measurements[2].type', /must be one of/);
    // an override that moves a tag onto another of the profile's
    expectOne((o) => { o.devices.m0.overrides = { current: { address: 1 } }; }, 'devices.m0.overrides.current.address', /overlaps tag "voltage"/);
  });

  it('a local group that overlaps a tag of the profile is an error at the local tag', () => {
    const p = expectOne((o) => { o.devices.m0.tags = { extra: [{ name: 'extra', table: 'input', address: 5 }] }; }, 'devices.m0.tags.extra[0].address', /overlaps tag "power"/);
    assert.match(p.rule, /in another group of the device/);
  });

  it('a profile that is not there is an error at profile, with a guess and the shipped ones', () => {
    const p = expectOne((o) => { o.devices.m0.profile = 'meterr'; }, 'devices.m0.profile', /is not a profile \(did you mean "meter"\?\); defined: meter, drive; shipped: ED-560, ED-588/);
    assert.equal(p.value, 'meterr');
    expectOne((o) => { o.devices.bus.units.d1.profile = 'driv'; }, 'devices.bus.units.d1.profile', /did you mean "drive"/);
  });

  it('a profile named by a unit may not carry a device\'s timing: it is the line\'s', () => {
    const p = expectOne((o) => { o.profiles.drive.timeout = '1s'; }, 'profiles.drive.timeout', /belongs to a whole device, not to a unit of a line: profile "drive" is named by devices.bus.units.d1/);
    assert.equal(p.value, '1s');
  });

  it('a builder\'s refusal of a profile\'s field is reported in the profile', () => {
    expectOne((o) => { o.profiles.meter.maxGap = 5000; }, 'profiles.meter.maxGap', /from 0 to 2000/);
    // a Modbus quirk on an ASCII device comes from the profile it names
    expectOne((o) => { o.devices.io = { target: 'ascii://127.0.0.1:9500', profile: 'meter' }; }, 'profiles.meter.maxGap', /applies to Modbus devices only/);
  });

  it('a line\'s units listed by id are checked as the Node-RED dialog\'s list is, at units', () => {
    const line = (units) => ({ devices: { bus: { target: 'modbus+rtu:///dev/ttyUSB0', profile: 'meter', units, scan: { fast: { rate: '1/s', tags: 'measurements' } } } }, profiles: base().profiles });
    const cases = [['0-3', /has unit id 0: unit ids are 1-247 on a serial line/], ['1-3, 2', /has unit id 2 twice/], ['x', /neither a unit id nor a range/]];
    for (const [units, rule] of cases) {
      const { errors } = problemsOf(line(units));
      assert.deepEqual(errors.map((e) => e.path), ['devices.bus.units'], units);
      assert.match(errors[0].rule, rule);
    }
    // named as the dialog names them
    const c = validateConfig({ ...line('3, 7-8'), jobs: [{ name: 'u7', device: 'bus', unit: 'unit-7', tags: 'measurements', rate: '1/s' }] }, { env: {} });
    assert.deepEqual(c.devices.bus.units.map((u) => [u.name, u.unitId]), [['unit-3', 3], ['unit-7', 7], ['unit-8', 8]]);
  });

  it('profile names follow the rule of names', () => {
    expectOne((o) => { o.profiles['my meter'] = {}; }, 'profiles["my meter"]', /is not a valid profile name/);
    expectOne((o) => { o.profiles.meter.colour = 'red'; }, 'profiles.meter.colour', /is not a known key/);
  });

  describe('a CSV tag sheet as a profile', () => {
    let dir;
    before(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-profile-'));
      fs.writeFileSync(path.join(dir, 'pm.csv'), 'name,table,address,type,unit\nvoltage,input,0,float32,V\npower,input,2,float32,W\n');
      fs.writeFileSync(path.join(dir, 'bad.csv'), 'name,table,address,type\nvoltage,input,0,float32\npower,input,1,float32\n');
    });
    after(() => fs.rmSync(dir, { recursive: true, force: true }));

    it('loads as a profile of one group named as the profile, for any number of units', () => {
      const c = validateConfig({
        profiles: { pm: { csv: 'pm.csv', order: 'CDAB', scan: { fast: { rate: '5/s', tags: 'pm' } } } },
        devices: { bus: { target: 'modbus+rtutcp://127.0.0.1:4001', profile: 'pm', units: '1-3, 7' } }
      }, { env: {}, baseDir: dir });
      assert.deepEqual(c.jobs.map((j) => j.name), ['bus.unit-1.fast', 'bus.unit-2.fast', 'bus.unit-3.fast', 'bus.unit-7.fast']);
      assert.deepEqual(c.jobs[3].tags.map((t) => [t.name, t.unit, t.wordOrder]), [['voltage', 'V', 'little'], ['power', 'W', 'little']]);
    });

    it('a problem in the sheet is at the profile\'s csv, with the sheet\'s line and column', () => {
      let err;
      try {
        validateConfig({ profiles: { pm: { csv: 'bad.csv' } }, devices: { m: { target: 'modbus+tcp://127.0.0.1:5020', profile: 'pm', scan: { all: { rate: '1/s', tags: 'pm' } } } } }, { env: {}, baseDir: dir });
      } catch (e) { err = e; }
      const errors = err.details.errors;
      assert.equal(errors.length, 1);
      assert.equal(errors[0].path, 'profiles.pm.csv');
      assert.match(errors[0].rule, /bad.csv line 3, column 3 \(address\)/);
    });

    it('an override cannot reach into a sheet: its group is replaced instead', () => {
      let err;
      try {
        validateConfig({
          profiles: { pm: { csv: 'pm.csv', scan: { all: { rate: '1/s', tags: 'pm' } } } },
          devices: { m: { target: 'modbus+tcp://127.0.0.1:5020', profile: 'pm', overrides: { power: { unit: 'kW' } } } }
        }, { env: {}, baseDir: dir });
      } catch (e) { err = e; }
      assert.deepEqual(err.details.errors.map((e) => [e.path, e.rule]), [['devices.m.overrides.power', 'is not a tag of profile "pm"; tags of its sheet groups (pm) are changed by replacing the group']]);
    });

    it('a profile is one sheet or tag groups, not both', () => {
      const { errors } = problems((o) => { o.profiles.meter.csv = 'pm.csv'; });
      assert.deepEqual(errors.map((e) => e.path), ['profiles.meter.csv']);
      assert.match(errors[0].rule, /cannot be combined with tags/);
    });
  });

  describe('the profiles shipped with nines', () => {
    it('ships the Brainboxes ED models the simulator knows, each citing the manual through a document in the repository', () => {
      assert.deepEqual(shippedNames(), ['ED-560', 'ED-588']);
      // the folder is in the package, as the code that reads it
      assert.equal(path.relative(REPO, SHIPPED_DIR), 'profiles');
      assert.ok(require('../../package.json').files.includes('profiles/'), 'package.json files ships profiles/');
      for (const name of shippedNames()) {
        const text = fs.readFileSync(path.join(SHIPPED_DIR, `${name}.yaml`), 'utf8');
        assert.match(text, /^# Source: .*Brainboxes/m, name);
        assert.match(text, /[Mm]anual/, name);
        // every document the comment cites is in the repository
        const cited = [...text.matchAll(/docs\/[A-Za-z0-9/_.-]+\.md/g)].map((m) => m[0]);
        assert.ok(cited.length > 0, name);
        for (const doc of cited) assert.ok(fs.existsSync(path.join(REPO, doc)), `${name} cites ${doc}`);
        // and passes as a profile written in a config would
        const body = YAML.parse(text);
        validateConfig({ profiles: { [`copy-${name}`]: body }, devices: { d: { target: 'ascii://127.0.0.1:9500', profile: `copy-${name}` } }, jobs: [{ name: 'j', device: 'd', command: '@01', rate: '1/s' }] }, { env: {} });
      }
    });

    it('profile: ED-588 and ED-560 resolve to the shipped profiles: inputs and outputs in one @AA, counters, analog read-back', () => {
      const c = validateConfig({
        devices: {
          io: { target: 'ascii://127.0.0.1:9500', profile: 'ED-588', scan: { io: { rate: '50/s', tags: ['inputs', 'outputs'] }, counts: { rate: '1/s', tags: 'counters' } } },
          ao: { target: 'ascii://127.0.0.1:9501', profile: 'ED-560', scan: { readback: { rate: '1/s', tags: 'outputs' } } }
        }
      }, { env: {} });
      assert.deepEqual(c.jobs.map((j) => [j.name, j.tags.length, j.plan.map((b) => b.command)]), [
        ['io.io', 16, ['@01']],
        ['io.counts', 8, ['#010', '#011', '#012', '#013', '#014', '#015', '#016', '#017']],
        ['ao.readback', 4, ['$0160', '$0161', '$0162', '$0163']]
      ]);
      assert.deepEqual(c.deviceOptions.ao.tags.all.map((t) => t.unit), ['V', 'V', 'V', 'V']);
    });

    it('a profile of the config wins over a shipped one of the same name', () => {
      const c = validateConfig({
        profiles: { 'ED-588': { tags: { door: [{ name: 'door', table: 'input', address: 3 }] } } },
        devices: { io: { target: 'ascii://127.0.0.1:9500', profile: 'ED-588', scan: { io: { rate: '1/s', tags: 'door' } } } }
      }, { env: {} });
      assert.deepEqual(Object.keys(c.deviceOptions.io.tags.groups), ['door']);
    });

    it('a problem inside a shipped profile says where the profile lives', () => {
      const { errors } = problemsOf({ devices: { plc: { target: 'modbus+tcp://127.0.0.1:5020', profile: 'ED-588', scan: { io: { rate: '1/s', tags: 'inputs' } } } } });
      assert.ok(errors.length > 0);
      for (const e of errors) {
        assert.match(e.path, /^profiles\.ED-588\.tags\./);
        assert.match(e.rule, /\(profile "ED-588" is shipped with nines: profiles\/ED-588\.yaml\)$/);
      }
    });
  });
});
