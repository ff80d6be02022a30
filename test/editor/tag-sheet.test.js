'use strict';

/**
 * Issue 21 in the real editor (headless Chromium, a real Node-RED, a Modbus simulator): a CSV tag
 * sheet with IEC type names imported in the nines-poll dialog keeps its scale through Done and
 * deploy, and the poll publishes 101.2 from a register holding 1012 (it published 1012: the dialog
 * did not save the scale of an "INT"). Then every sheet of test/fixtures/tag-rows.js goes through
 * the dialog, and the tags saved must mean to the runtime what the sheet means to it.
 */

const assert = require('node:assert/strict');
const { startNodeRed, debugTap } = require('../e2e/launch');
const { openEditorPage } = require('./browser');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { encodeValues } = require('../../gateway/values/registers');
const { checkTags, parseTagSheet } = require('../../gateway/tags');
const { rawTags } = require('../../nodes/lib/tag-list');
const { SHEETS, protocolOf } = require('../fixtures/tag-rows');

const SHEET = [
  'name,table,address,type,order,offset,scale,unit',
  'level,holding,1,INT,,,0.1,%',
  'temp,holding,2,INT,,-0.5,0.1,°C',
  'flow,holding,3,REAL,,,,m³/h'
].join('\n');

/** What a tag list means to the runtime: its checked tags and every problem, by path */
function runtime (list, ctx) {
  const { tags, problems } = checkTags(list, ctx);
  return { tags, problems: problems.map((p) => ({ path: p.path.join('.'), rule: p.rule })) };
}

