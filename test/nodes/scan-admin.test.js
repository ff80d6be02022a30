'use strict';

/**
 * "Scan line" of the Modbus device dialog on the admin API (nodes/lib/scan-admin.js): the bound
 * stated before the scan runs, the units found with their identities, maps, a unit list for the
 * dialog and a tag sheet per unit; nothing written; a second scan of a line refused while one
 * runs; bad fields refused with their name. The write permission is tested against a real
 * Node-RED with adminAuth (test/e2e/scan-permission.test.js).
 */

const assert = require('node:assert/strict');
const { helper } = require('./harness');
const deviceNode = require('../../nodes/nines-modbus-device');
const { createModbusRtuTcpSimulator, createModbusLineModel } = require('../../gateway/simulators/modbus');
const { discoveryBoundMs } = require('../../gateway/commission/discover');
const { parseTagSheet } = require('../../gateway/tags');

const UNITS = {
  3: { map: { holdingRegisters: [[0, 9], [100, 104]], coils: [[0, 7]] }, identification: { vendorName: 'Acme', productCode: 'PX-3', revision: '2.1', productName: 'Pump drive' } },
  7: { map: { inputRegisters: [[10, 19]] }, lacks: [43] }
};

describe('scan from the Modbus device dialog (admin API)', function () {
  this.timeout(30000);
  let sim, model;
  before(() => helper.startServer());
  after(() => helper.stopServer());
  beforeEach(async () => {
    model = createModbusLineModel({ units: UNITS });
    sim = await createModbusRtuTcpSimulator({ port: 0, model });
    await helper.load([deviceNode], [{ id: 'dev', type: 'nines-modbus-device', transport: 'tcp', host: '127.0.0.1', port: 502, unitId: 1 }]);
  });
  afterEach(async () => {
    await helper.unload();
    await sim.close();
  });

  const line = () => ({ transport: 'rtutcp', host: '127.0.0.1', port: String(sim.port) });
  const start = (body) => helper.request().post('/nines-scan').send(body);

  /** Asks until the scan ends; returns its last answer */
  async function finished (id) {
    for (;;) {
      const res = await helper.request().get(`/nines-scan/${id}`).expect(200);
      if (res.body.state !== 'running') return res.body;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('states its bound before it runs, then gives the units, identities, maps, a unit list and a tag sheet per unit, writing nothing', async () => {
    // the default timeout (50 ms): a shorter one may run out on a loaded host while the map is read
    const res = await start({ ...line(), units: '1-10' }).expect(202);
    // the bound is the command line's, for these unit ids and this timeout (a serial line: quiet as long again)
    assert.equal(res.body.boundMs, discoveryBoundMs(10, { timeoutMs: 50, quietMs: 50 }));
    assert.deepEqual([res.body.state, res.body.units, res.body.timeoutMs, res.body.maxDurationMs, res.body.line],
      ['running', 10, 50, 120000, `modbus+rtutcp://127.0.0.1:${sim.port}`]);
    const done = await finished(res.body.id);
    assert.equal(done.state, 'done', JSON.stringify(done.error));
    assert.deepEqual(done.found, [3, 7]);
    assert.deepEqual(done.report.units.map((u) => u.unitId), [3, 7]);
    const [a, b] = done.report.units;
    assert.deepEqual([a.identity.vendorName, a.identity.productCode, a.identity.revision, a.identity.productName], ['Acme', 'PX-3', '2.1', 'Pump drive']);
    assert.deepEqual([b.identity.supported, b.identity.error], [false, 'NINES_ERR_FC_UNSUPPORTED']);
    assert.deepEqual(a.map.holding.ranges, [[0, 9], [100, 104]]);
    assert.deepEqual(a.map.coil.ranges, [[0, 7]]);
    assert.deepEqual(b.map.input.ranges, [[10, 19]]);
    assert.ok(done.report.discovery.elapsedMs <= done.boundMs, `found in ${done.report.discovery.elapsedMs} ms, bound ${done.boundMs} ms`);
    assert.equal(done.unitList, '3,7');
    assert.match(done.text, /^unit\s+vendor/);
    // the tag sheets are what the tag lists import: one tag per readable address
    const sheet = parseTagSheet(done.sheets[3]);
    assert.equal(sheet.tags.length, 10 + 5 + 8);
    assert.deepEqual(sheet.tags.find((t) => t.name === 'hr_100'), { name: 'hr_100', table: 'holding', address: 100, type: 'uint16' });
    assert.equal(parseTagSheet(done.sheets[7]).tags.length, 10);
    assert.equal(model.writeRequests, 0, 'a scan never writes');
  });

  it('refuses a second scan of the line while one runs, and takes one again once it ended', async () => {
    const first = await start({ ...line(), units: '1-40', timeout: '20' }).expect(202);
    const second = await start({ ...line(), units: '3', map: false }).expect(409);
    assert.equal(second.body.error.code, 'NINES_ERR_SCAN_BUSY');
    assert.match(second.body.error.message, new RegExp(`a scan of modbus\\+rtutcp://127\\.0\\.0\\.1:${sim.port} is running`));
    assert.equal((await finished(first.body.id)).state, 'done');
    const again = await start({ ...line(), units: '3', map: false }).expect(202);
    const done = await finished(again.body.id);
    assert.deepEqual([done.state, done.found, done.report.units[0].map], ['done', [3], undefined]);
    assert.equal(model.writeRequests, 0);
  });

  it('refuses bad fields with their name, before anything is sent', async () => {
    for (const [body, field, re] of [
      [{ ...line(), port: 'x' }, 'port', /port must be an integer/],
      [{ ...line(), units: '0-300' }, 'units', /unit ids from 0 to 247/],
      [{ ...line(), units: '0-3' }, 'units', /unit 0 is broadcast/],
      [{ ...line(), timeout: '0' }, 'timeout', /timeout must be a whole number of ms from 1ms to 1m; got 0/],
      [{ transport: 'tcp', host: 'a b', port: '502' }, 'host', /host must be a host name/],
      [{ transport: 'serial' }, 'transport', /transport must be/]
    ]) {
      const res = await start(body).expect(400);
      assert.equal(res.body.error.field, field, JSON.stringify(res.body));
      assert.match(res.body.error.message, re);
    }
    assert.equal((await start([1]).expect(400)).body.error.code, 'NINES_ERR_INVALID_ARG');
    assert.equal(sim.stats.connections, 0, 'no refused scan connected to the line');
    assert.equal((await helper.request().get('/nines-scan/nope').expect(404)).body.error.code, 'NINES_ERR_INVALID_ARG');
  });

  it('reports a line that cannot be reached as a failed scan, with its code', async () => {
    await sim.close();
    const res = await start({ ...line(), units: '1' }).expect(202);
    const done = await finished(res.body.id);
    assert.equal(done.state, 'failed');
    assert.match(done.error.code, /^NINES_ERR_CONNECT_/);
    sim = await createModbusRtuTcpSimulator({ port: 0, model });
  });
});
