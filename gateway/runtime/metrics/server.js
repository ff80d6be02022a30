'use strict';

const zlib = require('node:zlib');
const { NinesError } = require('../../base/errors');
const { startServer, sendError, notFound } = require('../http/serve');
const { negotiate } = require('./negotiate');
const { encodeText, PROMETHEUS_CONTENT_TYPE, OPENMETRICS_CONTENT_TYPE } = require('./text');
const { encodeProtobuf, PROTOBUF_CONTENT_TYPE } = require('./protobuf');

const PATHS = Object.freeze(['/metrics']);
/** Smaller answers go uncompressed: gzip would cost more than it saves */
const GZIP_MIN_BYTES = 1024;

/**
 * The metrics endpoint: GET /metrics, in the format the scraper's Accept header asks for
 * (negotiate.js), gzip when it accepts gzip. A scrape only reads the collector.
 * @param {import('./collector').MetricsCollector} collector
 * @param {{host: string, port: number, login?: {username: string, password: string}|null, maxConnections?: number}} listen
 * @returns {Promise<{url: string, host: string, port: number, close: () => Promise<void>}>}
 */
function startMetricsServer (collector, { host, port, login = null, maxConnections }) {
  return startServer({
    host,
    port,
    login,
    maxConnections,
    realm: 'nines metrics',
    handle: async (req, res, url) => {
      if (!PATHS.includes(url.pathname)) return notFound(res, url, PATHS);
      const { format, reason } = negotiate(req.headers.accept);
      if (format === null) {
        return sendError(res, 406, new NinesError('NINES_ERR_HTTP_BAD_REQUEST', reason, { status: 406, accept: String(req.headers.accept).slice(0, 200) }));
      }
      const families = await collector.families();
      let body;
      let type;
      if (format === 'protobuf') { body = encodeProtobuf(families); type = PROTOBUF_CONTENT_TYPE; } else if (format === 'openmetrics') { body = Buffer.from(encodeText(families, { openMetrics: true })); type = OPENMETRICS_CONTENT_TYPE; } else { body = Buffer.from(encodeText(families)); type = PROMETHEUS_CONTENT_TYPE; }
      const headers = { 'content-type': type, 'cache-control': 'no-store', vary: 'Accept, Accept-Encoding' };
      if (body.length >= GZIP_MIN_BYTES && /\bgzip\b/i.test(String(req.headers['accept-encoding'] || ''))) {
        body = await new Promise((resolve, reject) => zlib.gzip(body, { level: 1 }, (err, out) => (err ? reject(err) : resolve(out))));
        headers['content-encoding'] = 'gzip';
      }
      headers['content-length'] = body.length;
      res.writeHead(200, headers);
      res.end(req.method === 'HEAD' ? undefined : body);
    }
  });
}

module.exports = { startMetricsServer };
