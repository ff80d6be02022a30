'use strict';

/**
 * A clean install, the way a user does it: a fresh Node-RED user directory with only a minimal
 * package.json, `npm install <path to this package>` in it (a directory install: npm links the
 * directory, so it needs no registry; it runs with --offline and an empty cache of its own to prove
 * it), then a real Node-RED 4 started on that user directory. Every nines node type must be
 * registered, enabled and without error, and the log must carry no warning about nines: none that
 * names it, and none that a Node-RED started the same way on a user dir without it does not print
 * (the test harness's own settings draw a few warnings of their own, e.g. unencrypted credentials).
 * package.json must declare the Node-RED and Node.js versions it supports (Node-RED 4 and 5).
 */

const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { promisify } = require('node:util');
const { startNodeRed, PKG } = require('./launch');

const ROOT = path.resolve(__dirname, '..', '..');
const TYPES = Object.keys(PKG['node-red'].nodes).sort();
// NINES_NODE_RED names another Node-RED install (CI runs Node-RED 5 this way)
const NODE_RED_DIR = path.dirname(require.resolve(process.env.NINES_NODE_RED ? path.join(process.env.NINES_NODE_RED, 'package.json') : 'node-red/package.json'));
const NODE_RED_PKG = require(path.join(NODE_RED_DIR, 'package.json'));
/** the semver Node-RED itself uses to check `node-red.version` */
const semver = require(require.resolve('semver', { paths: [NODE_RED_DIR] }));

/** Node-RED 5 requires Node.js 22.9 or later */
const NODE_RED_5_NODE = '>=22.9.0';

/** npm's environment without what a parent `npm test` exports (npm_config_prefix and co. would redirect the install) */
function npmEnv () {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k)) env[k] = v;
  return env;
}

/**
 * Log lines at warn level or above, and runtime warnings, without their time stamps and with the
 * user dir's path replaced, so two runs compare.
 * @param {string} text Node-RED's stdout or stderr
 * @param {string} dir the run's user dir
 * @returns {string[]}
 */
function warnings (text, dir) {
  return text.split('\n')
    .filter((line) => /\[(warn|error|fatal)\]|warning|error/i.test(line))
    .map((line) => line.replace(/^\d+ \w+ [\d:]+ - /, '').split(dir).join('<userDir>'));
}

/** A user dir with the minimal package.json Node-RED creates. */
function makeUserDir (dir) {
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({
    name: 'node-red-project', description: 'A Node-RED Project', version: '0.0.1', private: true
  }, null, 2));
  return dir;
}

