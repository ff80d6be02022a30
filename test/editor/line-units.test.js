'use strict';

/**
 * "Units on line" in the editor, in headless Chromium against a real Node-RED with the package
 * installed: the Modbus device dialog reads the list with the runtime's own reader
 * (resources/nines-units.js), turns the field red with the rule as its message (an id out of range
 * for the transport, a range backwards, an id twice, the device's unit id missing), and a poll node
 * whose unit is not on its device's line is invalid.
 */

const assert = require('node:assert/strict');
const { startNodeRed } = require('../e2e/launch');
const ui = require('./browser');

describe('units on a line in the editor (headless Chromium)', function () {
  this.timeout(60000);
  let nr;
  let browser;
  let page;
  let consoleErrors;

  before(async () => {
    nr = await startNodeRed();
    ({ browser, page, consoleErrors } = await ui.openEditorPage(nr.url,
      // the whole palette: nines-profile comes last, after the scripts of the tag table it loads
      () => window.RED && RED.nodes && RED.nodes.getType('nines-modbus-device') && RED.nodes.getType('nines-poll') && window.NinesUnits &&
        RED.nodes.getType('nines-profile') && document.querySelector('.red-ui-palette-node[data-palette-type="nines-ascii"]')));
  });

  after(async () => {
    if (browser) await browser.close();
    if (nr) await nr.stop();
  });

  const closeEditors = () => ui.closeEditors(page);
  const markedInvalid = (selector, value) => ui.markedInvalid(page, selector, value);

  const isRed = (selector) => page.locator(selector).last().evaluate((n) => n.classList.contains('input-error'));

  /** What the units validator says of a value for a node with these fields: true, or the message */
  function verdict (fields, value) {
    return page.evaluate(([f, v]) => RED.nodes.getType('nines-modbus-device').defaults.units.validate.call(f, v, {}), [fields, value]);
  }

  it('shows "Units on line" in the Modbus device dialog, empty by default, with the symptom it fixes', async () => {
    await ui.openConfigDialog(page, 'nines-modbus-device');
    try {
      assert.equal(await page.inputValue('#node-config-input-units'), '');
      assert.equal(await isRed('#node-config-input-units'), false, 'empty: one unit');
      const label = await page.locator('label[for="node-config-input-units"]').innerText();
      assert.match(label, /Units on line/);
      const tip = await page.locator('#nines-modbus-device-units-tip').innerText();
      assert.match(tip, /one dead slave no longer stalls the others/);
      assert.match(tip, /1-10, 12/);
    } finally {
      await closeEditors();
    }
  });

  it('checks the list as you type, by the transport\'s rule and with the device\'s unit id on it', async () => {
    await ui.openConfigDialog(page, 'nines-modbus-device');
    try {
      const units = '#node-config-input-units';
      assert.equal(await markedInvalid(units, '1-10, 12'), false);
      for (const bad of ['1-300', '10-1', '1-5, 3', 'meter', '1,,2']) assert.equal(await markedInvalid(units, bad), true, `${bad} should be refused`);
      // 0 and 255 address a Modbus TCP gateway itself; on a serial line 0 is broadcast
      assert.equal(await markedInvalid(units, '0-4, 255'), false);
      await page.selectOption('#node-config-input-transport', 'rtu');
      assert.equal(await isRed(units), true, '0 and 255 on a serial line');
      assert.equal(await markedInvalid(units, '1-4'), false);
      // the device's unit id is the unit of the nodes that name none: it must be on the line
      await markedInvalid('#node-config-input-unitId', '7');
      assert.equal(await isRed(units), true, 'unit id 7 is not on 1-4');
      await markedInvalid('#node-config-input-unitId', '2');
      assert.equal(await isRed(units), false);
    } finally {
      await closeEditors();
    }
  });

  it('says what is wrong, in the runtime\'s words', async () => {
    assert.equal(await verdict({ transport: 'tcp', unitId: 1 }, '1-10, 12'), true);
    assert.equal(await verdict({ transport: 'tcp', unitId: 1 }, ''), true);
    assert.equal(await verdict({ transport: 'rtu', unitId: 1 }, '0-3'), 'This list has unit id 0: unit ids are 1-247 on a serial line (0 is broadcast, which nobody answers)');
    assert.equal(await verdict({ transport: 'tcp', unitId: 1 }, '1-300'), 'This list has unit id 248: unit ids are 0-247 or 255 on Modbus TCP');
    assert.match(await verdict({ transport: 'tcp', unitId: 9 }, '1-5'), /must include the Unit id, 9/);
  });

  it('marks a poll node invalid when its unit is not on its device\'s line', async () => {
    const ids = await page.evaluate(() => {
      const dev = { id: RED.nodes.id(), type: 'nines-modbus-device', name: 'bus', transport: 'tcp', host: '127.0.0.1', port: 502, unitId: 1, units: '1-4', timeout: 500, maxConnections: 1, connectTimeout: 5000, backoffMin: 100, backoffMax: 10000 };
      const defaults = RED.nodes.getType('nines-poll').defaults;
      const poll = { id: RED.nodes.id(), type: 'nines-poll', x: 200, y: 200, z: RED.workspaces.active() };
      for (const k of Object.keys(defaults)) poll[k] = defaults[k].value;
      Object.assign(poll, { protocol: 'modbus', modbusDevice: dev.id, unitId: '' });
      RED.view.importNodes([dev, poll], { generateIds: false, addFlow: false });
      return { poll: poll.id };
    });
    const valid = (unitId) => page.evaluate(([id, u]) => {
      const n = RED.nodes.node(id);
      n.unitId = u;
      return RED.editor.validateNode(n);
    }, [ids.poll, unitId]);
    assert.equal(await valid(''), true, 'the device\'s unit id 1 is on the line');
    assert.equal(await valid('4'), true);
    assert.equal(await valid('5'), false, 'unit 5 is not on 1-4');
  });

  it('leaves the browser console without errors', () => {
    assert.deepEqual(consoleErrors, []);
  });
});
