'use strict';

/**
 * Every fenced block of README.md and docs/*.md is checked (test/docs/snippets.js says which
 * pages and how a block is marked):
 * - the walkthrough of docs/getting-started.md runs as written, on free ports: its simulator, its
 *   gateway.yaml, `nines run`, `nines watch` and `mosquitto_sub`, until values and percentiles arrive;
 * - yaml: a gateway config passes `nines run --check` (a section alone inside a minimal config);
 * - json: a payload has the fields, and their types, of what the gateway published above;
 * - sh: every `nines` command passes its command's own argument parser; the ones that end quickly
 *   (sim, probe, plot, run --check) really run against simulators started here; npm scripts,
 *   files, apt packages and mosquitto_sub options must exist;
 * - js compiles; promql passes `promtool check rules`; a csv tag sheet parses; a program's output
 *   matches what it printed in the walkthrough.
 * A block the test cannot check must be marked `<!-- unchecked: why -->`; their count is held small.
 */

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const vm = require('node:vm');
const { spawn, execFileSync } = require('node:child_process');
const YAML = require('yaml');
const { ROOT, docPages, blocksOf, shellCommands, ninesArgs, withOption } = require('./snippets');
const { TOOLS } = require('../helpers/system-tools');
const { until } = require('../helpers/wait');
const { NINES_BIN } = require('../helpers/nines-cli');

/** Blocks marked unchecked, at most: a new one needs a reason good enough to raise this */
const MAX_UNCHECKED = 2;
/**
 * The passwords a config takes from the environment, as its comments say (`# NINES_…=…`): the
 * section that names a username without a password, and the variable that then holds it
 */
const PASSWORD_ENV = [
  [(c) => c.mqtt && c.mqtt.embedded, 'NINES_MQTT_EMBEDDED_PASSWORD'],
  [(c) => c.mqtt, 'NINES_MQTT_PASSWORD'],
  [(c) => c.gateway && c.gateway.http, 'NINES_HTTP_PASSWORD'],
  [(c) => c.gateway && c.gateway.metrics, 'NINES_METRICS_PASSWORD']
];

/**
 * A child process, resolved once its output matches `ready`.
 * @param {string} file program
 * @param {string[]} args
 * @param {{cwd?: string, ready?: RegExp, timeoutMs?: number}} [o]
 * @returns {Promise<{child: import('node:child_process').ChildProcess, match: RegExpExecArray|null, out: () => string, exited: Promise<number|null>}>}
 */
function start (file, args, { cwd = ROOT, ready = null, timeoutMs = 15000 } = {}) {
  const child = spawn(file, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const done = (match) => { clearTimeout(timer); resolve({ child, match, out: () => out, exited }); };
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`${path.basename(file)} ${args.join(' ')}: not ready in ${timeoutMs} ms:\n${out}`)); }, timeoutMs);
    const onData = (d) => {
      out += d;
      const m = ready && ready.exec(out);
      if (m) done(m);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    if (!ready) done(null);
    child.once('exit', (code) => { if (ready && !ready.exec(out)) { clearTimeout(timer); reject(new Error(`${path.basename(file)} ${args.join(' ')} exited with ${code}:\n${out}`)); } });
  });
}

/**
 * Runs `nines <args>` to its end, in a child process.
 * @param {string[]} args
 * @param {{cwd?: string, timeoutMs?: number}} [o]
 * @returns {Promise<{code: number|null, out: string}>}
 */
async function nines (args, { cwd = ROOT, timeoutMs = 30000 } = {}) {
  const p = await start(process.execPath, [NINES_BIN, ...args], { cwd, timeoutMs });
  const timer = setTimeout(() => p.child.kill('SIGKILL'), timeoutMs);
  const code = await p.exited;
  clearTimeout(timer);
  return { code, out: p.out() };
}

/**
 * Runs `nines <args>` in this process, its output captured: for the parser checks and
 * `run --check`, which start nothing.
 * @param {string[]} args
 * @returns {Promise<{code: number, out: string}>} a thrown error becomes code 1 and its message
 */
async function ninesHere (args) {
  const { main } = require('../../gateway/cli');
  let out = '';
  const writes = [process.stdout.write, process.stderr.write];
  process.stdout.write = process.stderr.write = (chunk) => { out += chunk; return true; };
  try {
    return { code: await main(args), out };
  } catch (err) {
    return { code: 1, out: out + `${err.code}: ${err.message}` };
  } finally {
    [process.stdout.write, process.stderr.write] = writes;
  }
}

/**
 * The JSON type of a value, for comparing shapes (null, array, object, number, string, boolean).
 * @param {unknown} v
 * @returns {string}
 */
