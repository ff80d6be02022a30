'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { CODES } = require('../../gateway/base/errors');

const ROOT = path.join(__dirname, '..', '..');
const read = (file) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const readme = read('README.md');
/** The README is the front door: what nines is, the two commands, the walkthrough, and links */
const README_MAX_LINES = 250;

/**
 * A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens.
 * @param {string} heading the heading's text, without its #s
 * @returns {string}
 */
function slug (heading) {
  return heading.trim().toLowerCase().replace(/&[a-z]+;/g, '').replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

/**
 * The relative links of a markdown file (not http:, not mailto:), with the file they point at.
 * @param {string} file relative to the repository root
 * @returns {Array<{link: string, target: string, anchor: string}>}
 */
function linksOf (file) {
  const text = read(file).replace(/```[\s\S]*?```/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]).filter((l) => !/^[a-z]+:/.test(l)).map((link) => {
    const [p, anchor = ''] = link.split('#');
    return { link, target: p ? path.normalize(path.join(path.dirname(file), p)) : file, anchor };
  });
}

describe('README', () => {
  it('gives the two set-up commands on its first screen, and package.json runs them', () => {
    const firstScreen = readme.split('\n').slice(0, 20).join('\n');
    assert.match(firstScreen, /npm install && npm start/);
    assert.match(firstScreen, /npm test/);
    const pkg = JSON.parse(read('package.json'));
    assert.match(pkg.scripts.start, /nines\.js run$/);
    assert.ok(pkg.scripts.test);
    assert.match(read('.ci/run'), /\bnpm test\b/);
  });

  it(`is at most ${README_MAX_LINES} lines, and links every page of docs/`, () => {
    const lines = readme.split('\n').length;
    assert.ok(lines <= README_MAX_LINES, `README.md has ${lines} lines`);
    const linked = new Set(linksOf('README.md').map((l) => l.target));
    const pages = fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => path.join('docs', f));
    for (const page of pages) assert.ok(linked.has(page), `README.md does not link ${page}`);
  });

  it('names no error code that does not exist', () => {
    for (const code of readme.match(/NINES_ERR_[A-Z_]+/g) || []) assert.ok(CODES[code], `README names ${code}, which gateway/base/errors.js does not define`);
  });
});

describe('docs/', () => {
  it('error-codes.md documents every error code with its meaning, and no code that does not exist', () => {
    const table = read('docs/error-codes.md');
    for (const [code, { meaning }] of Object.entries(CODES)) {
      assert.ok(table.includes(`| \`${code}\` | ${meaning} |`), `${code} missing or its meaning differs from gateway/base/errors.js`);
    }
    for (const code of table.match(/NINES_ERR_[A-Z_]+/g) || []) assert.ok(CODES[code], `docs/error-codes.md names ${code}, which gateway/base/errors.js does not define`);
  });

  it('every relative link of README.md and docs/*.md reaches its file, and its heading', () => {
    const pages = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
    for (const page of pages) {
      for (const { link, target, anchor } of linksOf(page)) {
        assert.ok(fs.existsSync(path.join(ROOT, target)), `${page}: ${link} points at nothing`);
        if (!anchor) continue;
        const headings = read(target).replace(/```[\s\S]*?```/g, '').split('\n').filter((l) => /^#{1,6} /.test(l)).map((l) => slug(l.replace(/^#+ /, '')));
        assert.ok(headings.includes(anchor), `${page}: ${link}: ${target} has no heading #${anchor} (${headings.join(', ')})`);
      }
    }
  });
});
