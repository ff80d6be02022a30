'use strict';

/**
 * The programs outside Node that tests run (socat, mosquitto, mbpoll, chromium…), checked before
 * any test starts. Loaded by .mocharc.js as a root hook plugin: its `beforeAll` looks at the test
 * files of this run, finds the programs they (and the test helpers they require) start, and fails
 * the run at once when one is missing, naming each and the one `apt-get install` line that adds them
 * all. A missing tool is never a 10–20 s timeout deep inside a test.
 *
 * The programs are found by reading the sources, so a new test that starts a new program is
 * covered without editing a list: a literal program name passed to spawn/execFile/execFileSync
 * (`spawn('socat', …)`), plus two uses that name no program: `startMosquitto(` (test/helpers/
 * mosquitto.js) and a browser `executablePath`. TOOLS below only says how to find each program and
 * which Debian package has it; a program not in TOOLS is looked up on PATH under its own name.
 *
 * Helpers call `assertTools([...])` before starting a program, so a suite run without this hook
 * (another mocha config, or from another directory) fails with the same message.
 *
 * Only node: built-ins here: .ci/run runs this file before `npm ci` to learn what to install.
 */

const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');

/**
 * @typedef {object} Tool
 * @property {string} pkg the Debian/Ubuntu package that provides it
 * @property {string} why what the tests use it for
 * @property {string[]} [paths] fixed paths tried (chromium: test/editor launches /usr/bin/chromium)
 * @property {string[]} [sbin] directories tried after PATH (daemons live in /usr/sbin)
 * @property {string} [envVar] an environment variable naming the binary, tried first and alone
 * @property {string[]} [files] files whose presence is the tool (a Python module of Debian's
 *   python3, which the tests run as /usr/bin/python3): found by stat, not by running anything
 */

/** @type {Record<string, Tool>} */
const TOOLS = {
  socat: { pkg: 'socat', why: 'linked pseudo-terminals for the Modbus RTU tests' },
  mosquitto: { pkg: 'mosquitto', why: 'a real MQTT broker beside the embedded one', sbin: ['/usr/sbin', '/usr/local/sbin', '/opt/homebrew/sbin'], envVar: 'MOSQUITTO_BIN' },
  mosquitto_sub: { pkg: 'mosquitto-clients', why: 'the docs walkthrough subscribes as a reader would (test/docs/snippets.test.js)' },
  mbpoll: { pkg: 'mbpoll', why: 'a libmodbus master against the simulators' },
  openssl: { pkg: 'openssl', why: 'throwaway certificates for the MQTT TLS and Modbus/TCP Security tests, and those docs/tls.md makes' },
  ss: { pkg: 'iproute2', why: 'counting a device\'s TCP connections in the Node-RED scale test' },
  chromium: { pkg: 'chromium', why: 'the Node-RED editor tests (headless)', paths: ['/usr/bin/chromium'] },
  npm: { pkg: 'npm', why: 'the clean-install test' },
  // Debian's pymodbus 3.0 imports serial_asyncio without depending on it
  pymodbus: { pkg: 'python3-pymodbus python3-serial-asyncio', why: 'an independent Modbus client and payload encoder for the interop tests', files: ['/usr/lib/python3/dist-packages/pymodbus/__init__.py', '/usr/lib/python3/dist-packages/serial_asyncio/__init__.py'] },
  prometheus: { pkg: 'prometheus', why: 'a real Prometheus server scraping two gateways\' metrics endpoints' },
  promtool: { pkg: 'prometheus', why: 'promtool check metrics on the metrics endpoint\'s expositions, and the PromQL of the docs' },
  'victoria-metrics': { pkg: 'victoria-metrics', why: 'a real VictoriaMetrics scraping two gateways\' metrics endpoints (text formats only)' },
  sparkplug: { pkg: 'python3-protobuf python3-paho-mqtt', why: 'an independent Sparkplug B host: paho-mqtt and protobuf with Tahu\'s sparkplug_b.proto', files: ['/usr/lib/python3/dist-packages/google/protobuf/__init__.py', '/usr/lib/python3/dist-packages/paho/mqtt/client.py'] },
  unshare: { pkg: 'util-linux', why: 'a private tmpfs that fills up, for the disk-full spool fault test' }
};

