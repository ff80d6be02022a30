'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { assertTools } = require('./system-tools');
const { freePort, waitReady } = require('./prometheus');

/**
 * A real VictoriaMetrics (Debian's `victoria-metrics` package, single node) for the tests, on
 * 127.0.0.1, scraping the given targets every scrapeInterval with its own Prometheus-compatible
 * scraper (-promscrape.config), which reads the text formats only. Its data in a fresh temporary
 * directory. Queries see a sample as soon as it is stored (-search.latencyOffset=0s; the default
 * 30 s hides the latest scrapes) and are never answered from the cache.
 */

/**
 * @param {object} opts
 * @param {string[]} opts.targets host:port of each metrics endpoint
 * @param {string} [opts.scrapeInterval='1s']
 * @returns {Promise<{url: string, query: (q: string) => Promise<object[]>, stop: () => Promise<void>, log: () => string}>}
 */
async function startVictoriaMetrics ({ targets, scrapeInterval = '1s' }) {
  assertTools(['victoria-metrics']);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-vm-'));
  const config = path.join(dir, 'scrape.yml');
  fs.writeFileSync(config, [
    'global:',
    `  scrape_interval: ${scrapeInterval}`,
    'scrape_configs:',
    '  - job_name: nines',
    '    static_configs:',
    `      - targets: [${targets.map((t) => `'${t}'`).join(', ')}]`,
    ''
  ].join('\n'));
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const child = spawn('victoria-metrics', [
      `-storageDataPath=${path.join(dir, 'data')}`,
      `-httpListenAddr=127.0.0.1:${port}`,
      `-promscrape.config=${config}`,
      '-search.latencyOffset=0s',
      '-search.disableCache',
      '-loggerLevel=ERROR'
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    child.stdout.on('data', (d) => { log += d; });
    child.stderr.on('data', (d) => { log += d; });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const url = `http://127.0.0.1:${port}`;
    const ready = await waitReady(`${url}/health`, exited);
    if (!ready) {
      if (/address already in use/.test(log)) continue;
      child.kill('SIGKILL');
      throw new Error(`victoria-metrics did not start: ${log.slice(-2000)}`);
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
  throw new Error('victoria-metrics: no free port after 3 attempts');
}

module.exports = { startVictoriaMetrics };