describe('clean install into a fresh Node-RED user dir (npm install <path>)', function () {
  this.timeout(60000);
  let tmp;
  let userDir;
  let bareDir;
  let npmResult;
  let nr;
  let bare;

  before(async () => {
    // not named after nines, so the log check below cannot match the temp path
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nr-clean-install-'));
    userDir = makeUserDir(path.join(tmp, 'user'));
    bareDir = makeUserDir(path.join(tmp, 'bare'));
    npmResult = await promisify(execFile)('npm', [
      'install', '--no-audit', '--no-fund', '--offline', '--update-notifier=false',
      '--cache', path.join(tmp, 'npm-cache'), '--prefix', userDir, ROOT
    ], { cwd: userDir, env: npmEnv(), timeout: 30000, shell: process.platform === 'win32' });
    // one after the other, so a failed start leaves nothing running that after() does not know of
    nr = await startNodeRed({ userDir, logLevel: 'warn' });
    bare = await startNodeRed({ userDir: bareDir, logLevel: 'warn' });
  });

  after(async () => {
    await Promise.all([nr && nr.stop(), bare && bare.stop()]);
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('installs from its directory without the registry and becomes a dependency of the user dir', () => {
    const installed = path.join(userDir, 'node_modules', PKG.name);
    // a directory install links the package: the user dir runs this very checkout
    assert.equal(fs.realpathSync(installed), fs.realpathSync(ROOT));
    const userPkg = JSON.parse(fs.readFileSync(path.join(userDir, 'package.json'), 'utf8'));
    assert.match(userPkg.dependencies[PKG.name], /^file:/, JSON.stringify(userPkg));
    assert.ok(fs.existsSync(path.join(userDir, 'node_modules', '.bin', 'nines')), 'the nines CLI is linked into node_modules/.bin');
    assert.doesNotMatch(npmResult.stderr, /ERR!/, npmResult.stderr);
  });

  it('registers every nines node type with Node-RED, enabled and without error', async () => {
    const res = await nr.api('GET', '/nodes');
    assert.equal(res.status, 200);
    const sets = res.body.filter((s) => s.module === PKG.name);
    assert.deepEqual(sets.map((s) => s.name).sort(), TYPES);
    for (const s of sets) {
      assert.equal(s.err, undefined, `${s.id}: ${JSON.stringify(s.err)}`);
      assert.equal(s.enabled, true, s.id);
      assert.equal(s.version, PKG.version, s.id);
    }
    const types = sets.flatMap((s) => s.types).sort();
    assert.equal(types.length, TYPES.length);
    assert.deepEqual(types, TYPES);
    // the module as the palette manager lists it
    const mod = await nr.api('GET', `/nodes/${PKG.name}`);
    assert.equal(mod.status, 200);
    assert.equal(mod.body.version, PKG.version);
    assert.equal(mod.body.nodes.length, TYPES.length);
  });

  it('serves the editor definition and English messages of every type', async () => {
    const html = await fetch(`${nr.url}/nodes`, { headers: { Accept: 'text/html' } }).then((r) => r.text());
    for (const type of TYPES) assert.ok(html.includes(`RED.nodes.registerType('${type}'`), `${type} editor definition`);
    const messages = await nr.api('GET', `/nodes/messages?lng=en-US`);
    assert.equal(messages.status, 200);
    for (const type of TYPES) assert.ok(messages.body[`${PKG.name}/${type}`], `${type} messages`);
  });

  it('serves every file the dialogs load from the package\'s resources (the tag list editor, its style), which it ships', async () => {
    assert.ok(PKG.files.includes('resources/'), 'package.json files ships resources/');
    const loaded = new Set();
    for (const f of fs.readdirSync(path.join(ROOT, 'nodes')).filter((n) => n.endsWith('.html'))) {
      for (const m of fs.readFileSync(path.join(ROOT, 'nodes', f), 'utf8').matchAll(/(?:src|href)="resources\/[^/"]+\/([^"]+)"/g)) loaded.add(m[1]);
    }
    assert.ok(loaded.has('nines-tags.js') && loaded.has('nines-tags.css'), [...loaded].join(', '));
    for (const file of loaded) {
      const res = await fetch(`${nr.url}/resources/${PKG.name}/${file}`);
      assert.equal(res.status, 200, file);
      if (file === 'nines-tags.js') assert.match(await res.text(), /window\.NinesTags = \{/);
      else await res.arrayBuffer();
    }
  });

  it('logs no warning or error while Node-RED loads it', () => {
    const log = `${nr.stdout()}\n${nr.stderr()}`;
    const found = [...warnings(nr.stdout(), userDir), ...warnings(nr.stderr(), userDir)];
    const baseline = new Set([...warnings(bare.stdout(), bareDir), ...warnings(bare.stderr(), bareDir)]);
    // none names the package, its node types or its files…
    assert.deepEqual(found.filter((line) => line.includes('nines') || line.includes(ROOT)), [], log);
    // …and none comes with it: every one is also printed by Node-RED without the package
    assert.deepEqual(found.filter((line) => !baseline.has(line)), [], `with nines:\n${log}\nwithout:\n${bare.stdout()}${bare.stderr()}`);
    assert.doesNotMatch(log, /Missing node modules|Waiting for missing types|cannot be loaded|Failed to register/i, log);
  });

  it('declares node-red.version and engines.node for Node-RED 4 and 5', () => {
    const nrVersion = PKG['node-red'].version;
    const nodeRange = PKG.engines && PKG.engines.node;
    assert.equal(typeof nrVersion, 'string', 'node-red.version');
    assert.equal(typeof nodeRange, 'string', 'engines.node');
    assert.ok(semver.validRange(nrVersion), `node-red.version ${nrVersion} is a semver range`);
    assert.ok(semver.validRange(nodeRange), `engines.node ${nodeRange} is a semver range`);
    // Node-RED checks node-red.version against its own version when it loads the module
    for (const v of [NODE_RED_PKG.version, '4.0.0', '4.1.0', '5.0.0', '5.1.0']) {
      assert.ok(semver.satisfies(v, nrVersion), `Node-RED ${v} satisfies node-red.version ${nrVersion}`);
    }
    // every Node.js that Node-RED 5 runs on is allowed, and the range overlaps Node-RED 4's
    assert.ok(semver.subset(NODE_RED_5_NODE, nodeRange), `Node-RED 5's Node.js ${NODE_RED_5_NODE} within engines.node ${nodeRange}`);
    // the Node-RED under test (4 by default; CI also runs 5): its Node.js range overlaps ours
    const nrNode = NODE_RED_PKG.engines.node;
    assert.ok(semver.intersects(nrNode, nodeRange), `Node-RED ${NODE_RED_PKG.version}'s Node.js ${nrNode} overlaps engines.node ${nodeRange}`);
    if (semver.major(NODE_RED_PKG.version) === 4) {
      assert.ok(semver.gte(semver.minVersion(nodeRange), semver.minVersion(nrNode)), `engines.node ${nodeRange} claims no Node.js older than Node-RED 4 supports`);
    }
    assert.ok(semver.satisfies(process.versions.node, nodeRange), `this Node.js ${process.versions.node} satisfies engines.node`);
  });
});
