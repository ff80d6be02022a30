'use strict';

/**
 * "Scan line" in the Modbus device dialog, in headless Chromium against a real Node-RED with the
 * package installed and a simulated RTU-over-TCP line: the bound shows before the result, then
 * one row per unit found with its identity and readable ranges; "Use these units" fills the
 * dialog's unit list (and a unit id on it); "Tag sheet" saves the unit's starter CSV.
 */

const assert = require('node:assert/strict');
const fs = require('node:fs');
const { startNodeRed } = require('../e2e/launch');
const { createModbusRtuTcpSimulator, createModbusLineModel } = require('../../gateway/simulators/modbus');
const ui = require('./browser');

describe('scan a line from the Modbus device dialog (headless Chromium)', function () {
  this.timeout(60000);
  let nr, sim, model, browser, page, consoleErrors;

  before(async () => {
    model = createModbusLineModel({
      units: {
        2: { map: { holdingRegisters: [[0, 3]] }, identification: { vendorName: 'Acme', productCode: 'PX-2', revision: '1.0', productName: 'Valve bank' } },
        5: { map: { coils: [[0, 1]] }, lacks: [43] }
      }
    });
    sim = await createModbusRtuTcpSimulator({ port: 0, model });
    nr = await startNodeRed();
    ({ browser, page, consoleErrors } = await ui.openEditorPage(nr.url,
      // the whole palette: nines-profile comes last, after the scripts of the tag table it loads, and a
      // dialog opened before that never finishes opening (editor.test.js waits the same way)
      () => window.RED && RED.nodes && RED.nodes.getType('nines-modbus-device') && window.NinesScan &&
        RED.nodes.getType('nines-profile') && document.querySelector('.red-ui-palette-node[data-palette-type="nines-ascii"]')));
  });

  after(async () => {
    if (browser) await browser.close();
    if (nr) await nr.stop();
    if (sim) await sim.close();
  });

  it('shows the bound, then the units with their identities; fills the unit list and saves a tag sheet', async () => {
    await ui.openConfigDialog(page, 'nines-modbus-device');
    try {
      await page.selectOption('#node-config-input-transport', 'rtutcp');
      await page.fill('#node-config-input-host', '127.0.0.1');
      await page.fill('#node-config-input-port', String(sim.port));
      // no baud rate: the short default silence between frames keeps the scan's map quick
      await page.selectOption('#node-config-input-baudRate', '');
      await page.fill('#nines-scan-units', '1-6');
      await page.fill('#nines-scan-timeout', '50');
      await page.click('#nines-scan-start');
      const bound = await page.locator('.nines-scan-bound').innerText();
      assert.match(bound, new RegExp(`Asking 6 unit id\\(s\\) on modbus\\+rtutcp://127\\.0\\.0\\.1:${sim.port} \\(timeout 50 ms\\): finding them takes at most 0\\.7 s`));
      await page.waitForSelector('.nines-scan-summary', { timeout: 30000 });
      assert.match(await page.locator('.nines-scan-summary').innerText(), /^2 unit\(s\) found/);
      assert.deepEqual(await page.locator('tr.nines-scan-unit td.nines-scan-identity').allInnerTexts(), ['Acme PX-2 1.0 (Valve bank)', '(no FC43)']);
      await page.click('.nines-scan-use');
      assert.equal(await page.inputValue('#node-config-input-units'), '2,5');
      assert.equal(await page.inputValue('#node-config-input-unitId'), '2', 'the unit id moves onto the line');
      const download = page.waitForEvent('download');
      await page.locator('tr.nines-scan-unit[data-unit="2"] .nines-scan-sheet').click();
      const file = await (await download).path();
      const rows = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l && !l.startsWith('#'));
      assert.deepEqual(rows, ['name,table,address,type', 'hr_0,holding,0,uint16', 'hr_1,holding,1,uint16', 'hr_2,holding,2,uint16', 'hr_3,holding,3,uint16']);
      assert.equal(model.writeRequests, 0);
    } finally {
      await ui.closeEditors(page);
    }
  });

  it('leaves the browser console without errors', () => {
    assert.deepEqual(consoleErrors, []);
  });
});
