'use strict';

/**
 * `npm run bench` — runs every question file (bench/NN-name.bench.js) in its own fresh node process,
 * as pino's runbench does, reads the JSON each prints on its last stdout line, and writes
 * bench/results/<YYYY-MM-DD>-<host>.md and .json plus one percentile SVG per latency question.
 *
 *   npm run bench                      full run (≥ 3 interleaved rounds per measurement, about 16 minutes)
 *   npm run bench -- --quick           smoke pass (≤ 2 minutes): every bench runs and reports; results
 *                                      go to the OS temp dir unless --out is given; exit code 1 if one fails
 *   npm run bench -- --only 1,floor    only questions matching a number or a name part
 *   npm run bench -- --out <dir>       where to write the results
 *   npm run bench -- --render <file>   rewrite the .md and plots of a saved results .json under its own name (targets re-judged)
 *   npm run bench -- --write-alloc-baseline   also write this run's allocation per request of the nines
 *                                      rows (question 1, one core) to bench/alloc-baseline.json
 * Every run, the quick one included, fails (exit code 1) when a nines row allocates more than 1.2× its
 * committed baseline per request, or was not measured (issue 11's regression guard, lib/targets.js).
 * The peers (bench/package.json) are installed on first run with `npm install --prefix bench`.
 */

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { build } = require('./c/build');
const { machine, loadAverage, versions } = require('./lib/machine');
const { toMarkdown, writePlots, headlineMarkdown, headlinesReadme } = require('./lib/report');
const { evaluateTargets, ALLOC_BASELINE, ALLOC_GUARDED } = require('./lib/targets');
const { findRow } = require('./lib/report');
const { printQuestion } = require('./lib/console');

const BENCH = __dirname;

/** @returns {{quick: boolean, only: string[], out: string|null, install: boolean}} */
function parseArgs (argv) {
  const a = { quick: false, only: [], out: null, install: true, writeBaseline: false };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--quick') a.quick = true;
    else if (argv[i] === '--only') a.only.push(...String(argv[++i] || '').split(',').filter(Boolean));
    else if (argv[i] === '--out') a.out = argv[++i];
    else if (argv[i] === '--no-install') a.install = false;
    else if (argv[i] === '--render') a.render = argv[++i];
    else if (argv[i] === '--write-alloc-baseline') a.writeBaseline = true;
    else throw new Error(`unknown argument ${argv[i]} (--quick, --only <n|name>, --out <dir>, --no-install, --render <results.json>, --write-alloc-baseline)`);
  }
  return a;
}

/** Installs the peers when bench/node_modules is missing; failures only mean skipped rows. */
function ensurePeers (install) {
  const { enginePeers, engineFits } = require('./lib/peers');
  const has = (name) => fs.existsSync(path.join(BENCH, 'node_modules', name));
  const engine = Object.entries(enginePeers());
  if (has('jsmodbus') && engine.every(([name]) => has(name) || !engineFits(name))) return;
  if (!install) { console.error('peers not installed: run `npm install --prefix bench` (their rows are skipped)'); return; }
  if (!has('jsmodbus')) {
    console.error('installing the peers: npm install --prefix bench …');
    const r = spawnSync('npm', ['install', '--prefix', BENCH, '--no-audit', '--no-fund'], { stdio: 'inherit' });
    if (r.status !== 0) { console.error('npm install --prefix bench failed: the peers\' rows are skipped'); return; }
  }
  // a peer that declares a newer Node is installed only where it runs (bench/package.json enginePeers)
  for (const [name, e] of engine) {
    if (has(name)) continue;
    if (!engineFits(name)) { console.error(`${name} ${e.version} is not installed: ${e.why}`); continue; }
    console.error(`installing ${name}@${e.version} (Node ${e.node}+) …`);
    const r = spawnSync('npm', ['install', '--prefix', BENCH, '--no-save', '--no-audit', '--no-fund', `${name}@${e.version}`], { stdio: 'inherit' });
    if (r.status !== 0) console.error(`npm install ${name}@${e.version} failed: its rows are skipped`);
  }
}

