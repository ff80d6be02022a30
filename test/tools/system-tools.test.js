'use strict';

/**
 * The check of system tools (test/helpers/system-tools.js), with fake file systems: which programs a
 * test file starts, where a tool is found, and the one install line.
 */

const assert = require('node:assert/strict');
const path = require('node:path');
const tools = require('../helpers/system-tools');

const ROOT = path.join(__dirname, '..', '..');
const at = (rel) => path.join(ROOT, rel);
const nothing = { env: { PATH: '/nonexistent' }, exists: () => false };

describe('system tools the tests need', () => {
  it('finds programs started by name, and the two uses that name none', () => {
    const src = [
      "spawn('socat', ['-d'])",
      "execFile('mbpoll', args, cb)",
      "await promisify(execFile)('npm', ['install'])",
      "execFileSync('ss', ['-Htn'])",
      'spawn(process.execPath, [BIN])',
      'broker = await startMosquitto({ port })',
      'chromium.launch({ executablePath: CHROMIUM, args })'
    ].join('\n');
    assert.deepEqual([...tools.programsIn(src)].sort(), ['chromium', 'mbpoll', 'mosquitto', 'npm', 'socat', 'ss']);
    assert.deepEqual([...tools.programsIn('async function startMosquitto ({ port } = {}) {}')], [], 'a definition is not a use');
  });

  it('follows a test file into the helpers it requires', () => {
    assert.deepEqual([...tools.programsNeededBy(at('test/simulators/modbus-rtu.test.js'))], ['socat']);
    assert.deepEqual([...tools.programsNeededBy(at('test/simulators/modbus-mbpoll.test.js'))].sort(), ['mbpoll', 'socat']);
    assert.deepEqual([...tools.programsNeededBy(at('test/gateway/mqtt-publisher.test.js'))], ['mosquitto']);
    assert.deepEqual([...tools.programsNeededBy(at('test/latency/histogram.test.js'))], []);
  });

  it('names every missing tool with its package and the files that need it, and one install line for all', () => {
    const files = ['test/simulators/modbus-mbpoll.test.js', 'test/modbus/client-rtu.test.js', 'test/gateway/runtime.test.js', 'test/jobs/spec.test.js'].map(at);
    const missing = tools.missingTools(files, nothing);
    assert.deepEqual(missing.map((m) => [m.name, m.pkg]), [['mbpoll', 'mbpoll'], ['mosquitto', 'mosquitto'], ['socat', 'socat']]);
    assert.deepEqual(missing.find((m) => m.name === 'socat').files, ['test/modbus/client-rtu.test.js', 'test/simulators/modbus-mbpoll.test.js']);
    assert.equal(tools.installLine(missing, { root: true }), 'apt-get install mbpoll mosquitto socat');
    assert.equal(tools.installLine(missing, { root: false }), 'sudo apt-get install mbpoll mosquitto socat');
    const text = tools.missingMessage(missing, { root: true });
    assert.match(text, /^missing system tools/);
    assert.match(text, /\n {2}apt-get install mbpoll mosquitto socat\n/);
    assert.equal(tools.missingTools(files, { env: { PATH: '/bin' }, exists: () => true }).length, 0);
  });

  it('maps a program to the package that has it (ss is iproute2)', () => {
    const missing = tools.missingTools([at('test/e2e/node-red-scale.test.js')], nothing);
    assert.deepEqual(missing.map((m) => [m.name, m.pkg]), [['ss', 'iproute2']]);
  });

  it('looks where the tests look: PATH, /usr/sbin for mosquitto, $MOSQUITTO_BIN alone, a fixed chromium path', () => {
    const only = (...files) => (f) => files.includes(f);
    assert.equal(tools.locate('socat', { env: { PATH: '/a:/b' }, exists: only('/b/socat') }), '/b/socat');
    assert.equal(tools.locate('socat', { env: { PATH: '/a' }, exists: only('/usr/sbin/socat') }), null);
    assert.equal(tools.locate('mosquitto', { env: { PATH: '/a' }, exists: only('/usr/sbin/mosquitto') }), '/usr/sbin/mosquitto');
    assert.equal(tools.locate('mosquitto', { env: { PATH: '/usr/sbin', MOSQUITTO_BIN: '/x/mosq' }, exists: only('/usr/sbin/mosquitto') }), null,
      'a wrong $MOSQUITTO_BIN is missing, as test/helpers/mosquitto.js would find');
    assert.equal(tools.locate('chromium', { env: { PATH: '/opt/bin' }, exists: only('/opt/bin/chromium') }), null,
      'test/editor launches /usr/bin/chromium, whatever PATH says');
    assert.equal(tools.locate('chromium', { env: {}, exists: only('/usr/bin/chromium') }), '/usr/bin/chromium');
  });

  it('assertTools throws the same message, coded, for a helper about to start a program', () => {
    assert.throws(() => tools.assertTools(['socat', 'mbpoll'], nothing), (err) => {
      assert.equal(err.code, 'MISSING_SYSTEM_TOOLS');
      assert.match(err.message, /apt-get install mbpoll socat/);
      return true;
    });
    assert.doesNotThrow(() => tools.assertTools(['socat'], { env: { PATH: '/bin' }, exists: () => true }));
  });

  it('the README\'s install line has the package of every program the suite starts', () => {
    const fs = require('node:fs');
    const readme = fs.readFileSync(at('README.md'), 'utf8').replace(/\s+/g, ' ');
    const m = /`apt-get install ([a-z0-9 -]+)`/.exec(readme);
    assert.ok(m, 'README gives an apt-get install line');
    const files = fs.readdirSync(at('test'), { recursive: true }).filter((f) => f.endsWith('.test.js')).map((f) => at(path.join('test', f)));
    const cache = new Map();
    // npm comes with Node (the suite is started with it)
    const pkgs = new Set(files.flatMap((f) => [...tools.programsNeededBy(f, cache)]).filter((p) => p !== 'npm').flatMap((p) => tools.TOOLS[p].pkg.split(' ')));
    assert.deepEqual(m[1].split(' ').sort(), [...pkgs].sort());
  });

  it('knows a package for every program the suite starts (a new program gets one here)', () => {
    const fs = require('node:fs');
    const files = fs.readdirSync(at('test'), { recursive: true }).filter((f) => f.endsWith('.test.js')).map((f) => at(path.join('test', f)));
    const cache = new Map();
    const programs = new Set(files.flatMap((f) => [...tools.programsNeededBy(f, cache)]));
    for (const p of programs) assert.ok(tools.TOOLS[p], `a test starts "${p}", which test/helpers/system-tools.js TOOLS does not describe`);
    for (const p of ['socat', 'mosquitto', 'mbpoll', 'chromium', 'ss']) assert.ok(programs.has(p), `${p} is found in the suite`);
  });
});
