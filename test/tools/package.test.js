'use strict';

/**
 * package.json and CI hygiene: scripts point at tests that exist, dependencies are declared where
 * they are used, and CI never stops other people's processes.
 */

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

/** Every .js file under the folders package.json ships ("files"). */
function shippedSources () {
  return pkg.files.filter((f) => f.endsWith('/') && ['bin/', 'gateway/', 'nodes/'].includes(f))
    .flatMap((dir) => fs.readdirSync(path.join(ROOT, dir), { recursive: true })
      .filter((f) => f.endsWith('.js'))
      .map((f) => path.join(dir, f)));
}

describe('package.json', () => {
  it('test:long runs test/long, which holds tests, and npm test leaves it out', () => {
    assert.match(pkg.scripts['test:long'], /'test\/long\/\*\*\/\*\.test\.js'/);
    const long = fs.readdirSync(path.join(ROOT, 'test', 'long'), { recursive: true }).filter((f) => f.endsWith('.test.js'));
    assert.ok(long.length >= 1, 'test/long has tests');
    assert.match(pkg.scripts.test, /--ignore 'test\/long\/\*\*'/);
  });

  it('modbus-serial is a dev dependency: nothing shipped requires it', () => {
    assert.equal((pkg.dependencies || {})['modbus-serial'], undefined);
    assert.ok(pkg.devDependencies['modbus-serial'], 'tests and benches use it');
    const users = shippedSources().filter((f) => /require\(\s*['"]modbus-serial['"]/.test(fs.readFileSync(path.join(ROOT, f), 'utf8')));
    assert.deepEqual(users, []);
  });

  it('serialport is declared, as optional, and loaded lazily where shipped code needs it', () => {
    // optional: a native module that may fail to build; TCP users never load it, RTU users get
    // NINES_ERR_SERIAL_UNAVAILABLE (gateway/drivers/modbus/rtu-transport.js, simulators/modbus/serial-port.js)
    assert.ok(pkg.optionalDependencies && pkg.optionalDependencies.serialport, 'optionalDependencies.serialport');
    assert.equal((pkg.dependencies || {}).serialport, undefined, 'declared in one place only');
    const topLevel = shippedSources().filter((f) => /^(?:const|let|var)\b.*require\(\s*['"]serialport['"]/m.test(fs.readFileSync(path.join(ROOT, f), 'utf8')));
    assert.deepEqual(topLevel, [], 'no module-level require of serialport');
    assert.equal(require('serialport/package.json').version.split('.')[0], pkg.optionalDependencies.serialport.replace(/^\D*/, '').split('.')[0]);
  });

  it('pins hdr-histogram-js to the tested version, whose internals gateway/latency uses', () => {
    const want = pkg.dependencies['hdr-histogram-js'];
    assert.match(want, /^\d+\.\d+\.\d+$/, `an exact version, not a range: ${want}`);
    assert.equal(require('hdr-histogram-js/package.json').version, want, 'installed = pinned (npm install)');
  });

  it('the lock file agrees with package.json on the moved and pinned dependencies', () => {
    const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8'));
    const root = lock.packages[''];
    assert.equal(root.dependencies['hdr-histogram-js'], pkg.dependencies['hdr-histogram-js']);
    assert.equal(root.dependencies['modbus-serial'], undefined);
    assert.equal(root.devDependencies['modbus-serial'], pkg.devDependencies['modbus-serial']);
    assert.equal(root.optionalDependencies.serialport, pkg.optionalDependencies.serialport);
    assert.equal(lock.packages['node_modules/modbus-serial'].dev, true);
  });
});

describe('.ci/run', () => {
  const ci = fs.readFileSync(path.join(ROOT, '.ci', 'run'), 'utf8');
  const code = ci.split('\n').filter((l) => !/^\s*#/.test(l)).join('\n');

  it('never kills or stops processes by name (the tests use their own ports)', () => {
    assert.doesNotMatch(code, /\b(?:pkill|killall)\b/);
    assert.doesNotMatch(code, /systemctl\s+stop/);
  });

  it('installs the system tools the test check asks for', () => {
    assert.match(code, /node test\/helpers\/system-tools\.js/);
  });
});