/** @returns {string[]} the question files, in order, filtered by --only */
function questionFiles (only) {
  const files = fs.readdirSync(BENCH).filter((f) => /^\d\d-.+\.bench\.js$/.test(f)).sort();
  if (only.length === 0) return files;
  return files.filter((f) => only.some((o) => (/^\d+$/.test(o) ? Number(f.slice(0, 2)) === Number(o) : f.includes(o))));
}

/**
 * Runs one question file in a fresh process.
 * @returns {Promise<object>} its result, or {error} when it failed or printed no JSON
 */
function runFile (file, quick) {
  const args = [path.join(BENCH, file), ...(quick ? ['--quick'] : [])];
  // a safety net against a hung question, not a budget: question 15 takes about 10 minutes since
  // its nines runs warm up paced for up to 5 s each (measure/probe.js pacedWarmup)
  const limitMs = quick ? 75000 : 900000;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: BENCH });
    let out = '';
    let err = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; if (process.env.NINES_BENCH_DEBUG) process.stderr.write(d); });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const last = out.trim().split('\n').pop();
      try {
        const r = JSON.parse(last);
        r.cmdlines = [`node ${path.relative(process.cwd(), args[0])}${quick ? ' --quick' : ''}`, ...(r.cmdlines || [])];
        if (code !== 0) r.warning = `exited ${code}`;
        resolve(r);
      } catch {
        const why = signal === 'SIGKILL' ? `killed after ${limitMs / 1000} s` : `exited ${code ?? signal} without a JSON result`;
        resolve({ file, name: file.replace(/^\d\d-|\.bench\.js$/g, ''), question: Number(file.slice(0, 2)), title: file, error: `${why}: ${err.trim().split('\n').slice(-3).join(' / ')}` });
      }
    });
  });
}

/**
 * Writes the .json, .md and plots of a run.
 * @param {object} run
 * @param {string} dir
 * @param {string} [stem] the files' name (default `<date>-<host>`)
 * @returns {{stem: string, plots: object}}
 */
function writeRun (run, dir, stem = `${run.date}-${run.machine.host}`) {
  fs.mkdirSync(dir, { recursive: true });
  const plots = writePlots(run.results, dir, stem);
  fs.writeFileSync(path.join(dir, `${stem}.json`), JSON.stringify(run, null, 1) + '\n');
  fs.writeFileSync(path.join(dir, `${stem}.md`), toMarkdown(run, plots));
  return { stem, plots };
}

/**
 * Writes the run's allocation per request of the guarded rows as the new baseline.
 * @param {object} run
 */
function writeAllocBaseline (run) {
  const rows = {};
  for (const id of ALLOC_GUARDED) {
    const r = findRow(run.results, 'modbus-round-trip', id);
    if (r && r.agg.allocPerReq) rows[id] = Math.round(r.agg.allocPerReq.median);
  }
  // a baseline without a row would leave that row unguarded (the guard then fails it, as unmeasured)
  const lacking = ALLOC_GUARDED.filter((id) => !(id in rows));
  if (lacking.length) throw new Error(`--write-alloc-baseline: question 1 measured no allocation for ${lacking.join(', ')} (run it with --only 1, pinned: taskset)`);
  const base = { node: process.version, date: run.date, host: run.machine.host, mode: run.mode, rows };
  fs.writeFileSync(ALLOC_BASELINE, JSON.stringify(base, null, 2) + '\n');
  console.log(`wrote ${path.relative(process.cwd(), ALLOC_BASELINE)}: ${JSON.stringify(rows)}`);
}

/**
 * Replaces the headline block of bench/README.md (between the headline markers) with this run's.
 * @param {object} run a full run of every question
 * @param {string} stem results file stem
 */
function updateReadme (run, stem) {
  const file = path.join(BENCH, 'README.md');
  const text = fs.readFileSync(file, 'utf8');
  const re = /<!-- headline -->[\s\S]*?<!-- \/headline -->/;
  if (!re.test(text)) return;
  fs.writeFileSync(file, text.replace(re, `<!-- headline -->\n${headlineMarkdown(run, `${stem}.md`)}\n<!-- /headline -->`));
}

