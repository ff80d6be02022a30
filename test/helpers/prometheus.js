'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { assertTools } = require('./system-tools');

/**
 * A real Prometheus (Debian's `prometheus` package) for the tests, on 127.0.0.1, with native
 * histograms on (its feature flag) or as installed (no flags), scraping the given targets every
 * scrapeInterval, its data in a fresh temporary directory. Prometheus prints no address it bound, so a free port is taken from the kernel
 * (listen on 0, close) and handed to it; a lost race is retried.
 */

/** @returns {Promise<number>} a port the kernel just gave out */
function freePort () {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

/**
 * @param {object} opts
 * @param {string[]} opts.targets host:port of each metrics endpoint
 * @param {string} [opts.scrapeInterval='1s']
 * @param {boolean} [opts.nativeHistograms=true] --enable-feature=native-histograms; false: no flags
 * @returns {Promise<{url: string, query: (q: string) => Promise<object[]>, stop: () => Promise<void>, log: () => string}>}
 */
async function startPrometheus ({ targets, scrapeInterval = '1s', nativeHistograms = true }) {
  assertTools(['prometheus']);
  return startScraper({
    tool: 'prometheus',
    config: 'prometheus.yml',
    // Prometheus refuses a scrape timeout longer than the interval
    configLines: scrapeConfig(targets, scrapeInterval, [`  scrape_timeout: ${scrapeInterval}`]),
    args: (port, dir, config) => [
      `--config.file=${config}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      ...(nativeHistograms ? ['--enable-feature=native-histograms'] : []),
      '--log.level=warn'
    ],
    readyPath: '/-/ready'
  });
}

/**
 * The scrape config both scrapers read: one job, `nines`, over the targets.
 * @param {string[]} targets @param {string} interval @param {string[]} [globals] more global settings
 * @returns {string}
 */
function scrapeConfig (targets, interval, globals = []) {
  return [
    'global:',
    `  scrape_interval: ${interval}`,
    ...globals,
    'scrape_configs:',
    '  - job_name: nines',
    '    static_configs:',
    `      - targets: [${targets.map((t) => `'${t}'`).join(', ')}]`,
    ''
  ].join('\n');
}

/**
 * Starts a scraper with the Prometheus query API (Prometheus, VictoriaMetrics) on a free port of
 * 127.0.0.1, its config and data in a fresh temporary directory; a lost race for the port is retried.
 * @param {{tool: string, config: string, configLines: string, args: (port: number, dir: string, config: string) => string[], readyPath: string}} o
 * @returns {Promise<{url: string, query: (q: string) => Promise<object[]>, stop: () => Promise<void>, log: () => string}>}
 */
async function startScraper ({ tool, config: configName, configLines, args, readyPath }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `nines-${tool}-`));
  const config = path.join(dir, configName);
  fs.writeFileSync(config, configLines);
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const child = spawn(tool, args(port, dir, config), { stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    child.stdout.on('data', (d) => { log += d; });
    child.stderr.on('data', (d) => { log += d; });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const url = `http://127.0.0.1:${port}`;
    const ready = await waitReady(`${url}${readyPath}`, exited);
    if (!ready) {
      if (/address already in use/.test(log)) continue;
      child.kill('SIGKILL');
      throw new Error(`${tool} did not start: ${log.slice(-2000)}`);
    }
    return {
      url,
      log: () => log,
      async query (q) {
        const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(q)}`);
        const body = await res.json();
        if (body.status !== 'success') throw new Error(`query ${q} failed: ${JSON.stringify(body)}`);
        return body.data.result;
      },
      async stop () {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
        fs.rmSync(dir, { recursive: true, force: true });
      }
    };
  }
  throw new Error(`${tool}: no free port after 3 attempts`);
}

/**
 * @param {string} url a readiness URL
 * @param {Promise<unknown>} exited settles when the process exits
 * @returns {Promise<boolean>} true once url answers 200; false when the process exits first or in 15 s
 */
async function waitReady (url, exited) {
  let gone = false;
  exited.then(() => { gone = true; });
  const end = Date.now() + 15000;
  while (!gone && Date.now() < end) {
    try {
      const res = await fetch(url);
      if (res.status === 200) return true;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

module.exports = { startPrometheus, startScraper, scrapeConfig, freePort, waitReady };
