'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');

describe('the package entry point', () => {
  it('is package.json main, and every export it names loads', () => {
    const pkg = require('../../package.json');
    const api = require(path.join(__dirname, '..', '..', pkg.main));
    const names = Object.keys(api);
    assert.ok(names.length > 20, `only ${names.length} exports`);
    for (const name of names) assert.notEqual(api[name], undefined, `${name} is undefined`);
    assert.equal(typeof api.createClient, 'function');
    assert.equal(typeof api.WorkerPool, 'function');
    assert.equal(new api.NinesError('NINES_ERR_INVALID_ARG', 'x').code, 'NINES_ERR_INVALID_ARG');
  });

  it('loads nothing heavy until a name is touched', () => {
    const { execFileSync } = require('node:child_process');
    const out = execFileSync(process.execPath, ['-e', `
      require(${JSON.stringify(path.join(__dirname, '..', '..'))});
      const loaded = Object.keys(require.cache).filter((f) => /node_modules[\\\\/](mqtt|aedes|yaml|ajv)[\\\\/]/.test(f));
      process.stdout.write(String(loaded.length));
    `], { encoding: 'utf8' });
    assert.equal(out, '0');
  });

  it('keeps only index.js at the root of gateway/', () => {
    const fs = require('node:fs');
    const files = fs.readdirSync(path.join(__dirname, '..', '..', 'gateway'), { withFileTypes: true }).filter((d) => d.isFile()).map((d) => d.name);
    assert.deepEqual(files, ['index.js']);
  });
});
