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
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-prom-'));
  const config = path.join(dir, 'prometheus.yml');
  fs.writeFileSync(config, [
    'global:',
    `  scrape_interval: ${scrapeInterval}`,
    `  scrape_timeout: ${scrapeInterval}`,
    'scrape_configs:',
    '  - job_name: nines',
    '    static_configs:',
    `      - targets: [${targets.map((t) => `'${t}'`).join(', ')}]`,
    ''
  ].join('\n'));
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const child = spawn('prometheus', [
      `--config.file=${config}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      ...(nativeHistograms ? ['--enable-feature=native-histograms'] : []),
      '--log.level=warn'
    ], { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    child.stderr.on('data', (d) => { log += d; });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const url = `http://127.0.0.1:${port}`;
    const ready = await waitReady(`${url}/-/ready`, exited);
    if (!ready) {
      if (/address already in use/.test(log)) continue;
      child.kill('SIGKILL');
      throw new Error(`prometheus did not start: ${log.slice(-2000)}`);
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
  throw new Error('prometheus: no free port after 3 attempts');
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

module.exports = { startPrometheus, freePort, waitReady };