/** Said before and after a quick pass, so its figures are never read as results */
const QUICK_NOTE = 'quick pass: a smoke test that every benchmark runs and reports. Its runs are short and unpinned ' +
  'rounds are few, so its figures are not comparable with a full run or with each other, and its targets are not ' +
  'judged (only the allocation guard is). For figures, run the full `npm run bench` on an otherwise idle machine.';

async function main () {
  const args = parseArgs(process.argv.slice(2));
  if (args.render) {
    const file = path.resolve(args.render);
    const run = JSON.parse(fs.readFileSync(file, 'utf8'));
    run.targets = evaluateTargets(run.results);
    // rewritten under its own name (a saved run may have been renamed: <date>-<host>-<what>.json),
    // and shown in the README only if it is a full run of every question, as a run itself would be
    const { stem } = writeRun(run, path.dirname(file), path.basename(file, '.json'));
    if (path.dirname(file) === path.join(BENCH, 'results') && headlinesReadme(run)) updateReadme(run, stem);
    console.log(`rewrote ${path.join(path.dirname(file), stem)}.md`);
    return;
  }
  const started = Date.now();
  if (args.quick) console.error(QUICK_NOTE);
  ensurePeers(args.install);
  const cBuild = build();
  for (const [name, p] of Object.entries(cBuild.programs)) if (p.skipped) console.error(`C peer ${name} skipped: ${p.skipped}`);
  const loadBefore = loadAverage();
  const results = [];
  for (const file of questionFiles(args.only)) {
    const t0 = Date.now();
    process.stderr.write(`▶ ${file}${args.quick ? ' --quick' : ''} … `);
    const r = await runFile(file, args.quick);
    process.stderr.write(`${r.error ? 'FAILED' : 'done'} in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
    results.push(r);
    printQuestion(r, results);
  }
  const date = new Date().toISOString().slice(0, 10);
  const m = machine();
  const run = {
    date,
    mode: args.quick ? 'quick' : 'full',
    machine: m,
    versions: versions(cBuild),
    cBuild,
    loadBefore,
    loadAfter: loadAverage(),
    elapsedMs: Date.now() - started,
    argv: `node bench/run.js ${process.argv.slice(2).join(' ')}`.trim(),
    results
  };
  run.targets = evaluateTargets(results);
  const dir = args.out ? path.resolve(args.out) : args.quick ? path.join(os.tmpdir(), 'nines-bench-quick') : path.join(BENCH, 'results');
  const { stem, plots } = writeRun(run, dir);
  // the README shows the latest full run of every question, written in the default place
  if (!args.out && headlinesReadme(run)) updateReadme(run, stem);
  console.log(args.quick ? '\nTargets (quick pass: shown, not judged, but for the allocation guard):' : '\nTargets:');
  for (const t of run.targets) {
    // a quick pass's figures are too short to judge a target by: only the allocation guard is
    const met = args.quick && !t.guard ? null : t.met;
    const why = met === null ? (t.met !== null ? 'quick pass, not judged' : t.why) : null;
    console.log(`  ${met === null ? '·' : met ? '✓' : '✗'} ${t.text}: ${t.measured || '–'} (limit ${t.limit || '–'})${met === false && t.by ? ', missed by ' + t.by : ''}${why ? ' — ' + why : ''}`);
    if (t.limits) console.log(`      limits: ${t.limits}`);
  }
  if (args.quick) console.log(`\n${QUICK_NOTE}`);
  console.log(`\nwrote ${path.join(dir, stem)}.md, .json and ${Object.keys(plots).length} plot(s) in ${Math.round(run.elapsedMs / 1000)} s`);
  if (args.writeBaseline) writeAllocBaseline(run);
  const failed = results.filter((r) => r.error);
  if (failed.length) {
    console.error(`${failed.length} question(s) failed: ${failed.map((r) => r.file || r.name).join(', ')}`);
    process.exitCode = 1;
  }
  const grown = args.writeBaseline ? [] : run.targets.filter((t) => t.guard && t.met === false);
  if (grown.length) {
    console.error(`allocation per request grew past the committed baseline: ${grown.map((t) => `${t.text}: ${t.measured}`).join('; ')}`);
    process.exitCode = 1;
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
