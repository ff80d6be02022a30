'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { loadConfig, validateConfig, defaults: D } = require('../../gateway/runtime/config');
const { NinesError } = require('../../gateway/base/errors');

/**
 * The config's resource limits: an alias bomb, too many jobs or devices, an oversized file. Each
 * is a NINES_ERR_CONFIG that names the file (and the line when there is one), and each answers
 * before the work it guards against is done: these tests prove that by what was touched, not by
 * wall time.
 */

const DEVICE = 'ed588: { target: "ascii://127.0.0.1:9500" }';
const JOB = '{ name: j, device: ed588, command: "@01", rate: 10/s }';

/** Calls fn, expects NINES_ERR_CONFIG, returns the error. */
function configError (fn) {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof NinesError, err.stack);
    assert.equal(err.code, 'NINES_ERR_CONFIG', err.message);
    return err;
  }
  return assert.fail('expected NINES_ERR_CONFIG');
}

/** An array of `length` whose elements throw when read: proves nothing looked at a single job. */
function untouchableList (length) {
  return new Proxy(new Array(length), {
    get (target, key) {
      if (typeof key === 'string' && /^\d+$/.test(key)) throw new Error(`element ${key} was read`);
      return Reflect.get(target, key);
    }
  });
}

describe('gateway config limits', () => {
  let dir;
  before(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-config-limits-')); });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** Writes text to a file in the temp dir and returns its path. */
  function file (name, text) {
    const p = path.join(dir, name);
    fs.writeFileSync(p, text);
    return p;
  }

  describe('YAML aliases', () => {
    // nine aliases per level, six levels: 9^6 = 531,441 strings if expanded
    const BOMB = [
      'devices: { ' + DEVICE + ' }',
      'jobs: [' + JOB + ']',
      'x1: &a ["l","l","l","l","l","l","l","l","l"]',
      'x2: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
      'x3: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
      'x4: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
      'x5: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
      'x6: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]',
      ''
    ].join('\n');

    it('rejects an alias bomb with NINES_ERR_CONFIG, the file and the line of an alias', () => {
      const p = file('bomb.yaml', BOMB);
      const err = configError(() => loadConfig(p));
      assert.ok(err.message.startsWith(`invalid gateway config ${p}:4:`), err.message);
      assert.match(err.message, /aliases expand too far/);
      assert.equal(err.details.source, p);
      assert.equal(err.details.errors.length, 1);
      assert.equal(err.details.errors[0].line, 4);
      assert.match(err.details.errors[0].rule, /at most 100 alias expansions/);
    });

    it('rejects an alias bomb given as text, as <text>', () => {
      const err = configError(() => loadConfig(BOMB));
      assert.match(err.message, /^invalid gateway config <text>:4:\d+: YAML aliases expand too far/);
    });

    it('uses yaml\'s maxAliasCount: a few aliases are fine, a tree of them is not', () => {
      const YAML = require('yaml');
      // the installed yaml counts each alias use times the aliases inside its anchor
      assert.doesNotThrow(() => YAML.parseDocument('a: &a [1]\nb: [*a, *a, *a]\n').toJS({ maxAliasCount: 100 }));
      assert.throws(() => YAML.parseDocument(BOMB).toJS({ maxAliasCount: 100 }), /Excessive alias count/);
    });

    it('reports an alias with no anchor at that alias, with the code and the file', () => {
      const p = file('unresolved.yaml', `devices: { ${DEVICE} }\njobs: *nope\n`);
      const err = configError(() => loadConfig(p));
      assert.ok(err.message.startsWith(`invalid gateway config ${p}:2:7: `), err.message);
      assert.match(err.message, /Unresolved alias .*: nope/);
    });

    it('still accepts a config that shares settings through an anchor', () => {
      const text = `devices:\n  ed588: &dev { target: "ascii://127.0.0.1:9500" }\n  ed589: *dev\njobs: [${JOB}]\n`;
      assert.deepEqual(Object.keys(loadConfig(text).devices), ['ed588', 'ed589']);
    });
  });

  describe('jobs and devices', () => {
    it('documents the limits in defaults', () => {
      assert.equal(D.CONFIG_MAX_JOBS, 10000);
      assert.equal(D.CONFIG_MAX_DEVICES, 10000);
    });

    it('rejects 200,000 jobs with one problem, without reading a single job', () => {
      const obj = { devices: { ed588: { target: 'ascii://127.0.0.1:9500' } }, jobs: untouchableList(200000) };
      const err = configError(() => validateConfig(obj));
      assert.deepEqual(err.details.errors, [{ path: 'jobs', value: undefined, rule: '200000 jobs; at most 10000 per gateway (split the config across gateways)' }]);
      assert.match(err.message, /\n {2}jobs: 200000 jobs; at most 10000/);
    });

    it('rejects too many devices without reading a single device', () => {
      const devices = {};
      for (let i = 0; i <= D.CONFIG_MAX_DEVICES; i++) {
        Object.defineProperty(devices, `d${i}`, { enumerable: true, get () { throw new Error(`device d${i} was read`); } });
      }
      const err = configError(() => validateConfig({ devices, jobs: [] }));
      assert.deepEqual(err.details.errors.map((e) => [e.path, e.rule]), [['devices', '10001 devices; at most 10000 per gateway (split the config across gateways)']]);
    });

    it('accepts exactly the limit of jobs', () => {
      const jobs = Array.from({ length: D.CONFIG_MAX_JOBS }, (_, i) => ({ name: `j${i}`, device: 'ed588', command: '@01', rate: '10/s' }));
      const config = validateConfig({ devices: { ed588: { target: 'ascii://127.0.0.1:9500' } }, jobs });
      assert.equal(config.jobs.length, D.CONFIG_MAX_JOBS);
    });

    it('counts a YAML file\'s jobs before building them, and points at the jobs key', () => {
      const YAML = require('yaml');
      const jobs = Array.from({ length: D.CONFIG_MAX_JOBS + 1 }, (_, i) => `  - { name: j${i}, device: ed588, command: "@01" }`);
      const p = file('many.yaml', `devices: { ${DEVICE} }\njobs:\n${jobs.join('\n')}\n`);
      const toJS = YAML.Document.prototype.toJS;
      let built = 0;
      YAML.Document.prototype.toJS = function (...args) { built++; return toJS.apply(this, args); };
      let err;
      try {
        err = configError(() => loadConfig(p));
      } finally {
        YAML.Document.prototype.toJS = toJS;
      }
      assert.equal(built, 0, 'the document was turned into objects');
      assert.equal(err.details.errors.length, 1);
      assert.deepEqual(err.details.errors[0], { path: 'jobs', value: undefined, rule: '10001 jobs; at most 10000 per gateway (split the config across gateways)', line: 2, column: 1 });
      assert.match(err.message, new RegExp(`\\n {2}${p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2:1: jobs: 10001 jobs; at most 10000`));
    });

    it('applies the same limit to JSON', () => {
      const jobs = Array.from({ length: D.CONFIG_MAX_JOBS + 1 }, () => ({}));
      const p = file('many.json', JSON.stringify({ devices: { ed588: { target: 'ascii://127.0.0.1:9500' } }, jobs }));
      const err = configError(() => loadConfig(p));
      assert.deepEqual(err.details.errors.map((e) => e.path), ['jobs']);
    });
  });

  describe('file size', () => {
    it('rejects a file over CONFIG_MAX_BYTES with the file and both sizes', () => {
      const p = file('big.yaml', '#'.repeat(D.CONFIG_MAX_BYTES) + '\n');
      const err = configError(() => loadConfig(p));
      assert.equal(err.message, `invalid gateway config ${p}: is ${D.CONFIG_MAX_BYTES + 1} bytes; at most ${D.CONFIG_MAX_BYTES} (4 MiB)`);
      assert.equal(err.details.source, p);
    });

    it('reads no more than the limit from a stream with no size', function () {
      if (!fs.existsSync('/dev/zero')) this.skip();
      const err = configError(() => loadConfig('/dev/zero', { format: 'yaml' }));
      assert.match(err.message, /: is over 4194304 bytes; at most 4194304/);
    });

    it('rejects oversized text and buffers as <text>', () => {
      const text = `devices: { ${DEVICE} }\n` + '#'.repeat(D.CONFIG_MAX_BYTES);
      assert.match(configError(() => loadConfig(text)).message, /^invalid gateway config <text>: is \d+ bytes; at most/);
      assert.match(configError(() => loadConfig(Buffer.from(text))).message, /^invalid gateway config <text>: is \d+ bytes/);
    });

    it('accepts a file of exactly the limit', () => {
      const head = `devices: { ${DEVICE} }\njobs: [${JOB}]\n`;
      const p = file('full.yaml', head + '#'.repeat(D.CONFIG_MAX_BYTES - head.length - 1) + '\n');
      assert.equal(fs.statSync(p).size, D.CONFIG_MAX_BYTES);
      assert.equal(loadConfig(p).jobs.length, 1);
    });
  });
});
