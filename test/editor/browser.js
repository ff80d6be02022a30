'use strict';

/**
 * What the editor tests share: the Node-RED editor opened in headless Chromium (Debian's `chromium`,
 * driven by playwright-core) with the browser console's errors collected, and the dialog steps they
 * all take.
 */

const { chromium } = require('playwright-core');

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/**
 * Opens a running Node-RED's editor and waits until `ready` holds in the page.
 * @param {string} url the editor's address
 * @param {() => unknown} ready evaluated in the page: truthy once what the test needs is loaded
 * @param {{width: number, height: number}} [viewport]
 * @returns {Promise<{browser: import('playwright-core').Browser, page: import('playwright-core').Page, consoleErrors: string[]}>}
 *   consoleErrors: every console error and uncaught exception of the page, as they come
 */
async function openEditorPage (url, ready, viewport = { width: 1400, height: 900 }) {
  const consoleErrors = [];
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  const page = await browser.newPage({ viewport });
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (err) => consoleErrors.push(String(err)));
  await page.goto(url);
  await page.waitForFunction(ready, null, { timeout: 30000 });
  return { browser, page, consoleErrors };
}

/**
 * Opens a new config node's dialog on its own. A Modbus device's dialog names a config node of another
 * type (its TLS configuration): in a fresh editor the first such dialog can stay unopened while the
 * editor loads that type's picker (a Node-RED behaviour not yet understood); opened again, it opens.
 * Ready once its oneditprepare has run: the fields of the other transports are hidden.
 * @param {import('playwright-core').Page} page @param {string} type
 */
async function openConfigDialog (page, type) {
  for (let tries = 0; ; tries++) {
    await page.evaluate((t) => RED.editor.editConfig('', t, '_ADD_', 'node-input'), type);
    await page.waitForSelector('#node-config-dialog-edit-form input', { state: 'visible' });
    if (type !== 'nines-modbus-device') return;
    const prepared = await page.waitForSelector('#node-config-input-path', { state: 'hidden', timeout: 5000 }).then(() => true, () => false);
    if (prepared) return;
    if (tries === 2) throw new Error(`the ${type} dialog never finished opening`);
    await closeEditors(page);
  }
}

/** Closes every open edit tray (a config node's dialog over a node's too). */
async function closeEditors (page) {
  await page.evaluate(() => { while (RED.editor.getEditStackSize && RED.editor.getEditStackSize() > 0) RED.tray.close(); });
  await page.evaluate(() => RED.tray.close());
  await page.waitForFunction(() => !document.querySelector('.red-ui-tray'), null, { timeout: 5000 }).catch(() => {});
}

/** Types a value into a field and reports whether the editor marks it invalid. */
async function markedInvalid (page, selector, value) {
  const field = page.locator(selector).last();
  await field.fill(value);
  await field.dispatchEvent('change');
  return field.evaluate((n) => n.classList.contains('input-error'));
}

module.exports = { openEditorPage, openConfigDialog, closeEditors, markedInvalid };
