'use strict';

// `nines scan` against a simulated RTU line behind a serial server (RTU over TCP): 12 units at random
// unit ids in 1-247, each with its own sparse map and identification (two without FC43). Every unit
// found, each identification and map right, no unit reported that is not there, the 247 unit ids
// within the bound the scan prints and enforces (< 30 s at a 50 ms timeout), nothing written; the
// starter config it writes passes `nines run --check` as written and polls every tag at once.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { createModbusRtuTcpSimulator, createModbusLineModel } = require('../../gateway/simulators/modbus');
const { scanLine } = require('../../gateway/commission/scan');
const { starterFiles } = require('../../gateway/commission/starter');
const { formatReport } = require('../../gateway/commission/report');
const { discoveryBoundMs } = require('../../gateway/commission/discover');
const { loadConfig } = require('../../gateway/runtime/config');
const { Gateway } = require('../../gateway/runtime/gateway');
const { main } = require('../../gateway/cli');
const { prng, randomRuns } = require('./maps');

/** The scan's bound at the example: 247 unit ids, 50 ms timeout, on RTU over TCP */
const BOUND_LIMIT_MS = 30000;
/** Mapped addresses per table here: 0-1999 (not the default 0-9999) keeps the run short; the map's exactness is checked on the full range in map-probe.test.js */
const LAST_ADDRESS = 1999;

/** Runs `nines <args>` in this process, output captured. */
async function nines (args) {
  let out = '';
  const writes = [process.stdout.write, process.stderr.write];
  process.stdout.write = process.stderr.write = (chunk) => { out += chunk; return true; };
  try {
    return { code: await main(args), out };
  } catch (err) {
    return { code: 1, out: out + `${err.code}: ${err.message}`, err };
  } finally {
    [process.stdout.write, process.stderr.write] = writes;
  }
}

