'use strict';

/**
 * The tag list in the editor, in headless Chromium against a real Node-RED with the package
 * installed and a Modbus simulator: tags added in the nines-poll dialog, a bad one marked red with
 * the core's rule, the node invalid until it is fixed, a CSV tag sheet imported (its problems by
 * line and column, a malformed one refused whole), then deployed, and the named values arrive in
 * the debug sidebar. The read and write dialogs share the same list.
 */

const assert = require('node:assert/strict');
const { startNodeRed, debugTap } = require('../e2e/launch');
const { openEditorPage } = require('./browser');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { encodeValues } = require('../../gateway/values/registers');

describe('tag list in the editor (headless Chromium)', function () {
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
    [hr[100], hr[101]] = encodeValues(71.5, { type: 'float32', wordOrder: 'little' });
    hr[102] = 215;
    sim.model.banks.coils[3] = 1;
    nr = await startNodeRed();
    // a device, a poll node with no tags yet (invalid until it has some) and a debug node
    const flow = [
      { id: 'tl-tab', type: 'tab', label: 'tags' },
      {
        id: 'tl-dev', type: 'nines-modbus-device', name: 'plc (tag list test)', transport: 'tcp', host: '127.0.0.1', port: sim.port, path: '/dev/ttyUSB0',
        baudRate: 9600, parity: 'none', dataBits: 8, stopBits: 1, unitId: 1, timeout: 500, maxConnections: 1, connectTimeout: 5000, backoffMin: 100, backoffMax: 10000, allowWrites: false
      },
      {
        id: 'tl-poll', type: 'nines-poll', z: 'tl-tab', name: 'plant', protocol: 'modbus', modbusDevice: 'tl-dev', asciiDevice: '', source: 'tags', tags: [],
        command: '@01', fc: 3, address: 0, quantity: 1, dataType: 'uint16', wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0,
        rate: '10/s', values: 'on-change', deadband: 0, every: 100, minInterval: 0, interval: 10, mode: 'worker', policy: 'skip', autostart: true,
        x: 200, y: 100, wires: [['tl-debug', 'tl-whole'], []]
      },
      { id: 'tl-debug', type: 'debug', z: 'tl-tab', name: 'named values', active: true, tosidebar: true, console: false, complete: 'payload', targetType: 'msg', x: 450, y: 100, wires: [] },
      { id: 'tl-whole', type: 'debug', z: 'tl-tab', name: 'whole msg', active: true, tosidebar: true, console: false, complete: 'true', targetType: 'full', x: 450, y: 160, wires: [] }
    ];
    assert.equal((await nr.api('POST', '/flows', flow, { 'Node-RED-Deployment-Type': 'full' })).status, 204);
    ({ browser, page, consoleErrors } = await openEditorPage(nr.url,
      () => window.RED && RED.nodes && RED.nodes.node('tl-poll') && window.NinesTags, { width: 1400, height: 1000 }));
  });

  after(async () => {
    if (tap) tap.close();
    if (browser) await browser.close();
    if (nr) await nr.stop();
    if (sim) await sim.close();
  });

  async function openPoll () {
    await page.evaluate(() => RED.editor.edit(RED.nodes.node('tl-poll')));
    await page.waitForSelector('#nines-tags-import', { state: 'visible' });
  }

  async function done () {
    await page.click('#node-dialog-ok');
    await page.waitForFunction(() => !document.querySelector('#nines-tags-import'), null, { timeout: 5000 });
  }

  const row = (i) => page.locator('#nines-tags-list > li').nth(i);
  const status = () => page.locator('#nines-tags-status').innerText();

  /** Waits until the marks shown are the runtime's answer for the rows as they are. */
  const checked = () => page.waitForFunction(() => document.querySelector('#nines-tags-status').getAttribute('data-state') === 'ready', null, { timeout: 5000 });

  /** Types into a row's field (or picks an option) and waits for the runtime's check of the list. */
  async function setField (i, field, value) {
    const input = row(i).locator(`.nines-tag-${field}`);
    if (await input.evaluate((n) => n.tagName) === 'SELECT') await input.selectOption(value);
    else { await input.fill(value); await input.dispatchEvent('change'); }
    await checked();
  }

  async function waitStatus (re) {
    await page.waitForFunction((src) => new RegExp(src).test(document.querySelector('#nines-tags-status').textContent), re.source, { timeout: 5000 });
    return status();
  }

  it('adds tags in the dialog, marks an overlapping one red with the rule, and the node invalid until fixed', async () => {
    await openPoll();
    assert.equal(await page.inputValue('#node-input-source'), 'tags');
    await page.click('#nines-tags-list + .red-ui-editableList-addButton, .nines-poll-tags .red-ui-editableList-addButton');
    await page.click('.nines-poll-tags .red-ui-editableList-addButton');
    assert.equal(await page.locator('#nines-tags-list > li').count(), 2);
    // the second row starts after the first: no clash yet
    assert.deepEqual([await row(0).locator('.nines-tag-address').inputValue(), await row(1).locator('.nines-tag-address').inputValue()], ['0', '1']);
    await setField(0, 'name', 'boiler_temp');
    await setField(0, 'address', '100');
    await setField(0, 'type', 'float32');
    // fields follow the type: an order for a 32-bit value, no bit or length
    assert.equal(await row(0).locator('.nines-tag-order').isVisible(), true);
    assert.equal(await row(0).locator('.nines-tag-bit').isVisible(), false);
    await setField(0, 'order', 'CDAB');
    await setField(0, 'unit', '°C');
    await setField(1, 'name', 'level');
    await setField(1, 'address', '101'); // inside boiler_temp's 100-101
    await waitStatus(/Problems: 1/);
    const address = row(1).locator('.nines-tag-address');
    assert.equal(await address.evaluate((n) => n.classList.contains('input-error')), true, 'the address is red');
    assert.match(await address.getAttribute('title'), /overlaps tag "boiler_temp"/);
    assert.match(await row(1).locator('.nines-tag-row-problems').innerText(), /^row 2, address: overlaps tag "boiler_temp" .*; got 101$/);
    // saved as it is, the node is invalid, with the core's rule as the reason
    await done();
    await page.waitForFunction(() => RED.nodes.node('tl-poll').valid === false, null, { timeout: 5000 });
    const reason = await page.evaluate(() => JSON.stringify(RED.nodes.node('tl-poll').validationErrors));
    assert.match(reason, /overlaps/);
    // fixed, it is valid again
    await openPoll();
    await setField(1, 'address', '102');
    await setField(1, 'scale', '0.1');
    await waitStatus(/Tags: 2 · requests per poll: 1/);
    assert.equal(await row(1).locator('.nines-tag-address').evaluate((n) => n.classList.contains('input-error')), false);
    await done();
    await page.waitForFunction(() => RED.nodes.node('tl-poll').valid === true, null, { timeout: 5000 });
    const tags = await page.evaluate(() => RED.nodes.node('tl-poll').tags);
    assert.deepEqual(tags, [
      { name: 'boiler_temp', table: 'holding', address: 100, type: 'float32', order: 'CDAB', unit: '°C' },
      { name: 'level', table: 'holding', address: 102, type: 'uint16', scale: 0.1 }
    ]);
  });

  it('imports a CSV tag sheet: its problems by line and column; a malformed sheet changes nothing', async () => {
    await openPoll();
    try {
      const upload = (name, text) => page.setInputFiles('#nines-tags-file', { name, mimeType: 'text/csv', buffer: Buffer.from(text) });
      await upload('broken.csv', 'name,table,address\n"pump,coil,3\n');
      await page.waitForFunction(() => /broken\.csv was not imported/.test(document.querySelector('#nines-tags-sheet').textContent), null, { timeout: 5000 });
      assert.match(await page.locator('#nines-tags-sheet').innerText(), /line 2/);
      assert.equal(await page.locator('#nines-tags-list > li').count(), 2, 'the list is unchanged');

      // the list holds tags: the sheet replaces them only when asked to
      await upload('plant.csv', [
        '# plant IO list',
        'name;table;address;type;order;scale;unit',
        'boiler_temp;holding;100;float32;CDAB;;°C',
        'level;holding;102;int16;;0,1;%',
        'pump_on;coil;3;;;;',
        'spare;holding;70000;;;;'
      ].join('\n'));
      await page.click('#nines-tags-sheet-replace');
      await page.waitForFunction(() => /Tags imported from plant\.csv: 4/.test(document.querySelector('#nines-tags-sheet').textContent), null, { timeout: 5000 });
      assert.match(await page.locator('#nines-tags-sheet').innerText(), /line 6, column 3 \(address\): must be an integer from 0 to 65535 .*; got 70000/);
      assert.equal(await page.locator('#nines-tags-list > li').count(), 4);
      await waitStatus(/Problems: 1/);
      assert.equal(await row(3).locator('.nines-tag-address').evaluate((n) => n.classList.contains('input-error')), true);
      assert.equal(await row(2).locator('.nines-tag-table').inputValue(), 'coil');
      assert.equal(await row(2).locator('.nines-tag-order').isVisible(), false, 'a coil has no order');
      // the spare row goes: the list is clean
      await row(3).locator('.red-ui-editableList-item-remove').click();
      await waitStatus(/Tags: 3 · requests per poll: 2/);
    } finally {
      await done();
    }
    await page.waitForFunction(() => RED.nodes.node('tl-poll').valid === true, null, { timeout: 5000 });
  });

  it('deploys, and the named values arrive in the debug sidebar with their quality', async () => {
    tap = await debugTap(nr.url);
    await page.evaluate(() => RED.sidebar.show('debug'));
    // nothing left for Node-RED to warn about before it deploys
    const invalid = await page.evaluate(() => {
      const out = [];
      RED.nodes.eachNode((n) => { if (n.valid === false) out.push([n.type, n.validationErrors]); });
      RED.nodes.eachConfig((n) => { if (n.valid === false) out.push([n.type, n.validationErrors]); });
      return out;
    });
    assert.deepEqual(invalid, []);
    await page.click('#red-ui-header-button-deploy');
    const m = await tap.waitFor((x) => x.name === 'whole msg' && x.msg && x.msg.payload && 'boiler_temp' in x.msg.payload, 'the whole msg', 15000);
    assert.deepEqual(m.msg.payload, { boiler_temp: 71.5, level: 21.5, pump_on: true });
    assert.deepEqual(m.msg.quality, { boiler_temp: 'ok', level: 'ok', pump_on: 'ok' });
    assert.deepEqual(m.msg.units, { boiler_temp: '°C', level: '%' });
    assert.equal(typeof m.msg.ts, 'number');
    // and the sidebar shows them, by name
    await page.waitForFunction(() => [...document.querySelectorAll('.red-ui-debug-msg')].some((e) => /boiler_temp: 71\.5/.test(e.textContent) && /pump_on: true/.test(e.textContent)), null, { timeout: 10000 });
  });

  for (const type of ['nines-modbus-read', 'nines-modbus-write']) {
    it(`gives the ${type} dialog the same tag list, checked by the runtime`, async () => {
      const id = await page.evaluate((t) => {
        const id = RED.nodes.id();
        const n = { id, type: t, x: 200, y: 300, z: RED.workspaces.active() };
        const defaults = RED.nodes.getType(t).defaults;
        for (const k of Object.keys(defaults)) n[k] = defaults[k].value;
        n.device = 'tl-dev';
        RED.view.importNodes([n], { generateIds: false, addFlow: false });
        RED.editor.edit(RED.nodes.node(id));
        return id;
      }, type);
      try {
        await page.waitForSelector('#node-input-source', { state: 'visible' });
        assert.equal(await page.locator('#nines-tags-import').isVisible(), false, 'hidden while the node sends one request');
        await page.selectOption('#node-input-source', 'tags');
        assert.equal(await page.locator('#nines-tags-import').isVisible(), true);
        assert.equal(await page.locator('#node-input-fc').isVisible(), false);
        await page.click(`.${type}-tags .red-ui-editableList-addButton`);
        await setField(0, 'table', 'input');
        // what applies to the node: the requests one read takes; the tags a write can write (an input register: none)
        await waitStatus(type === 'nines-modbus-read' ? /^Tags: 1 · requests per read: 1$/ : /^Tags: 1 · writable: 0 /);
        assert.doesNotMatch(await status(), /per poll/);
        // every text of the list is translated
        const texts = await page.$$eval('#nines-tags button, #nines-tags input, #nines-tags span', (els) => els.map((e) => e.textContent + ' ' + (e.getAttribute('placeholder') || '')));
        assert.ok(texts.every((s) => !/nines-poll\.tags/.test(s)), texts.join(' | '));
      } finally {
        await page.click('#node-dialog-cancel');
        // the tray gone, so the next dialog's list is the only one
        await page.waitForFunction(() => !document.querySelector('#nines-tags'), null, { timeout: 5000 });
        await page.evaluate((nodeId) => { RED.nodes.remove(nodeId); RED.view.redraw(true); }, id);
      }
    });
  }

  it('keeps a Modicon address that came in as text ("40101") through Done; a retyped one is saved as the number', async () => {
    // a flow edited as JSON: to the runtime "40101" is holding register 101 (0-based 100), 40101 another register
    const id = await page.evaluate(() => {
      const id = RED.nodes.id();
      const n = { id, type: 'nines-modbus-read', x: 200, y: 400, z: RED.workspaces.active() };
      const defaults = RED.nodes.getType('nines-modbus-read').defaults;
      for (const k of Object.keys(defaults)) n[k] = defaults[k].value;
      Object.assign(n, {
        device: 'tl-dev',
        source: 'tags',
        tags: [
          { name: 'ref', table: 'holding', address: '40101', type: 'uint16' },
          { name: 'retyped', table: 'holding', address: '40103', type: 'uint16' }
        ]
      });
      RED.view.importNodes([n], { generateIds: false, addFlow: false });
      RED.editor.edit(RED.nodes.node(id));
      return id;
    });
    try {
      await page.waitForSelector('#nines-tags-import', { state: 'visible' });
      assert.equal(await row(0).locator('.nines-tag-address').inputValue(), '40101');
      await setField(1, 'address', '110');
      await done();
      assert.deepEqual(await page.evaluate((nodeId) => RED.nodes.node(nodeId).tags, id), [
        { name: 'ref', table: 'holding', address: '40101', type: 'uint16' },
        { name: 'retyped', table: 'holding', address: 110, type: 'uint16' }
      ]);
    } finally {
      await page.evaluate((nodeId) => { RED.nodes.remove(nodeId); RED.view.redraw(true); }, id);
    }
  });

  it('leaves the browser console without errors', () => {
    assert.deepEqual(consoleErrors, []);
  });
});
