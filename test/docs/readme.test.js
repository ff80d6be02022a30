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

  it('gateway.md\'s config reference names every key of the config schema, in its section', () => {
    const { schema } = require('../../gateway/runtime/config/schema');
    const text = read('docs/gateway.md').replace(/&lt;/g, '<').replace(/&gt;/g, '>');
    const ref = text.slice(text.indexOf('## Config reference'));
    const sections = new Map([...ref.matchAll(/^### (\S+)\n([\s\S]*?)(?=^##)/gm)].map((m) => [m[1], m[2]]));
    const paths = [];
    // every property path of the schema: objects' properties, maps of names (<name>) and lists ([])
    const walk = (node, at) => {
      if (!node || typeof node !== 'object') return;
      for (const k of ['then', 'else']) walk(node[k], at);
      for (const k of ['oneOf', 'anyOf', 'allOf']) for (const n of node[k] || []) walk(n, at);
      for (const [k, v] of Object.entries(node.properties || {})) { paths.push(at ? `${at}.${k}` : k); walk(v, at ? `${at}.${k}` : k); }
      if (node.additionalProperties && typeof node.additionalProperties === 'object') walk(node.additionalProperties, `${at}.<name>`);
      for (const v of Object.values(node.patternProperties || {})) walk(v, `${at}.<name>`);
      walk(node.items, `${at}[]`);
    };
    walk(schema, '');
    assert.ok(paths.length > 100, `${paths.length} keys found in the schema`);
    for (const p of paths) {
      const section = [...sections.keys()].filter((s) => p.startsWith(s.endsWith('[]') ? s : `${s}.`)).sort((a, b) => b.length - a.length)[0];
      if (section === undefined) { assert.ok(sections.has(p) || ['devices', 'jobs', 'profiles'].includes(p), `${p}: no section of the config reference holds it`); continue; }
      const rel = p.slice(section.length).replace(/^\./, '');
      assert.ok(sections.get(section).includes(`\`${rel}\``), `the config reference's ${section} section does not name \`${rel}\` (${p})`);
    }
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
