'use strict';

/**
 * A run on a machine without the tools: mocha itself, in a child process with an empty PATH, as
 * `npm test` or `npx mocha <file>` would start it. It must stop before the first test with the
 * names and the install line, never run into a test's timeout.
 */

const assert = require('node:assert/strict');
const path = require('node:path');
const { execFile } = require('node:child_process');

const ROOT = path.join(__dirname, '..', '..');
const MOCHA = require.resolve('mocha/bin/mocha.js');

/** Runs mocha from the project root (so .mocharc.js and its root hook apply) without any system tool on PATH. */
function mochaWithoutTools (args) {
  const env = { ...process.env, PATH: '/nonexistent', MOSQUITTO_BIN: '/nonexistent/mosquitto' };
  const t0 = Date.now();
  return new Promise((resolve) => {
    execFile(process.execPath, [MOCHA, ...args], { cwd: ROOT, env, timeout: 60000 }, (err, stdout, stderr) => {
      resolve({ code: err ? err.code : 0, out: stdout + stderr, ms: Date.now() - t0 });
    });
  });
}

describe('a test run on a machine without the system tools', function () {
  this.timeout(60000);

  it('a suite run alone stops before its first test, within 5 s, naming the tools and the install line', async () => {
    const r = await mochaWithoutTools(['test/simulators/modbus-mbpoll.test.js']);
    assert.notEqual(r.code, 0, r.out);
    assert.match(r.out, /missing system tools/);
    assert.match(r.out, /^ {2}mbpoll +a libmodbus master/m);
    assert.match(r.out, /^ {2}socat +linked pseudo-terminals/m);
    assert.match(r.out, /apt-get install mbpoll socat\n/);
    assert.match(r.out, /\b0 passing\b/);
    assert.doesNotMatch(r.out, /✔|pending/, 'no test started');
    assert.ok(r.ms < 5000, `took ${r.ms} ms`);
  });

  it('the whole suite (npm test\'s file set) stops the same way, naming every missing tool once', async () => {
    const r = await mochaWithoutTools(['test/**/*.test.js', '--ignore', 'test/long/**']);
    assert.notEqual(r.code, 0, r.out);
    // chromium stays: test/editor launches a fixed path, /usr/bin/chromium, which PATH does not hide
    const line = /apt-get install ([a-z0-9 -]+)\n/.exec(r.out);
    assert.ok(line, r.out);
    for (const pkg of ['iproute2', 'mbpoll', 'mosquitto', 'npm', 'openssl', 'socat']) assert.ok(line[1].split(' ').includes(pkg), `${pkg} in "${line[0]}"`);
    assert.match(r.out, /\b0 passing\b/);
    assert.doesNotMatch(r.out, /✔/, 'no test started');
    // about 1.6 s on an idle 2-core VM (mocha loads every file first); the bound leaves room for load
    assert.ok(r.ms < 10000, `took ${r.ms} ms`);
  });

  it('npm test checks first, once for the run: its mocha runs files in parallel, where the hook runs per file', async () => {
    const pkg = require(path.join(ROOT, 'package.json'));
    assert.match(pkg.scripts.test, /^node test\/helpers\/system-tools\.js --check && mocha --parallel /);
    const env = { ...process.env, PATH: '/nonexistent', MOSQUITTO_BIN: '/nonexistent/mosquitto' };
    const r = await new Promise((resolve) => {
      execFile(process.execPath, ['test/helpers/system-tools.js', '--check'], { cwd: ROOT, env, timeout: 30000 }, (err, stdout, stderr) => {
        resolve({ code: err ? err.code : 0, out: stdout + stderr });
      });
    });
    assert.equal(r.code, 1, r.out);
    assert.equal(r.out.match(/missing system tools/g).length, 1, r.out);
    const line = /apt-get install ([a-z0-9 -]+)\n/.exec(r.out);
    assert.ok(line, r.out);
    for (const pkgName of ['iproute2', 'mbpoll', 'mosquitto', 'npm', 'openssl', 'socat']) assert.ok(line[1].split(' ').includes(pkgName), `${pkgName} in "${line[0]}"`);
    // this machine has them all: the same check lets the run go ahead
    const ok = await new Promise((resolve) => execFile(process.execPath, ['test/helpers/system-tools.js', '--check'], { cwd: ROOT }, (err) => resolve(err ? err.code : 0)));
    assert.equal(ok, 0);
  });

  it('a run whose files need no tool goes ahead on the same machine', async () => {
    const r = await mochaWithoutTools(['test/jobs/spec.test.js']);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /\b\d+ passing\b/);
  });
});
