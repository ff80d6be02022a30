'use strict';

/**
 * Issue 21, defect 7, in the real editor (headless Chromium, a real Node-RED): the tag list is a
 * table. A header names its columns and each field sits under its header; rows do not wrap, at the
 * dialog's default width and at a narrow one, and no field's text or header is cut off; a list wider
 * than the dialog scrolls sideways and does not widen the dialog. Every problem of a list shows at
 * once, under its row, in plain words. A CSV sheet imported into a list that holds tags asks first:
 * replace, append (refused when a name would repeat) or cancel.
 */

const assert = require('node:assert/strict');
const { startNodeRed } = require('../e2e/launch');
const { openEditorPage, closeEditors } = require('./browser');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');

/** A list that takes every column: an order, a bit, a string's length, scale, offset, deadband */
const WIDE = [
  { name: 'boiler_temp', table: 'holding', address: 100, type: 'float32', order: 'CDAB', deadband: 0.5, unit: '°C' },
  { name: 'level', table: 'holding', address: 102, type: 'int16', scale: 0.1, offset: -2, deadband: 1, unit: '%' },
  { name: 'pump_on', table: 'coil', address: 3 },
  { name: 'alarm', table: 'holding', address: 103, type: 'bit', bit: 3 },
  { name: 'label', table: 'holding', address: 104, type: 'string', length: 4 },
  { name: 'fan_stage', table: 'holding', address: 108, type: 'uint8', byte: 'high' }
];

/** Four problems in three rows: a name left empty, an address that is no number, a scale of 0, a repeated name */
const BAD = [
  { name: 'ok', table: 'holding', address: 0 },
  { name: '', table: 'holding', address: 'abc' },
  { name: 'b', table: 'holding', address: 5, type: 'int16', scale: 0 },
  { name: 'ok', table: 'coil', address: 1 }
];

const HELD = [{ name: 'level', table: 'holding', address: 1 }, { name: 'pump', table: 'coil', address: 0 }];

