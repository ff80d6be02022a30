'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { startServer, notFound } = require('./serve');
const { renderPage } = require('./page');
const { NAME_LEVEL } = require('../../base/names');

/**
 * The status page: one HTML page, its script and style, status.json (what the script polls) and
 * a percentile plot per job. Every asset is served from here; the Content-Security-Policy lets
 * the page load nothing from anywhere else.
 */

const ASSETS = Object.freeze({
  '/assets/status.js': { file: 'status.js', type: 'text/javascript; charset=utf-8' },
  '/assets/status.css': { file: 'status.css', type: 'text/css; charset=utf-8' },
  '/assets/favicon.svg': { file: 'favicon.svg', type: 'image/svg+xml' }
});
const PATHS = Object.freeze(['/', '/status.json', '/plot/<job>.svg', ...Object.keys(ASSETS)]);
const SECURITY = Object.freeze({
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer'
});
/** A job's plot: the job is named as every job is (base/names.js) */
const PLOT_RE = new RegExp(`^/plot/(${NAME_LEVEL})\\.svg$`);

/**
 * @param {import('node:http').ServerResponse} res
 * @param {string} type
 * @param {string|Buffer} body
 * @param {string} method
 * @param {string} [cache]
 */
function send (res, type, body, method, cache = 'no-store') {
  res.writeHead(200, { 'content-type': type, 'content-length': Buffer.byteLength(body), 'cache-control': cache, ...SECURITY });
  res.end(method === 'HEAD' ? undefined : body);
}

/**
 * @param {import('./status').StatusModel} model
 * @param {{host: string, port: number, login?: {username: string, password: string}|null, maxConnections?: number}} listen
 * @returns {Promise<{url: string, host: string, port: number, close: () => Promise<void>}>}
 */
function startStatusServer (model, { host, port, login = null, maxConnections }) {
  // read once at start: the files ship with the package and do not change under a running gateway
  const assets = new Map(Object.entries(ASSETS).map(([p, a]) => [p, { type: a.type, body: fs.readFileSync(path.join(__dirname, 'assets', a.file)) }]));
  return startServer({
    host,
    port,
    login,
    maxConnections,
    realm: 'nines status',
    handle: (req, res, url) => {
      const p = url.pathname;
      if (p === '/') return send(res, 'text/html; charset=utf-8', renderPage(model.snapshot()), req.method);
      if (p === '/status.json') return send(res, 'application/json; charset=utf-8', JSON.stringify(model.snapshot()), req.method);
      const asset = assets.get(p);
      if (asset) return send(res, asset.type, asset.body, req.method, 'max-age=300');
      const m = PLOT_RE.exec(p);
      const svg = m ? model.plotSvg(m[1]) : null;
      if (svg !== null) return send(res, 'image/svg+xml; charset=utf-8', svg, req.method);
      return notFound(res, url, PATHS);
    }
  });
}

module.exports = { startStatusServer };
