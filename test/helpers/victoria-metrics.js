'use strict';

const path = require('node:path');
const { assertTools } = require('./system-tools');
const { startScraper, scrapeConfig } = require('./prometheus');

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
  return startScraper({
    tool: 'victoria-metrics',
    config: 'scrape.yml',
    configLines: scrapeConfig(targets, scrapeInterval),
    args: (port, dir, config) => [
      `-storageDataPath=${path.join(dir, 'data')}`,
      `-httpListenAddr=127.0.0.1:${port}`,
      `-promscrape.config=${config}`,
      '-search.latencyOffset=0s',
      '-search.disableCache',
      '-loggerLevel=ERROR'
    ],
    readyPath: '/health'
  });
}

module.exports = { startVictoriaMetrics };