describe('the tag list as a table, its problems and its sheet import (headless Chromium)', function () {
  this.timeout(120000);
  let nr;
  let sim;
  let browser;
  let page;
  let consoleErrors;

  before(async () => {
    sim = await createModbusTcpSimulator({ port: 0 });
    nr = await startNodeRed();
    const poll = (id, y, tags) => ({
      id, type: 'nines-poll', z: 'tt-tab', name: id, protocol: 'modbus', modbusDevice: 'tt-dev', asciiDevice: '', source: 'tags', tags,
      command: '@01', fc: 3, address: 0, quantity: 1, dataType: 'uint16', wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0,
      rate: '1/s', values: 'on-change', deadband: 0, every: 100, minInterval: 0, interval: 10, mode: 'worker', policy: 'skip', autostart: false,
      x: 200, y, wires: [[], []]
    });
    const flow = [
      { id: 'tt-tab', type: 'tab', label: 'table' },
      {
        id: 'tt-dev', type: 'nines-modbus-device', name: 'plc (table test)', transport: 'tcp', host: '127.0.0.1', port: sim.port, path: '/dev/ttyUSB0',
        baudRate: 9600, parity: 'none', dataBits: 8, stopBits: 1, unitId: 1, timeout: 500, maxConnections: 1, connectTimeout: 5000, backoffMin: 100, backoffMax: 10000, allowWrites: false
      },
      poll('tt-wide', 100, WIDE),
      poll('tt-bad', 200, BAD),
      poll('tt-held', 300, HELD)
    ];
    assert.equal((await nr.api('POST', '/flows', flow, { 'Node-RED-Deployment-Type': 'full' })).status, 204);
    ({ browser, page, consoleErrors } = await openEditorPage(nr.url, () => window.RED && RED.nodes && RED.nodes.node('tt-wide') && window.NinesTags, { width: 1400, height: 900 }));
  });

  after(async () => {
    if (browser) await browser.close();
    if (nr) await nr.stop();
    if (sim) await sim.close();
  });

  afterEach(() => closeEditors(page));

  /** Opens a node's dialog and waits for the runtime's check of its list. */
  async function open (page, id) {
    await page.evaluate((nodeId) => RED.editor.edit(RED.nodes.node(nodeId)), id);
    await page.waitForSelector('#nines-tags-import', { state: 'visible' });
    await ready(page);
  }

  const ready = (page) => page.waitForFunction(() => document.querySelector('#nines-tags-status').getAttribute('data-state') === 'ready', null, { timeout: 5000 });

  /** Where every header cell and every field of every row is, and whether its text fits it */
  function geometry (page) {
    return page.evaluate(() => {
      const shown = (e) => getComputedStyle(e).display !== 'none';
      const ctx = document.createElement('canvas').getContext('2d');
      /** whether an input's value or a select's chosen text fits inside it (a select keeps ~20 px for its arrow) */
      const fits = (e) => {
        if (e.tagName === 'INPUT') return e.scrollWidth <= e.clientWidth;
        if (e.tagName !== 'SELECT') return e.scrollWidth <= e.clientWidth;
        ctx.font = getComputedStyle(e).font;
        const text = e.selectedOptions.length ? e.selectedOptions[0].text : '';
        return ctx.measureText(text).width + 20 <= e.clientWidth;
      };
      const col = (e) => (/nines-tags?-(?:col-)?(\w+)/.exec(e.className) || [])[1];
      const box = (e) => { const r = e.getBoundingClientRect(); return { left: r.left, right: r.right, mid: (r.top + r.bottom) / 2 }; };
      const scroller = document.querySelector('.nines-tags-scroll');
      return {
        tray: document.querySelector('.red-ui-tray').getBoundingClientRect().width,
        scroll: { width: scroller.scrollWidth, client: scroller.clientWidth, right: scroller.getBoundingClientRect().right },
        head: [...document.querySelectorAll('.nines-tags-head > span')].filter(shown).map((e) => ({ col: col(e), text: e.textContent, fits: fits(e), ...box(e) })),
        rows: [...document.querySelectorAll('#nines-tags-list > li .nines-tag-cells')].map((r) => [...r.children].filter(shown).map((e) => ({
          col: col(e), blank: getComputedStyle(e).visibility === 'hidden', fits: fits(e), ...box(e)
        })))
      };
    });
  }

  for (const [what, viewport] of [['the default width', { width: 1400, height: 900 }], ['a narrow window', { width: 700, height: 800 }]]) {
    it(`shows column headers over fields that stay in one line under them, none cut off, at ${what}`, async () => {
      await page.setViewportSize(viewport);
      await open(page, 'tt-wide');
      const g = await geometry(page);
      // the list does not widen the dialog (Node-RED sizes its tray to the content as it opens): its
      // default is 509 px in Node-RED 4 and 526 px in 5; widened by the list it was 953 px
      assert.ok(g.tray < 600, `tray ${g.tray} px`);
      assert.deepEqual(g.head.map((h) => h.col), ['number', 'name', 'table', 'address', 'type', 'order', 'bit', 'byte', 'length', 'scale', 'offset', 'deadband', 'unit']);
      assert.deepEqual(g.head.map((h) => h.text), ['#', 'name', 'table', 'address', 'type', 'order', 'bit', 'byte', 'registers', 'scale', 'offset', 'deadband', 'unit']);
      for (const h of g.head) assert.ok(h.fits, `header ${h.text} is cut off`);
      assert.equal(g.rows.length, WIDE.length);
      for (const [i, cells] of g.rows.entries()) {
        assert.deepEqual(cells.map((c) => c.col), g.head.map((h) => h.col), `row ${i + 1} has a cell per column`);
        const mids = cells.map((c) => c.mid);
        assert.ok(Math.max(...mids) - Math.min(...mids) < 2, `row ${i + 1} is one line: ${mids}`);
        for (const [k, c] of cells.entries()) {
          assert.ok(Math.abs(c.left - g.head[k].left) < 2, `row ${i + 1}, ${c.col} at ${c.left}, its header at ${g.head[k].left}`);
          if (!c.blank) assert.ok(c.fits, `row ${i + 1}, ${c.col} is cut off`);
        }
      }
      // a row shows a blank cell where its tag takes no such field: a coil has no order, no scale
      assert.deepEqual(g.rows[2].filter((c) => !c.blank).map((c) => c.col), ['number', 'name', 'table', 'address', 'type', 'unit']);
      // wider than the dialog: it scrolls sideways to its last column, the header with it
      assert.ok(g.scroll.width > g.scroll.client, 'scrolls sideways');
      await page.evaluate(() => { const s = document.querySelector('.nines-tags-scroll'); s.scrollLeft = s.scrollWidth; });
      const end = await geometry(page);
      const unitHead = end.head[end.head.length - 1];
      const unitCell = end.rows[0][end.rows[0].length - 1];
      assert.ok(unitHead.right <= end.scroll.right + 1, 'the unit header in sight');
      assert.ok(Math.abs(unitCell.left - unitHead.left) < 2, 'the unit field under its header');
    });
  }

  it('shows a list of coils without the columns no row uses', async () => {
    await page.setViewportSize({ width: 1400, height: 900 });
    await open(page, 'tt-held');
    // level (a holding register) takes order, scale, offset, deadband; pump (a coil) none of them
    const g = await geometry(page);
    assert.deepEqual(g.head.map((h) => h.col), ['number', 'name', 'table', 'address', 'type', 'order', 'scale', 'offset', 'deadband', 'unit']);
    await page.locator('#nines-tags-list > li').nth(0).locator('.nines-tag-table').selectOption('coil');
    await page.waitForFunction(() => getComputedStyle(document.querySelector('.nines-tags-col-order')).display === 'none', null, { timeout: 5000 });
    assert.deepEqual((await geometry(page)).head.map((h) => h.col), ['number', 'name', 'table', 'address', 'type', 'unit']);
  });

  it('shows every problem at once, each under its row in plain words, and the node lists them all', async () => {
    await open(page, 'tt-bad');
    const problems = await page.$$eval('#nines-tags-list > li', (lis) => lis.map((li) => [...li.querySelectorAll('.nines-tag-row-problems li')].map((e) => e.textContent)));
    assert.equal(problems.length, 4);
    assert.deepEqual(problems[0], []);
    assert.deepEqual(problems[1].length, 2);
    assert.match(problems[1][0], /^row 2, name: is required; it must start with a letter/);
    assert.match(problems[1][1], /^row 2, address: must be an integer from 0 to 65535 .*; got "abc"$/);
    assert.deepEqual(problems[2], ['row 3, scale: must be a finite number other than 0; got 0']);
    assert.match(problems[3][0], /^row 4, name: is the name of an earlier tag too; tag names must be unique; got "ok"$/);
    // each beside its field: the field red, the rule its tooltip
    const red = await page.$$eval('#nines-tags-list .input-error', (els) => els.map((e) => [e.closest('li').querySelector('.nines-tag-number').textContent, /nines-tag-(\w+)/.exec(e.className)[1]]));
    assert.deepEqual(red, [['2', 'name'], ['2', 'address'], ['3', 'scale'], ['4', 'name']]);
    assert.match(await page.locator('#nines-tags-status').innerText(), /^Problems: 4, in rows 2, 3, 4/);
    assert.doesNotMatch(await page.locator('#nines-tags').innerText(), /nothing must/);
    // the node's own reasons (its tooltip on the canvas): all four, not the first alone
    await page.click('#node-dialog-ok');
    await page.waitForFunction(() => RED.nodes.node('tt-bad').valid === false, null, { timeout: 5000 });
    const reasons = await page.evaluate(() => RED.nodes.node('tt-bad').validationErrors);
    assert.deepEqual(reasons.map((r) => r.replace(/:.*/, '')), ['row 2, name', 'row 2, address', 'row 3, scale', 'row 4, name']);
  });

  it('asks before a CSV sheet changes a list that holds tags: cancel, append (refused on a repeated name), replace', async () => {
    await open(page, 'tt-held');
    const names = () => page.$$eval('#nines-tags-list .nines-tag-name', (els) => els.map((e) => e.value));
    const sheetText = () => page.locator('#nines-tags-sheet').innerText();
    const upload = async (name, text) => {
      await page.setInputFiles('#nines-tags-file', { name, mimeType: 'text/csv', buffer: Buffer.from(text) });
      await page.waitForFunction((n) => document.querySelector('#nines-tags-sheet').textContent.includes(n), name, { timeout: 5000 });
    };
    const SHEET = 'name,table,address\npump,coil,3\nflow,holding,9\n';
    await upload('plant.csv', SHEET);
    assert.match(await sheetText(), /plant\.csv holds 2 tags; the list holds 2\. Replace the list with the sheet, or append the sheet to it\?/);
    assert.deepEqual(await names(), ['level', 'pump'], 'nothing changed while it asks');
    await page.click('#nines-tags-sheet-cancel');
    assert.equal(await page.locator('#nines-tags-sheet').isVisible(), false);
    assert.deepEqual(await names(), ['level', 'pump']);

    await upload('plant.csv', SHEET);
    await page.click('#nines-tags-sheet-append');
    assert.match(await sheetText(), /Not appended: the list has tags of these names already \(1\): pump\./);
    assert.deepEqual(await names(), ['level', 'pump'], 'nothing appended');
    await page.click('#nines-tags-sheet-replace');
    await page.waitForFunction(() => /Tags imported from plant\.csv: 2/.test(document.querySelector('#nines-tags-sheet').textContent), null, { timeout: 5000 });
    assert.deepEqual(await names(), ['pump', 'flow']);

    await upload('more.csv', 'name,table,address\nlevel,holding,1\n');
    await page.click('#nines-tags-sheet-append');
    await page.waitForFunction(() => /Tags appended from more\.csv: 1/.test(document.querySelector('#nines-tags-sheet').textContent), null, { timeout: 5000 });
    assert.deepEqual(await names(), ['pump', 'flow', 'level']);
    await ready(page);
    assert.match(await page.locator('#nines-tags-status').innerText(), /^Tags: 3 · requests per poll: \d+$/);
    await page.click('#node-dialog-ok');
    assert.deepEqual((await page.evaluate(() => RED.nodes.node('tt-held').tags)).map((t) => t.name), ['pump', 'flow', 'level']);
  });

  it('leaves the browser console without errors', () => {
    assert.deepEqual(consoleErrors, []);
  });
});