describe('a CSV tag sheet through the editor keeps what the runtime reads in it (headless Chromium)', function () {
  this.timeout(90000);
  let nr;
  let sim;
  let browser;
  let page;
  let tap;
  let consoleErrors;

  before(async () => {
    sim = await createModbusTcpSimulator({ port: 0 });
    const hr = sim.model.banks.holdingRegisters;
    hr[1] = 1012;
    hr[2] = 706; // 70.6 - 0.5 = 70.1
    [hr[3], hr[4]] = encodeValues(71.3, { type: 'float32' });
    nr = await startNodeRed();
    const flow = [
      { id: 'ts-tab', type: 'tab', label: 'sheet' },
      {
        id: 'ts-dev', type: 'nines-modbus-device', name: 'plc (sheet test)', transport: 'tcp', host: '127.0.0.1', port: sim.port, path: '/dev/ttyUSB0',
        baudRate: 9600, parity: 'none', dataBits: 8, stopBits: 1, unitId: 1, timeout: 500, maxConnections: 1, connectTimeout: 5000, backoffMin: 100, backoffMax: 10000, allowWrites: false
      },
      {
        id: 'ts-poll', type: 'nines-poll', z: 'ts-tab', name: 'tank', protocol: 'modbus', modbusDevice: 'ts-dev', asciiDevice: '', source: 'tags', tags: [],
        command: '@01', fc: 3, address: 0, quantity: 1, dataType: 'uint16', wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0,
        rate: '10/s', values: 'on-change', deadband: 0, every: 100, minInterval: 0, interval: 10, mode: 'worker', policy: 'skip', autostart: true,
        x: 200, y: 100, wires: [['ts-whole'], []]
      },
      { id: 'ts-whole', type: 'debug', z: 'ts-tab', name: 'whole msg', active: true, tosidebar: true, console: false, complete: 'true', targetType: 'full', x: 450, y: 100, wires: [] }
    ];
    assert.equal((await nr.api('POST', '/flows', flow, { 'Node-RED-Deployment-Type': 'full' })).status, 204);
    ({ browser, page, consoleErrors } = await openEditorPage(nr.url,
      () => window.RED && RED.nodes && RED.nodes.node('ts-poll') && window.NinesTags, { width: 1400, height: 1000 }));
  });

  after(async () => {
    if (tap) tap.close();
    if (browser) await browser.close();
    if (nr) await nr.stop();
    if (sim) await sim.close();
  });

  /** Opens a node's dialog, imports a sheet, waits for the runtime's check of the rows, and clicks Done. */
  async function importSheet (id, name, text, protocol = 'modbus') {
    await page.evaluate((nodeId) => RED.editor.edit(RED.nodes.node(nodeId)), id);
    await page.waitForSelector('#nines-tags-import', { state: 'visible' });
    if (await page.inputValue('#node-input-protocol') !== protocol) await page.selectOption('#node-input-protocol', protocol);
    await page.setInputFiles('#nines-tags-file', { name, mimeType: 'text/csv', buffer: Buffer.from(text) });
    await page.waitForFunction((n) => document.querySelector('#nines-tags-sheet').textContent.includes(n), name, { timeout: 5000 });
    // a list that holds tags asks first: the sheet replaces them
    if (await page.locator('#nines-tags-sheet-replace').count()) await page.click('#nines-tags-sheet-replace');
    await page.waitForFunction((n) => document.querySelector('#nines-tags-sheet').textContent.includes(`Tags imported from ${n}`), name, { timeout: 5000 });
    await page.waitForFunction(() => document.querySelector('#nines-tags-status').getAttribute('data-state') === 'ready', null, { timeout: 5000 });
    await page.click('#node-dialog-ok');
    await page.waitForFunction(() => !document.querySelector('#nines-tags-import'), null, { timeout: 5000 });
    return page.evaluate((nodeId) => RED.nodes.node(nodeId).tags, id);
  }

  it('saves the sheet\'s IEC-typed rows with their scale and offset, and deploys them', async () => {
    const saved = await importSheet('ts-poll', 'tank.csv', SHEET);
    assert.deepEqual(saved, [
      { name: 'level', table: 'holding', address: 1, type: 'INT', scale: 0.1, unit: '%' },
      { name: 'temp', table: 'holding', address: 2, type: 'INT', offset: -0.5, scale: 0.1, unit: '°C' },
      { name: 'flow', table: 'holding', address: 3, type: 'REAL', unit: 'm³/h' }
    ]);
    await page.waitForFunction(() => RED.nodes.node('ts-poll').valid === true, null, { timeout: 5000 });
    tap = await debugTap(nr.url);
    await page.click('#red-ui-header-button-deploy');
    await page.waitForFunction(() => !RED.nodes.dirty(), null, { timeout: 10000 });
    const flows = (await nr.api('GET', '/flows')).body;
    const deployed = (Array.isArray(flows) ? flows : flows.flows).find((n) => n.id === 'ts-poll');
    assert.deepEqual(deployed.tags.map((t) => [t.name, t.scale, t.offset]), [['level', 0.1, undefined], ['temp', 0.1, -0.5], ['flow', undefined, undefined]]);
  });

  it('publishes 101.2 from a register holding 1012, and values without float noise', async () => {
    const m = await tap.waitFor((x) => x.name === 'whole msg' && x.msg && x.msg.payload && 'level' in x.msg.payload, 'the tank values', 15000);
    assert.deepEqual(m.msg.quality, { level: 'ok', temp: 'ok', flow: 'ok' });
    assert.equal(m.msg.payload.level, 101.2);
    // 706 × 0.1 - 0.5 is 70.1 (not 70.10000000000001); a float32 71.3 is 71.3 (not 71.30000305175781)
    assert.deepEqual(m.msg.payload, { level: 101.2, temp: 70.1, flow: 71.3 });
  });

  it('saves every fixture sheet as tags that mean to the runtime what the sheet means', async () => {
    // a poll node of its own, so the deployed one stays as it is
    const id = await page.evaluate(() => {
      const nodeId = RED.nodes.id();
      const n = { id: nodeId, type: 'nines-poll', x: 200, y: 300, z: RED.workspaces.active() };
      const defaults = RED.nodes.getType('nines-poll').defaults;
      for (const k of Object.keys(defaults)) n[k] = defaults[k].value;
      Object.assign(n, { source: 'tags', modbusDevice: 'ts-dev' });
      RED.view.importNodes([n], { generateIds: false, addFlow: false });
      return nodeId;
    });
    try {
      for (const [i, sheet] of SHEETS.entries()) {
        const saved = await importSheet(id, `sheet${i}.csv`, sheet.text, protocolOf(sheet.ctx));
        const { tags } = parseTagSheet(sheet.text);
        assert.deepEqual(runtime(rawTags(saved), sheet.ctx), runtime(tags, sheet.ctx), sheet.what);
      }
    } finally {
      await page.evaluate((nodeId) => { RED.nodes.remove(nodeId); RED.view.redraw(true); }, id);
    }
  });

  it('leaves the browser console without errors', () => {
    assert.deepEqual(consoleErrors, []);
  });
});
