'use strict';

/* global document -- the waitForFunction callbacks run in the page */

/**
 * The status page in headless Chromium (Debian's `chromium`, driven by playwright-core): it loads
 * with the login, shows the jobs with live percentiles and the devices' health, its table and its
 * percentile plots change over two intervals, it loads nothing from another origin, and the
 * console stays free of errors. A screenshot is kept in test/artifacts/ for a person to look at.
 */

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { chromium } = require('playwright-core');
const { Gateway } = require('../../gateway/runtime/gateway');
const { validateConfig } = require('../../gateway/runtime/config');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'];
const ARTIFACTS = path.join(__dirname, '..', 'artifacts');
const LOGIN = { username: 'viewer', password: 'status-page-test' };
const INTERVAL_MS = 1000;

describe('status page in headless Chromium', function () {
  this.timeout(60000);
  let sims, gw, browser, page;
  const consoleErrors = [];
  const foreign = [];

  before(async () => {
    sims = [await createModbusTcpSimulator({ port: 0, faults: 'latency=1ms-4ms' }), await createModbusTcpSimulator({ port: 0 })];
    gw = new Gateway(validateConfig({
      gateway: { id: 'gw-page', interval: `${INTERVAL_MS}ms`, workers: 1, http: { listen: '127.0.0.1:0', ...LOGIN } },
      mqtt: { embedded: { port: 0 } },
      devices: { plc: { target: sims[0].url }, gone: { target: sims[1].url, backoff: { min: '100ms', max: '200ms' } } },
      jobs: [
        { name: 'holding', device: 'plc', read: { fc: 3, address: 0, quantity: 10 }, rate: '100/s' },
        { name: 'inputs', device: 'plc', read: { fc: 4, address: 0, quantity: 2 }, rate: '50/s' },
        { name: 'other', device: 'gone', read: { fc: 3, address: 0, quantity: 1 }, rate: '20/s' }
      ]
    }, { env: {} }));
    await gw.start();
    // one device goes away, so the page has a down device to show
    await sims[1].close();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
    const context = await browser.newContext({ httpCredentials: LOGIN, viewport: { width: 1400, height: 1000 } });
    page = await context.newPage();
    page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
    page.on('pageerror', (err) => consoleErrors.push(String(err)));
    const origin = new URL(gw.status.url).origin;
    page.on('request', (r) => { if (!r.url().startsWith(origin)) foreign.push(r.url()); });
  });

  after(async () => {
    if (browser) await browser.close();
    if (gw) await gw.stop();
    if (sims) await sims[0].close();
  });

  const cells = () => page.$$eval('#jobs-body tr', (rows) => rows.map((r) => [...r.children].map((td) => td.textContent)));
  /** Resolves on the next summary of one job (the gateway emits one per job per interval). */
  const summaryOf = (name) => new Promise((resolve) => {
    const on = (job) => { if (job === name) { gw.off('summary', on); resolve(); } };
    gw.on('summary', on);
  });
  const plotSrcs = () => page.$$eval('img[data-job]', (imgs) => imgs.map((i) => i.getAttribute('src')));

  it('shows every job with percentiles, the devices\' health, and updates table and plots over two intervals', async () => {
    // holding's first interval is in before the page loads, so the server-rendered table has its
    // percentiles (any job's summary is not enough: the others may close their interval first)
    await summaryOf('holding');
    await page.goto(gw.status.url);
    const first = await cells();
    assert.deepEqual(first.map((r) => r[0]), ['holding', 'inputs', 'other']);
    const firstPlots = await plotSrcs();
    // two more intervals, each picked up by the page's own polling
    for (const n of [1, 2]) {
      await page.waitForFunction((k) => Number(document.body.dataset.updates || 0) >= k, 2 * n, { timeout: 10000 });
      await summaryOf('holding');
    }
    await page.waitForFunction(() => Number(document.body.dataset.updates || 0) >= 5, null, { timeout: 10000 });
    const later = await cells();
    const seq = (rows, job) => Number(rows.find((r) => r[0] === job)[3]);
    assert.ok(seq(later, 'holding') >= seq(first, 'holding') + 2, `seq moved on by two intervals: ${seq(first, 'holding')} → ${seq(later, 'holding')}`);
    assert.notDeepEqual(later, first);
    const holding = later.find((r) => r[0] === 'holding');
    // p50 … max in µs or ms, rising
    const p = holding.slice(9, 15).map((t) => { const m = /^([\d.]+) (µs|ms|s)$/.exec(t); assert.ok(m, `a percentile: ${t}`); return Number(m[1]) * { µs: 1e-3, ms: 1, s: 1e3 }[m[2]]; });
    for (let i = 1; i < p.length; i++) assert.ok(p[i] >= p[i - 1], `percentiles rise: ${holding.slice(9, 15)}`);
    assert.equal(holding[2], 'up');
    const devices = await page.$$eval('#devices-body tr', (rows) => rows.map((r) => [r.children[0].textContent, r.children[1].textContent]));
    assert.deepEqual(new Map(devices), new Map([['plc', 'up'], ['gone', 'down']]));

    const laterPlots = await plotSrcs();
    assert.equal(laterPlots.length, 3);
    assert.notDeepEqual(laterPlots, firstPlots, 'the plots were reloaded for the new intervals');
    const sizes = await page.$$eval('img[data-job]', (imgs) => imgs.map((i) => i.complete && i.naturalWidth));
    assert.ok(sizes.every((w) => w > 0), `every plot drew: ${sizes}`);

    fs.mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'status-page.png'), fullPage: true });
  });

  it('loads nothing from another origin, and the console has no errors', () => {
    assert.deepEqual(foreign, []);
    assert.deepEqual(consoleErrors, []);
  });

  it('answers wrong credentials with 401', async () => {
    const res = await fetch(gw.status.url, { headers: { authorization: `Basic ${Buffer.from('viewer:nope').toString('base64')}` } });
    assert.equal(res.status, 401);
    assert.equal((await res.json()).error.code, 'NINES_ERR_HTTP_UNAUTHORIZED');
  });
});
