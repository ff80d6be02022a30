'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { CODES } = require('../../gateway/base/errors');

const ROOT = path.join(__dirname, '..', '..');
const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

describe('README', () => {
  it('documents every error code with its meaning, and no code that does not exist', () => {
    for (const [code, { meaning }] of Object.entries(CODES)) {
      assert.ok(readme.includes(`| \`${code}\` | ${meaning} |`), `${code} missing or its meaning differs from gateway/errors.js`);
    }
    const listed = readme.match(/NINES_ERR_[A-Z_]+/g) || [];
    for (const code of listed) assert.ok(CODES[code], `README names ${code}, which gateway/errors.js does not define`);
  });

  it('gives the two set-up commands on its first screen, and package.json runs them', () => {
    const firstScreen = readme.split('\n').slice(0, 20).join('\n');
    assert.match(firstScreen, /npm install && npm start/);
    assert.match(firstScreen, /npm test/);
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    assert.match(pkg.scripts.start, /nines\.js run$/);
    assert.ok(pkg.scripts.test);
    const ci = fs.readFileSync(path.join(ROOT, '.ci', 'run'), 'utf8');
    assert.match(ci, /\bnpm test\b/);
  });
});
