'use strict';

/**
 * `nines run` reloads its config on SIGHUP and, with --watch, when the file changes: a real process,
 * a simulator, and the lines the gateway says.
 */

const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { NINES_BIN } = require('../helpers/nines-cli');


function yamlFor (url, jobs) {
  return `gateway: { id: hup, interval: 500ms, workers: 1 }\nmqtt: { embedded: { port: 0 } }\ndevices:\n  plc: { target: "${url}" }\njobs:\n` +
    jobs.map((j) => `  - { name: ${j}, device: plc, read: { fc: 3, address: 0, quantity: 1 }, rate: 20/s }\n`).join('');
}

/** Starts `nines run`, collecting stderr; lines() waits for a line matching re */
function startRun (args) {
  const child = spawn(process.execPath, [NINES_BIN, 'run', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  const waitFor = async (re, ms = 15000) => {
    const end = Date.now() + ms;
    while (!re.test(err)) {
      if (Date.now() > end) throw new Error(`no line matching ${re} in:\n${err}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return err.match(re)[0];
  };
  return { child, exited, waitFor, stderr: () => err };
}

describe('nines run: reload on SIGHUP and on a file change', function () {
  this.timeout(40000);
  let tmp, sim, run;
  beforeEach(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-reload-'));
    sim = await createModbusTcpSimulator({ port: 0 });
  });
  afterEach(async () => {
    if (run && run.child.exitCode === null) { run.child.kill('SIGTERM'); await run.exited; }
    await sim.close();
    fs.rmSync(tmp, { recursive: true, force: true });
    run = null;
  });

  it('SIGHUP applies a new config, and refuses a broken one with its field paths while the old one goes on', async () => {
    const file = path.join(tmp, 'gw.yaml');
    fs.writeFileSync(file, yamlFor(sim.url, ['a', 'b']));
    run = startRun([file]);
    await run.waitFor(/2 jobs running/);
    fs.writeFileSync(file, yamlFor(sim.url, ['a', 'c']));
    run.child.kill('SIGHUP');
    await run.waitFor(/SIGHUP: config reloaded: 1 jobs unchanged, 0 changed, 1 added \(c\), 1 removed \(b\)/);
    fs.writeFileSync(file, yamlFor(sim.url, ['a', 'c']).replace('rate: 20/s', 'rate: fast'));
    run.child.kill('SIGHUP');
    const line = await run.waitFor(/SIGHUP: config not reloaded, the running one goes on: NINES_ERR_CONFIG: [^\n]*\n[^\n]*jobs\[0\]\.rate/);
    assert.match(line, /jobs\[0\]\.rate/);
    // still running: it stops cleanly when asked
    run.child.kill('SIGTERM');
    assert.equal(await run.exited, 0);
  });

  it('--watch reloads when the file is replaced, as editors save it', async () => {
    const file = path.join(tmp, 'gw.yaml');
    fs.writeFileSync(file, yamlFor(sim.url, ['a']));
    run = startRun([file, '--watch']);
    await run.waitFor(/1 jobs running/);
    const next = path.join(tmp, '.gw.yaml.swp');
    fs.writeFileSync(next, yamlFor(sim.url, ['a', 'b', 'c']));
    fs.renameSync(next, file);
    await run.waitFor(/config file changed: config reloaded: 1 jobs unchanged, 0 changed, 2 added \(b, c\), 0 removed/);
  });

  it('--watch never applies a file written in two pieces half-written, and reports one that does not parse with its line', async () => {
    const file = path.join(tmp, 'gw.yaml');
    fs.writeFileSync(file, yamlFor(sim.url, ['a', 'b', 'c']));
    run = startRun([file, '--watch']);
    await run.waitFor(/3 jobs running/);
    // the first piece is a valid config of job a alone; the rest comes half a second later (the
    // reported case: 468 ms), as from `cat head > gw.yaml; sleep 0.5; cat tail >> gw.yaml`
    const text = yamlFor(sim.url, ['a', 'b', 'c', 'd']);
    const cut = text.indexOf('  - { name: b');
    const fd = fs.openSync(file, 'w');
    fs.writeSync(fd, text.slice(0, cut));
    await new Promise((resolve) => setTimeout(resolve, 500));
    fs.writeSync(fd, text.slice(cut));
    fs.closeSync(fd);
    await run.waitFor(/config file changed: config (not )?reloaded[^\n]*\n/);
    // the first reload after the write is the whole file's: nothing removed, d added
    assert.match(run.stderr(), /config file changed: config reloaded: 3 jobs unchanged, 0 changed, 1 added \(d\), 0 removed\n/);
    assert.doesNotMatch(run.stderr(), /removed \(/);
    assert.doesNotMatch(run.stderr(), /config not reloaded/);
    // a settled file that does not parse is refused with its line and column, and what runs goes on
    fs.writeFileSync(file, text.replace('jobs:\n', 'jobs:\n  - { name: e, device: plc\n'));
    await run.waitFor(/config file changed: config not reloaded, the running one goes on: NINES_ERR_CONFIG: invalid gateway config [^\n]*gw\.yaml:\d+:\d+: YAML syntax error/);
    run.child.kill('SIGTERM');
    assert.equal(await run.exited, 0);
  });
});