function typeOf (v) {
  if (v === null) return 'null';
  return Array.isArray(v) ? 'array' : typeof v;
}

/**
 * Asserts that `doc` has the top-level fields of `real`, of the same JSON types (nested objects are
 * compared as objects, not field by field).
 * @param {object} doc the documented payload
 * @param {object} real one published
 * @param {string} where
 * @param {{subset?: boolean}} [o] subset: doc may leave fields out (a shortened example)
 */
function sameShape (doc, real, where, { subset = false } = {}) {
  const shape = (o) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, typeOf(v)]));
  const d = shape(doc);
  const r = shape(real);
  for (const k of Object.keys(d)) assert.ok(k in r, `${where}: "${k}" is not in what the gateway publishes (${Object.keys(r).join(', ')})`);
  if (!subset) for (const k of Object.keys(r)) assert.ok(k in d, `${where}: lacks "${k}", which the gateway publishes`);
  for (const k of Object.keys(d)) assert.equal(d[k], r[k], `${where}: "${k}" is ${d[k]} here, ${r[k]} as published`);
}

describe('docs: every snippet of README.md and docs/ runs', function () {
  this.timeout(120000);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-docs-'));
  /** What the walkthrough's gateway published: topic → the payloads, in order */
  const published = new Map();
  const walk = { subLines: [], watchOut: '' };
  const counts = { checked: 0, unchecked: [] };

  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('the getting-started walkthrough reaches values and percentiles on MQTT, as written', async () => {
    const page = blocksOf('docs/getting-started.md');
    const cmds = page.filter((b) => b.lang === 'sh').flatMap((b) => shellCommands(b.code));
    const nin = (pred) => { const c = cmds.map(ninesArgs).find((a) => a && pred(a)); assert.ok(c, 'the walkthrough lacks a step'); return c; };
    const simArgs = nin((a) => a[0] === 'sim');
    const checkArgs = nin((a) => a[0] === 'run' && a.includes('--check'));
    const runArgs = nin((a) => a[0] === 'run' && !a.includes('--check'));
    const watchArgs = nin((a) => a[0] === 'watch');
    const subArgs = cmds.find((c) => c[0] === 'mosquitto_sub');
    const yamlBlock = page.find((b) => b.mark && b.mark.kind === 'file' && b.mark.arg === 'gateway.yaml');
    assert.ok(subArgs && yamlBlock, 'the walkthrough subscribes with mosquitto_sub and writes gateway.yaml');
    const dir = fs.mkdtempSync(path.join(tmp, 'walk-'));
    const procs = [];
    const t0 = Date.now();
    try {
      // its simulator, on a free port instead of 5020 (the config follows it)
      const sim = await start(process.execPath, [NINES_BIN, ...withOption(simArgs, '--port', '0')], { ready: /modbus\+tcp:\/\/127\.0\.0\.1:(\d+)/ });
      procs.push(sim);
      const yaml = yamlBlock.code.replace(/127\.0\.0\.1:5020/g, `127.0.0.1:${sim.match[1]}`);
      assert.notEqual(yaml, yamlBlock.code, 'the walkthrough config polls the simulator on 127.0.0.1:5020');
      // its embedded broker on a free port instead of 1883: the only line added to the page's config
      assert.ok(!('mqtt' in YAML.parse(yaml)), 'the walkthrough config uses the embedded broker');
      fs.writeFileSync(path.join(dir, 'gateway.yaml'), `${yaml}\nmqtt: { embedded: { port: 0 } }\n`);
      const check = await nines(checkArgs, { cwd: dir });
      assert.equal(check.code, 0, check.out);
      assert.match(check.out, /gateway\.yaml: valid \(2 jobs, 1 devices\)/);

      const gw = await start(process.execPath, [NINES_BIN, ...runArgs], { cwd: dir, ready: /embedded MQTT broker mqtt:\/\/127\.0\.0\.1:(\d+)/ });
      procs.push(gw);
      const port = gw.match[1];
      const sub = await start('mosquitto_sub', [...subArgs.slice(1), '-p', port]);
      procs.push(sub);
      let line = '';
      sub.child.stdout.on('data', (d) => {
        const parts = (line + d).split('\n');
        line = parts.pop();
        for (const l of parts) {
          walk.subLines.push(l);
          const sp = l.indexOf(' ');
          const topic = l.slice(0, sp);
          if (!published.has(topic)) published.set(topic, []);
          published.get(topic).push(JSON.parse(l.slice(sp + 1)));
        }
      });
      // --duration bounds a watch that never shows both jobs; once it has shown them, Ctrl-C ends it
      // as a user would, rather than waiting out a duration long enough for a loaded machine
      const watch = await start(process.execPath, [NINES_BIN, ...watchArgs, `mqtt://127.0.0.1:${port}`, '--duration', '20s'], { cwd: dir });
      procs.push(watch);
      const has = (t) => published.has(`nines/edge-1/${t}`);
      await until(() => has('plc1-tags/value') && has('plc1-raw/value'), 'values of both jobs on MQTT', 15000);
      const valuesAfterMs = Date.now() - t0;
      await until(() => has('plc1-tags/latency') && has('plc1-raw/latency'), 'latency summaries of both jobs on MQTT', 20000);
      const percentilesAfterMs = Date.now() - t0;
      await until(() => ['plc1-tags', 'plc1-raw'].every((job) => watch.out().includes(job)) || watch.child.exitCode !== null, 'nines watch showing both jobs', 20000);
      watch.child.kill('SIGINT');
      assert.equal(await watch.exited, 0, watch.out());
      walk.watchOut = watch.out();

      // Ctrl-C: the last interval goes out, then the status says offline
      gw.child.kill('SIGINT');
      assert.equal(await gw.exited, 0, gw.out());
      await until(() => (published.get('nines/edge-1/status') || []).some((s) => s.state === 'offline'), 'the status offline after Ctrl-C', 5000);
      console.log(`      walkthrough: values after ${(valuesAfterMs / 1000).toFixed(1)} s, percentiles after ${(percentilesAfterMs / 1000).toFixed(1)} s`);
    } finally {
      for (const p of procs) p.child.kill('SIGTERM');
      await Promise.all(procs.map((p) => p.exited));
    }
    const raw = published.get('nines/edge-1/plc1-raw/value')[0];
    assert.ok(Array.isArray(raw.values) && raw.values.length === 2, JSON.stringify(raw));
    const tags = published.get('nines/edge-1/plc1-tags/value')[0];
    assert.deepEqual(Object.keys(tags.values), ['counter', 'wave']);
    assert.deepEqual(tags.quality, { counter: 'ok', wave: 'ok' });
    for (const job of ['plc1-tags', 'plc1-raw']) {
      const s = published.get(`nines/edge-1/${job}/latency`)[0];
      assert.ok(s.ok > 0 && s.p99 > 0 && s.max >= s.p99, JSON.stringify(s));
      assert.match(walk.watchOut, new RegExp(job), `nines watch shows ${job}:\n${walk.watchOut}`);
    }
    // the states a device goes through, as the integrations page lists them: up, then closed at stop
    const states = published.get('nines/edge-1/status').map((s) => s.devices.plc1 && s.devices.plc1.state);
    assert.ok(states.includes('up') && states.includes('closed'), `device states seen: ${states}`);
  });

  /**
   * Checks one block; returns false for a block it cannot check.
   * @param {import('./snippets').Block} b
   * @param {string} dir the page's working folder (its file blocks are written there)
   */
  async function checkBlock (b, dir) {
    const where = `${b.page}:${b.line}`;
    // a file of another kind (an openssl extension file): checked by the page's commands that read it
    if (b.mark && b.mark.kind === 'file' && !['yaml', 'json', 'csv'].includes(b.lang)) return true;
    if (b.lang === 'yaml') {
      const doc = YAML.parse(b.code);
      if (b.mark && b.mark.kind === 'fragment') return true;
      // a section alone is checked inside the smallest config that completes it
      const config = { ...doc };
      if (!config.devices) config.devices = { plc1: { target: 'modbus+tcp://127.0.0.1:5020?unitId=1' } };
      // a device's scan classes are its jobs (docs/tags.md "Scan classes"): such a config is complete
      const scans = (m) => Object.values(m || {}).some((x) => x && x.scan);
      if (!config.jobs && !scans(config.devices) && !scans(config.profiles)) {
        const [name, dev] = Object.entries(config.devices)[0];
        const op = /^ascii:/.test(dev.target) ? { command: '@01' } : { read: { fc: 3, address: 0, quantity: 1 } };
        config.jobs = [{ name: 'docs-job', device: name, rate: '1/s', ...op }];
      }
      const file = path.join(dir, b.mark && b.mark.kind === 'file' ? b.mark.arg : `block-${b.line}.yaml`);
      fs.writeFileSync(file, YAML.stringify(config));
      const env = PASSWORD_ENV.filter(([section]) => { const x = section(config); return x && x.username && !x.password; }).map(([, name]) => name);
      for (const name of env) process.env[name] = 'docs-test-password';
      try {
        const r = await ninesHere(['run', file, '--check']);
        assert.equal(r.code, 0, `${where}: nines run --check: ${r.out}`);
      } finally {
        for (const name of env) delete process.env[name];
      }
      return true;
    }
    if (b.lang === 'json') {
      const doc = JSON.parse(b.code);
      if (!b.mark || b.mark.kind !== 'payload') return true;
      sameShape(doc, publishedPayload(b.mark.arg), `${where} (${b.mark.arg})`);
      return true;
    }
    if (b.lang === 'sh') {
      for (const words of shellCommands(b.code)) await checkCommand(words, dir, where);
      return true;
    }
    if (b.lang === 'js') {
      new vm.Script(b.code, { filename: where }); // compiles, or throws the syntax error
      return true;
    }
    if (b.lang === 'promql') {
      const rules = path.join(dir, `rules-${b.line}.yml`);
      fs.writeFileSync(rules, YAML.stringify({ groups: [{ name: 'docs', rules: [{ record: 'docs:check', expr: b.code.trim() }] }] }));
      execFileSync('promtool', ['check', 'rules', rules], { stdio: 'pipe' });
      return true;
    }
    if (b.lang === 'csv') {
      const { parseTagSheet } = require('../../gateway/tags/csv');
      assert.ok(parseTagSheet(b.code).tags.length > 0, where);
      return true;
    }
    if (b.lang === 'text' && b.mark && b.mark.kind === 'output of' && b.mark.arg === 'mosquitto_sub') {
      for (const l of b.code.split('\n')) {
        const sp = l.indexOf(' ');
        const topic = l.slice(0, sp);
        assert.ok(published.has(topic), `${where}: the walkthrough published nothing on ${topic}`);
        sameShape(JSON.parse(l.slice(sp + 1)), published.get(topic)[0], `${where} ${topic}`, { subset: true });
      }
      return true;
    }
    return false;
  }

  /**
   * A payload of a kind the integrations page documents, as the walkthrough's gateway published it
   * (an error payload from the publisher's own builder: the walkthrough has none).
   * @param {string} kind
   * @returns {object}
   */
  function publishedPayload (kind) {
    const topic = { 'value-raw': 'plc1-raw/value', 'value-tags': 'plc1-tags/value', latency: 'plc1-raw/latency', status: 'status' }[kind];
    if (topic) {
      const list = published.get(`nines/edge-1/${topic}`);
      assert.ok(list, `the walkthrough published no ${kind}`);
      return kind === 'status' ? list.find((s) => s.state === 'online' && s.devices.plc1) : list[0];
    }
    assert.equal(kind, 'error', `unknown payload kind ${kind}`);
    const { errorPayload, errorDigest } = require('../../gateway/runtime/mqtt/payloads');
    const { NinesError } = require('../../gateway/base/errors');
    return JSON.parse(errorPayload('edge-1', 'j', errorDigest(new NinesError('NINES_ERR_NOT_CONNECTED', 'x', { repeated: 5 }))));
  }

  let mosquittoHelp = null;
  /**
   * Checks one shell command: its program and options exist; the quick ones run.
   * @param {string[]} words
   * @param {string} dir
   * @param {string} where
   */
  async function checkCommand (words, dir, where) {
    const cmd = `${where}: ${words.join(' ')}`;
    const args = ninesArgs(words);
    if (args) {
      const parsed = await ninesHere([...args, '--help']);
      assert.equal(parsed.code, 0, `${cmd}: ${parsed.out}`);
      assert.match(parsed.out, /^Usage: nines/, cmd);
      await runQuick(args, dir, cmd);
      return;
    }
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    if (words[0] === 'npm') {
      const script = words[1] === 'run' ? words[2] : words[1];
      if (script === 'install') return;
      assert.ok(pkg.scripts[script], `${cmd}: package.json has no script "${script}"`);
      return;
    }
    if (words[0] === 'node') {
      assert.ok(fs.existsSync(path.join(ROOT, words[1])), `${cmd}: no file ${words[1]}`);
      return;
    }
    const apt = words[0] === 'sudo' ? words.slice(1) : words;
    if (apt[0] === 'apt-get' && apt[1] === 'install') {
      const known = new Set(Object.values(TOOLS).flatMap((t) => t.pkg.split(' ')));
      for (const p of apt.slice(2)) assert.ok(known.has(p), `${cmd}: ${p} is not a package of test/helpers/system-tools.js`);
      return;
    }
    if (words[0] === 'openssl') {
      // certificates made as the page says (docs/tls.md), in the page's folder: its config and commands use them
      execFileSync('openssl', words.slice(1), { cwd: dir, stdio: 'pipe' });
      return;
    }
    if (words[0] === 'mosquitto_sub') {
      if (mosquittoHelp === null) {
        // --help exits with 1 and prints to stdout
        try { execFileSync('mosquitto_sub', ['--help'], { stdio: 'pipe' }); } catch (err) { mosquittoHelp = String(err.stdout); }
      }
      for (const w of words.filter((x) => x.startsWith('-'))) assert.ok(mosquittoHelp.includes(` ${w} `), `${cmd}: mosquitto_sub has no option ${w}`);
      return;
    }
    assert.fail(`${cmd}: a command this test cannot check; mark its block <!-- unchecked: why -->`);
  }

  /**
   * Runs the `nines` commands that end quickly, against simulators started here on free ports.
   * @param {string[]} args
   * @param {string} dir
   * @param {string} cmd
   */
  async function runQuick (args, dir, cmd) {
    const [name, first] = args;
    if (name === 'sim' && ['ascii', 'modbus', 'rtutcp'].includes(first)) {
      const r = await nines([...withOption(withOption(args, '--port', '0'), '--duration', '1s')], { cwd: dir });
      assert.equal(r.code, 0, `${cmd}: ${r.out}`);
      assert.match(r.out, /:\/\/127\.0\.0\.1:\d+/, cmd);
    } else if (name === 'run' && args.includes('--check')) {
      const file = args.find((a, i) => i > 0 && !a.startsWith('-'));
      const at = [path.join(dir, file), path.join(ROOT, file)].find((f) => fs.existsSync(f));
      assert.ok(at, `${cmd}: no ${file} on its page or in the repository`);
      const r = await ninesHere(['run', at, '--check']);
      assert.equal(r.code, 0, `${cmd}: ${r.out}`);
    } else if (name === 'probe') {
      const scheme = /^([a-z+]+):\/\/127\.0\.0\.1:\d+/.exec(first);
      if (!scheme) return;
      const kind = { ascii: 'ascii', 'modbus+tcp': 'modbus', 'modbus+rtutcp': 'rtutcp' }[scheme[1]];
      const sim = await start(process.execPath, [NINES_BIN, 'sim', kind, '--port', '0'], { ready: /:\/\/127\.0\.0\.1:(\d+)/ });
      try {
        const target = first.replace(/127\.0\.0\.1:\d+/, `127.0.0.1:${sim.match[1]}`);
        const r = await nines(withOption(['probe', target, ...args.slice(2)], '--count', '10'), { cwd: dir });
        assert.equal(r.code, 0, `${cmd}: ${r.out}`);
      } finally {
        sim.child.kill('SIGTERM');
        await sim.exited;
      }
    } else if (name === 'plot') {
      // the files it plots are those a probe on its page wrote
      const inputs = args.slice(1).filter((a, i, all) => !a.startsWith('-') && all[i - 1] !== '-o' && all[i - 1] !== '--title');
      for (const f of inputs) assert.ok(fs.existsSync(path.join(dir, f)), `${cmd}: ${f} was not written by the page's probe (${fs.readdirSync(dir)})`);
      const r = await nines(args, { cwd: dir });
      assert.equal(r.code, 0, `${cmd}: ${r.out}`);
    }
  }

  for (const page of docPages()) {
    it(`${page}: every block is checked`, async () => {
      const dir = fs.mkdtempSync(path.join(tmp, path.basename(page, '.md') + '-'));
      const blocks = blocksOf(page);
      // the files a page's other blocks use are written first
      for (const b of blocks) if (b.mark && b.mark.kind === 'file') fs.writeFileSync(path.join(dir, b.mark.arg), b.code + '\n');
      for (const b of blocks) {
        if (b.mark && b.mark.kind === 'unchecked') { counts.unchecked.push(`${b.page}:${b.line} (${b.mark.arg})`); continue; }
        assert.ok(await checkBlock(b, dir), `${b.page}:${b.line}: a \`${b.lang || 'plain'}\` block this test cannot check; mark it <!-- unchecked: why -->`);
        counts.checked++;
      }
    });
  }

  it(`leaves at most ${MAX_UNCHECKED} blocks unchecked, each marked with its reason`, () => {
    console.log(`      ${counts.checked} blocks checked, ${counts.unchecked.length} unchecked${counts.unchecked.length ? ': ' + counts.unchecked.join('; ') : ''}`);
    assert.ok(counts.checked > 30, `only ${counts.checked} blocks checked`);
    assert.ok(counts.unchecked.length <= MAX_UNCHECKED, counts.unchecked.join('\n'));
  });
});