describe('nines scan: a line of 12 simulated units', function () {
  this.timeout(120000);
  const seed = 2300 + Math.floor(Math.random() * 1000);
  const random = prng(seed);
  const ids = new Set();
  while (ids.size < 12) ids.add(1 + Math.floor(random() * 247));
  const unitIds = [...ids].sort((a, b) => a - b);
  const lacking = new Set(unitIds.slice(0, 2));
  /** unit id → its model options */
  const units = {};
  for (const [i, id] of unitIds.entries()) {
    const map = {};
    for (const bank of ['coils', 'discreteInputs', 'inputRegisters', 'holdingRegisters']) map[bank] = randomRuns(random, LAST_ADDRESS, 2);
    // at least one register, so every unit has a tag to poll
    if (map.holdingRegisters.length === 0 && map.inputRegisters.length === 0) map.holdingRegisters = [[0, 9]];
    units[id] = lacking.has(id)
      ? { map, lacks: [43] }
      : { map, identification: { vendorName: `Vendor ${i}`, productCode: `P-${id}`, revision: `${i}.${id % 10}`, productName: `Product of unit ${id}` } };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-scan-'));
  let sim, model, report;

  before(async () => {
    model = createModbusLineModel({ units });
    sim = await createModbusRtuTcpSimulator({ port: 0, model });
  });
  after(async () => {
    if (sim) await sim.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it(`finds every unit, none that is not there, within the bound it prints (seed ${seed})`, async function () {
    const events = [];
    const t0 = performance.now();
    report = await scanLine(`modbus+rtutcp://127.0.0.1:${sim.port}`, { addresses: [0, LAST_ADDRESS], onProgress: (e) => events.push(e) });
    const wallMs = performance.now() - t0;
    const d = report.discovery;
    assert.deepEqual(d.found, unitIds);
    assert.deepEqual(report.units.map((u) => u.unitId), unitIds);
    assert.deepEqual(d.notProbed, []);
    assert.deepEqual(d.garbled, []);
    // the bound is the code's, stated before the scan and enforced by it
    const start = events.find((e) => e.kind === 'start');
    assert.equal(start.boundMs, discoveryBoundMs(247, { timeoutMs: 50, quietMs: 50 }));
    assert.equal(d.boundMs, start.boundMs);
    assert.ok(d.boundMs < BOUND_LIMIT_MS, `bound ${d.boundMs} ms`);
    assert.ok(d.elapsedMs <= d.boundMs, `finding took ${d.elapsedMs} ms, over its bound ${d.boundMs} ms`);
    assert.equal(model.writeRequests, 0, 'a scan never writes');
    this.test.title += `: found in ${(d.elapsedMs / 1000).toFixed(1)} s of at most ${(d.boundMs / 1000).toFixed(1)} s; whole scan ${(wallMs / 1000).toFixed(1)} s, ${report.requests} requests`;
  });

  it('identifies each unit, and says which lack FC43', () => {
    assert.ok(report, 'the scan ran');
    for (const u of report.units) {
      const want = units[u.unitId];
      if (lacking.has(u.unitId)) {
        assert.deepEqual([u.identity.supported, u.identity.error], [false, 'NINES_ERR_FC_UNSUPPORTED'], `unit ${u.unitId}`);
        continue;
      }
      const id = want.identification;
      assert.deepEqual([u.identity.vendorName, u.identity.productCode, u.identity.revision, u.identity.productName, u.identity.userApplicationName],
        [id.vendorName, id.productCode, id.revision, id.productName, `unit ${u.unitId}`], `unit ${u.unitId}`);
    }
  });

  it('maps what each unit answers, table by table', () => {
    assert.ok(report, 'the scan ran');
    const tables = { coil: 'coils', discrete: 'discreteInputs', input: 'inputRegisters', holding: 'holdingRegisters' };
    for (const u of report.units) {
      for (const [table, bank] of Object.entries(tables)) {
        assert.deepEqual(u.map[table].ranges, units[u.unitId].map[bank], `unit ${u.unitId} ${table}`);
        assert.equal(u.map[table].complete, true);
      }
    }
    const text = formatReport(report);
    for (const id of unitIds) assert.match(text, new RegExp(`^${id}\\s`, 'm'));
  });

  it('writes a starter config that nines run --check accepts as written, and that polls every tag at once', async () => {
    assert.ok(report, 'the scan ran');
    const { files, config } = starterFiles(report, { name: 'line1' });
    for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, file), text);
    const check = await nines(['run', path.join(dir, config), '--check']);
    assert.equal(check.code, 0, check.out);
    assert.match(check.out, /valid \(12 jobs, 1 devices\)/);
    // poll once: the same files, with an embedded broker on a free port
    const text = fs.readFileSync(path.join(dir, config), 'utf8') + 'gateway: { id: scan-test, workers: 1 }\nmqtt: { embedded: { port: 0 } }\n';
    const gw = new Gateway(loadConfig(text, { baseDir: dir, env: {} }));
    const seen = new Map();
    const all = new Promise((resolve) => gw.on('values', (job, v) => { if (!seen.has(job)) seen.set(job, v); if (seen.size === unitIds.length) resolve(); }));
    await gw.start();
    try {
      await Promise.race([all, new Promise((resolve, reject) => setTimeout(() => reject(new Error(`values of ${seen.size} of ${unitIds.length} jobs`)), 20000))]);
    } finally {
      await gw.stop();
    }
    for (const id of unitIds) {
      const v = seen.get(`line1-unit${id}`);
      const bad = Object.entries(v.quality).filter(([, q]) => q !== 'ok');
      assert.deepEqual(bad, [], `unit ${id}: tags without a value`);
      assert.ok(Object.keys(v.values).length > 0);
    }
    assert.equal(model.writeRequests, 0);
  });
});

describe('nines scan: the command', function () {
  this.timeout(30000);

  it('refuses a unit range outside 0-247 with a coded error naming the field', async () => {
    for (const units of ['1-248', '300', '5-2', 'a']) {
      const r = await nines(['scan', 'modbus+tcp://127.0.0.1:1', '--units', units]);
      assert.equal(r.code, 1, r.out);
      assert.equal(r.err.code, 'NINES_ERR_INVALID_ARG');
      assert.equal(r.err.details.field, 'units');
    }
  });

  it('nines sim reads --map, --lacks and --identity, and refuses them malformed, naming the option', () => {
    const { mapOption, lacksOption } = require('../../gateway/cli/sim');
    assert.deepEqual(mapOption('holding:0-99,200-219;input:0-9;coil:5'), { map: { holdingRegisters: [[0, 99], [200, 219]], inputRegisters: [[0, 9]], coils: [[5, 5]] } });
    assert.deepEqual(lacksOption('8,43'), { lacks: [8, 43] });
    for (const [fn, text, field] of [[mapOption, 'holding=0-9', 'map'], [mapOption, 'flux:0-9', 'map'], [mapOption, 'holding:0-x', 'map'], [lacksOption, 'eight', 'lacks']]) {
      assert.throws(() => fn(text), (err) => err.code === 'NINES_ERR_INVALID_ARG' && err.details.field === field, text);
    }
  });

  it('reads --timeout and --max-duration with the one duration reader and its rules, naming the flag', async () => {
    const { NOT_A_DURATION } = require('../../gateway/base/duration-field');
    for (const [args, field, rule] of [
      [['--timeout', '0'], '--timeout', 'must be a whole number of ms from 1ms to 1m'],
      [['--timeout', '1.5ms'], '--timeout', 'must be a whole number of ms from 1ms to 1m'],
      [['--max-duration', 'soon'], '--max-duration', NOT_A_DURATION]
    ]) {
      const r = await nines(['scan', 'modbus+tcp://127.0.0.1:1', ...args]);
      assert.equal(r.code, 1, r.out);
      assert.deepEqual([r.err.code, r.err.details.field, r.err.details.rule], ['NINES_ERR_INVALID_ARG', field, rule], args.join(' '));
    }
  });

  it('refuses unit 0 on a serial line, where it is broadcast', async () => {
    const sim = await createModbusRtuTcpSimulator({ port: 0 });
    try {
      const r = await nines(['scan', sim.url, '--units', '0-3']);
      assert.equal(r.err.code, 'NINES_ERR_INVALID_ARG');
      assert.equal(r.err.details.field, 'units');
    } finally {
      await sim.close();
    }
  });

  it('prints the table and writes the starter files from the command line', async () => {
    const model = createModbusLineModel({ units: { 3: { map: { holdingRegisters: [[0, 99], [200, 219]], inputRegisters: [[0, 9]] } }, 17: { identification: 'ED-588', map: { coils: [[0, 15]] } } } });
    const sim = await createModbusRtuTcpSimulator({ port: 0, model });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-scan-cli-'));
    try {
      const r = await nines(['scan', `modbus+rtutcp://127.0.0.1:${sim.port}`, '--units', '1-20', '--addresses', '0-999', '--write-config', dir, '--name', 'bus']);
      assert.equal(r.code, 0, r.out);
      assert.match(r.out, /finding them takes at most 2\.2 s/);
      assert.match(r.out, /^3\s+nines\s+NINES-SIM\s+1\.0\s+nines Modbus simulator\s+-\s+-\s+0-9\s+0-99,200-219$/m);
      assert.match(r.out, /^17\s+Brainboxes\s+ED-588\s+1\.0\s+ED-588 \(nines simulator\)\s+0-15\s+-\s+-\s+-$/m);
      assert.deepEqual(fs.readdirSync(dir).sort(), ['bus-unit17.csv', 'bus-unit3.csv', 'bus.yaml']);
      const check = await nines(['run', path.join(dir, 'bus.yaml'), '--check']);
      assert.equal(check.code, 0, check.out);
      assert.equal(model.writeRequests, 0);
      const none = await nines(['scan', `modbus+rtutcp://127.0.0.1:${sim.port}`, '--units', '4-6', '--no-map']);
      assert.equal(none.code, 2, none.out);
    } finally {
      await sim.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