/**
 * A program name passed as a literal to a child_process call: spawn('socat', …),
 * promisify(execFile)('npm', …). Matched in code whose string literals are numbered placeholders
 * (codeOf), so `'S12'` stands for the 13th literal
 */
const PROGRAM_RE = /\b(?:spawn|spawnSync|execFile|execFileSync|exec|execSync)\)?\(\s*'S(\d+)'/g;
/** Uses that name no program literally (in code, not in strings or comments) */
const IMPLIED = [
  { re: /\bstartMosquitto\(/, tool: 'mosquitto' },
  { re: /\bexecutablePath\s*:\s*CHROMIUM\b/, tool: 'chromium' },
  { re: /\b(?:runPymodbus|startPymodbus)\w*\(/, tool: 'pymodbus' },
  { re: /\bstartSparkplugHost\(/, tool: 'sparkplug' },
  // prometheus.js starts either scraper through one startScraper(): its spawn names no program
  { re: /\bstartPrometheus\(/, tool: 'prometheus' },
  { re: /\bstartVictoriaMetrics\(/, tool: 'victoria-metrics' }
];
/** After these (the last character of code before a `/`), a `/` starts a regular expression, not a division */
const BEFORE_REGEX = new Set(['', '(', ',', '=', ':', '[', '!', '&', '|', '?', '{', '}', ';', '+', '-', '*', '%', '<', '>', '~', '^', '\n']);
/** Local requires, to follow into test helpers */
const REQUIRE_RE = /\brequire\(\s*'(\.{1,2}\/[^']+)'\s*\)/g;

/**
 * @param {string} file
 * @returns {boolean} whether file is an executable regular file
 */
function executable (file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * Where a tool is, without running anything (a few stat calls).
 * @param {string} name
 * @param {{env?: Record<string, string|undefined>, exists?: (file: string) => boolean}} [opts]
 * @returns {string|null} its path, or null when it is not installed
 */
function locate (name, { env = process.env, exists = executable } = {}) {
  const t = TOOLS[name] || {};
  if (t.files) return t.files.every((f) => fs.existsSync(f)) ? t.files[0] : null;
  if (t.envVar && env[t.envVar]) return exists(env[t.envVar]) ? env[t.envVar] : null;
  if (t.paths) {
    // a fixed path is what the test launches: PATH does not help it
    return t.paths.find(exists) || null;
  }
  const dirs = (env.PATH || '').split(path.delimiter).filter(Boolean).concat(t.sbin || []);
  for (const dir of dirs) {
    const candidate = path.join(dir, name);
    if (exists(candidate)) return candidate;
  }
  return null;
}

/**
 * The programs one source file starts itself (not through its requires).
 * @param {string} source
 * @returns {Set<string>}
 */
function programsIn (source) {
  const { code, literals } = codeOf(source);
  const out = new Set();
  for (const m of code.matchAll(PROGRAM_RE)) {
    const name = literals[Number(m[1])];
    if (/^[A-Za-z0-9_.+-]+$/.test(name)) out.add(name);
  }
  for (const { re, tool } of IMPLIED) if (re.test(code)) out.add(tool);
  return out;
}

/**
 * A source's code with its comments dropped and each string, template and regular-expression
 * literal replaced by a numbered placeholder ('S0', 'S1', …), so that code quoted in a string (a
 * test's fixture such as "spawn('socat', …)") or in a comment is not taken for a use (issue 21:
 * `npm run test:unit` demanded socat, mbpoll and ss because of such fixtures). A small lexer of
 * its own: this file may use node: built-ins only (.ci/run runs it before npm ci).
 * @param {string} source
 * @returns {{code: string, literals: string[]}} literals[i] is the text of placeholder i (a
 *   template's or a regular expression's raw text; a string's without its escapes resolved)
 */
function codeOf (source) {
  const literals = [];
  let code = '';
  let last = '';
  let i = 0;
  const n = source.length;
  // the end of a literal opened at i by quote q (escapes skipped; a regex's classes may hold a `/`)
  const endOf = (q) => {
    let j = i + 1;
    let inClass = false;
    while (j < n) {
      const c = source[j];
      if (c === '\\') { j += 2; continue; }
      if (q === '/' && c === '[') inClass = true;
      else if (q === '/' && c === ']') inClass = false;
      else if (c === q && !inClass) return j;
      else if (c === '\n' && q !== '`') return j - 1; // an unterminated literal ends with its line
      j++;
    }
    return n - 1;
  };
  while (i < n) {
    const c = source[i];
    const d = source[i + 1];
    if (c === '/' && d === '/') {
      const e = source.indexOf('\n', i);
      i = e < 0 ? n : e;
      continue;
    }
    if (c === '/' && d === '*') {
      const e = source.indexOf('*/', i + 2);
      i = e < 0 ? n : e + 2;
      code += ' ';
      continue;
    }
    if (c === "'" || c === '"' || c === '`' || (c === '/' && BEFORE_REGEX.has(last))) {
      const e = endOf(c);
      literals.push(source.slice(i + 1, e));
      code += `'S${literals.length - 1}'`;
      last = 'S';
      i = e + 1;
      continue;
    }
    code += c;
    if (c !== ' ' && c !== '\t' && c !== '\r') last = c;
    i++;
  }
  return { code, literals };
}

/**
 * The programs a test file needs: its own and those of the local modules it requires, transitively.
 * @param {string} file absolute path
 * @param {Map<string, Set<string>>} [cache] file → programs, shared across calls
 * @returns {Set<string>}
 */
function programsNeededBy (file, cache = new Map()) {
  if (cache.has(file)) return cache.get(file);
  const out = new Set();
  // this checker names every tool it knows and starts none
  if (file === __filename) return out;
  cache.set(file, out); // cycles end here
  let source;
  try {
    source = fs.readFileSync(file, 'utf8');
  } catch {
    return out;
  }
  for (const p of programsIn(source)) out.add(p);
  for (const m of source.matchAll(REQUIRE_RE)) {
    let dep;
    try {
      dep = require.resolve(path.resolve(path.dirname(file), m[1]));
    } catch {
      continue;
    }
    // only test code: gateway/ starts no system program, and node_modules is not ours; this file
    // names programs in its comments and tables but starts none
    if (!dep.startsWith(path.join(ROOT, 'test') + path.sep) || dep === __filename) continue;
    for (const p of programsNeededBy(dep, cache)) out.add(p);
  }
  return out;
}

/**
 * The tools the given test files need that this machine lacks.
 * @param {Iterable<string>} files absolute paths of test files
 * @param {{env?: Record<string, string|undefined>, exists?: (file: string) => boolean}} [opts]
 * @returns {Array<{name: string, pkg: string, why: string, files: string[]}>} sorted by name
 */
function missingTools (files, opts = {}) {
  const cache = new Map();
  const users = new Map(); // tool → files
  for (const file of files) {
    for (const name of programsNeededBy(file, cache)) {
      if (!users.has(name)) users.set(name, []);
      users.get(name).push(path.relative(ROOT, file));
    }
  }
  const missing = [];
  for (const [name, list] of [...users].sort((a, b) => a[0].localeCompare(b[0]))) {
    if (locate(name, opts) !== null) continue;
    const t = TOOLS[name] || { pkg: name, why: 'started by a test' };
    missing.push({ name, pkg: t.pkg, why: t.why, files: list.sort() });
  }
  return missing;
}

/**
 * The one command that installs every missing tool.
 * @param {Array<{pkg: string}>} missing
 * @param {{root?: boolean}} [opts] root: no sudo in front
 * @returns {string}
 */
function installLine (missing, { root = process.getuid ? process.getuid() === 0 : false } = {}) {
  const pkgs = [...new Set(missing.map((m) => m.pkg))].sort();
  return `${root ? '' : 'sudo '}apt-get install ${pkgs.join(' ')}`;
}

/**
 * The message for missing tools: each tool, why and where it is used, then the install line.
 * @param {ReturnType<typeof missingTools>} missing non-empty
 * @param {{root?: boolean}} [opts]
 * @returns {string}
 */
function missingMessage (missing, opts) {
  const width = Math.max(...missing.map((m) => m.name.length));
  const lines = missing.map((m) => {
    const where = m.files.length > 2 ? `${m.files.slice(0, 2).join(', ')} and ${m.files.length - 2} more` : m.files.join(', ');
    return `  ${m.name.padEnd(width)}  ${m.why}${where ? ` (${where})` : ''}`;
  });
  return `missing system tools, needed by the tests of this run:\n${lines.join('\n')}\n` +
    `install them all with:\n  ${installLine(missing, opts)}\n` +
    '(or leave those test files out of the run; `npm run test:unit` needs none)';
}

/**
 * Throws the missing-tools message when any of `names` is not installed. For helpers, before they
 * start a program, so a run without the root hook fails as fast and as clearly.
 * @param {string[]} names
 * @param {{env?: Record<string, string|undefined>, exists?: (file: string) => boolean}} [opts]
 */
function assertTools (names, opts = {}) {
  const missing = names.filter((name) => locate(name, opts) === null)
    .map((name) => ({ name, ...(TOOLS[name] || { pkg: name, why: 'started by a test' }), files: [] }));
  if (missing.length) throw toolsError(missing);
}

function toolsError (missing) {
  const err = new Error(missingMessage(missing));
  err.code = 'MISSING_SYSTEM_TOOLS';
  // the message says everything; a stack trace into this helper would only bury it
  err.stack = `Error: ${err.message}`;
  return err;
}

/**
 * Every test file of the run, from the root suite.
 * @param {object} suite a mocha Suite
 * @param {Set<string>} [out]
 * @returns {Set<string>}
 */
function filesOf (suite, out = new Set()) {
  if (suite.file) out.add(suite.file);
  for (const t of suite.tests) if (t.file) out.add(t.file);
  for (const s of suite.suites) filesOf(s, out);
  return out;
}

/** The root hook: runs once, after mocha has loaded the files and before the first test. */
const mochaHooks = {
  beforeAll () {
    const missing = missingTools(filesOf(this.test.parent));
    if (missing.length) throw toolsError(missing);
  }
};

module.exports = { mochaHooks, TOOLS, locate, programsIn, codeOf, programsNeededBy, missingTools, installLine, missingMessage, assertTools };

// `node test/helpers/system-tools.js [--packages]`: the apt packages every test needs that this
// machine lacks (for .ci/run), one line; `--all`: every package the suite can need; `--check`: the
// missing-tools message for npm test's file set (test/long left out), exit 1 when any is missing.
// npm test runs --check first: its mocha runs test files in parallel, where the root hook's check
// runs once per file and would fail every file with the same message, not the run once.
if (require.main === module) {
  const all = process.argv.includes('--all');
  const testDir = path.join(ROOT, 'test');
  const files = fs.readdirSync(testDir, { recursive: true })
    .filter((f) => f.endsWith('.test.js'))
    .map((f) => path.join(testDir, f));
  if (process.argv.includes('--check')) {
    const missing = missingTools(files.filter((f) => !f.startsWith(path.join(testDir, 'long') + path.sep)));
    if (missing.length) {
      process.stderr.write(missingMessage(missing) + '\n');
      process.exitCode = 1;
    }
    return;
  }
  const list = all
    ? [...new Set(files.flatMap((f) => [...programsNeededBy(f)]))].map((name) => ({ pkg: (TOOLS[name] || { pkg: name }).pkg }))
    : missingTools(files);
  process.stdout.write([...new Set(list.map((m) => m.pkg))].sort().join(' ') + '\n');
}
