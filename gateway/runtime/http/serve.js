'use strict';

const crypto = require('node:crypto');
const http = require('node:http');
const { NinesError } = require('../../base/errors');
const D = require('./defaults');
const { exposureProblem, isLoopbackHost } = require('../loopback');
const { LoginThrottle } = require('./login-throttle');

/**
 * The small HTTP server under the metrics endpoint and the status page (node:http, no framework):
 * GET and HEAD only, no request bodies, an optional Basic login compared in constant time, and
 * every refusal a JSON body `{error: {code, message, details}}` with a NINES_ERR_HTTP_* code.
 * A refused request changes nothing: it is answered before any handler runs. Malformed or
 * oversized requests (Node's parser refuses them) get the same coded answer and never reach a
 * handler or crash the gateway. Bounded: connections by count, slow or idle requests by time (408,
 * then closed), wrong logins by a throttle per address and overall (429, login-throttle.js).
 */

/**
 * Answers with a coded JSON error.
 * @param {import('node:http').ServerResponse} res
 * @param {number} status
 * @param {NinesError} err
 * @param {Record<string, string>} [headers]
 */
function sendError (res, status, err, headers = {}) {
  const body = JSON.stringify({ error: err.toJSON() }) + '\n';
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store', ...headers });
  res.end(res.req && res.req.method === 'HEAD' ? undefined : body);
}

/**
 * Compares a secret in constant time: digests first, so neither the content nor the length of a
 * wrong guess shows in the time taken.
 * @param {string} given
 * @param {string} expected
 * @returns {boolean}
 */
function sameSecret (given, expected) {
  const a = crypto.createHash('sha256').update(given, 'utf8').digest();
  const b = crypto.createHash('sha256').update(expected, 'utf8').digest();
  return crypto.timingSafeEqual(a, b);
}

/**
 * @param {string|undefined} header the Authorization header
 * @param {{username: string, password: string}} login
 * @returns {boolean}
 */
function loginMatches (header, login) {
  if (typeof header !== 'string') return false;
  const m = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(header);
  if (!m) return false;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return false;
  // both compared, always, so the time says nothing about which one was wrong
  const userOk = sameSecret(decoded.slice(0, colon), login.username);
  const passOk = sameSecret(decoded.slice(colon + 1), login.password);
  return userOk && passOk;
}

/**
 * Starts a server.
 * @param {object} opts
 * @param {string} opts.host
 * @param {number} opts.port 0 picks a free one
 * @param {{username: string, password: string}|null} [opts.login] Basic login every request needs
 * @param {number} [opts.maxConnections] open connections; more are closed at accept (default 32)
 * @param {LoginThrottle} [opts.throttle] of wrong logins (default: one of its own)
 * @param {string} opts.realm shown by browsers in the login dialog
 * @param {(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse, url: URL) => void|Promise<void>} opts.handle
 *   called for checked GET/HEAD requests; it answers unknown paths itself (notFound)
 * @returns {Promise<{server: import('node:http').Server, host: string, port: number, url: string, close: () => Promise<void>}>}
 * @throws {NinesError} NINES_ERR_PORT_IN_USE when the port is taken; NINES_ERR_INVALID_ARG for a
 *   host beyond loopback without a login (../loopback.js) or a username with a colon
 */
async function startServer ({ host, port, login = null, maxConnections = D.HTTP_MAX_CONNECTIONS, throttle = new LoginThrottle(), realm, handle }) {
  // the config check says the same with the field's path; this holds for every caller
  const exposed = exposureProblem(host, login !== null);
  if (exposed !== null) throw new NinesError('NINES_ERR_INVALID_ARG', `host: ${JSON.stringify(host)} ${exposed}: pass a login, or listen on 127.0.0.1`, { field: 'host', value: host });
  if (login !== null && login.username.includes(':')) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `login.username: ${JSON.stringify(login.username)} must not contain ":" (HTTP Basic splits the user name from the password at the first colon)`, { field: 'login.username', value: login.username });
  }
  if (!Number.isInteger(maxConnections) || maxConnections < 1 || maxConnections > D.HTTP_MAX_CONNECTIONS_LIMIT) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `maxConnections: ${JSON.stringify(maxConnections)} must be an integer from 1 to ${D.HTTP_MAX_CONNECTIONS_LIMIT}`, { field: 'maxConnections', value: maxConnections });
  }
  const server = http.createServer({
    maxHeaderSize: D.HTTP_MAX_HEADER_BYTES,
    headersTimeout: D.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeout: D.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeout: D.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    // Node enforces the two timeouts above only when it checks, every 30 s by itself
    connectionsCheckingInterval: D.HTTP_CONNECTIONS_CHECK_MS
  }, (req, res) => {
    // nothing a request carries may throw out of here and take the gateway down
    try {
      route(req, res);
    } catch (err) {
      if (res.headersSent) res.destroy();
      else sendError(res, 500, new NinesError('NINES_ERR_HTTP_BAD_REQUEST', `the request failed: ${err && err.message}`, { status: 500 }));
    }
  });
  const route = (req, res) => {
    let url;
    try {
      url = new URL(req.url, 'http://localhost');
    } catch {
      sendError(res, 400, new NinesError('NINES_ERR_HTTP_BAD_REQUEST', `request target ${JSON.stringify(String(req.url).slice(0, 200))} is not a path`, { status: 400 }));
      return;
    }
    if (login && !checkLogin(req, res)) return;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      req.resume();
      sendError(res, 405, new NinesError('NINES_ERR_HTTP_NOT_FOUND', `${req.method} is not served; only GET and HEAD`, { status: 405, method: req.method }), { allow: 'GET, HEAD' });
      return;
    }
    const length = req.headers['content-length'];
    if ((length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined) {
      req.resume();
      sendError(res, 400, new NinesError('NINES_ERR_HTTP_BAD_REQUEST', `a ${req.method} request carries no body; this one has ${length !== undefined ? `Content-Length ${length}` : `Transfer-Encoding ${req.headers['transfer-encoding']}`}`, { status: 400 }));
      return;
    }
    Promise.resolve()
      .then(() => handle(req, res, url))
      .catch((err) => {
        if (res.headersSent) { res.destroy(); return; }
        const e = err instanceof NinesError ? err : new NinesError('NINES_ERR_HTTP_BAD_REQUEST', `the request failed: ${err && err.message}`, { status: 500 });
        sendError(res, 500, e);
      });
  };
  /** @returns {boolean} whether the request logged in; if not, it has been answered (401 or 429) */
  const checkLogin = (req, res) => {
    const address = req.socket.remoteAddress || '';
    const locked = throttle.lockout(address);
    if (locked !== null) {
      req.resume();
      const retryAfter = Math.ceil(locked.waitMs / 1000);
      sendError(res, 429, new NinesError('NINES_ERR_HTTP_TOO_MANY_LOGINS', `${locked.why}: try again in ${retryAfter} s`, { status: 429, retryAfterS: retryAfter }),
        { 'retry-after': String(retryAfter) });
      return false;
    }
    const header = req.headers.authorization;
    if (loginMatches(header, login)) { throttle.succeeded(address); return true; }
    // a request without credentials is a browser's first, or a scraper without a login: no guess
    if (header !== undefined) throttle.failed(address);
    req.resume();
    sendError(res, 401, new NinesError('NINES_ERR_HTTP_UNAUTHORIZED', 'this server needs a username and password (HTTP Basic)', { status: 401 }),
      { 'www-authenticate': `Basic realm="${realm}", charset="UTF-8"` });
    return false;
  };
  // Node's parser refused the request (bad syntax, headers too large): answer it with our code
  // when the socket still can be written to, instead of Node's bare 400
  server.on('clientError', (err, socket) => {
    if (!socket.writable || err.code === 'ECONNRESET') { socket.destroy(); return; }
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const body = JSON.stringify({ error: { code: 'NINES_ERR_HTTP_BAD_REQUEST', message: `the request could not be read: ${err.code || err.message}`, details: { status } } }) + '\n';
    const reason = http.STATUS_CODES[status];
    // closed for good once the answer is out: end() alone would wait for the client's FIN,
    // and an idle client never sends one
    socket.end(`HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`, () => socket.destroy());
  });
  // Node closes connections past maxConnections at accept
  server.maxConnections = maxConnections;
  return new Promise((resolve, reject) => {
    server.once('error', (err) => {
      reject(err.code === 'EADDRINUSE'
        ? new NinesError('NINES_ERR_PORT_IN_USE', `cannot listen on ${host}:${port}: the port is taken`, { host, port })
        : err);
    });
    server.listen(port, host, () => {
      const addr = server.address();
      if (login === null && !isLoopbackHost(addr.address)) {
        // a name that counted as loopback ("localhost") resolved to something else
        server.close();
        reject(new NinesError('NINES_ERR_INVALID_ARG', `host: ${JSON.stringify(host)} bound ${addr.address}, beyond loopback: pass a login, or listen on 127.0.0.1`, { field: 'host', value: host, bound: addr.address }));
        return;
      }
      const shown = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
      resolve({
        server,
        host: addr.address,
        port: addr.port,
        url: `http://${shown}:${addr.port}`,
        close: () => new Promise((done) => {
          server.close(() => done());
          server.closeAllConnections();
        })
      });
    });
  });
}

/**
 * The 404 of an unknown path.
 * @param {import('node:http').ServerResponse} res
 * @param {URL} url
 * @param {string[]} paths what is served, for the message
 */
function notFound (res, url, paths) {
  sendError(res, 404, new NinesError('NINES_ERR_HTTP_NOT_FOUND', `nothing at ${JSON.stringify(url.pathname.slice(0, 200))}; served: ${paths.join(', ')}`, { status: 404, path: url.pathname.slice(0, 200) }));
}

module.exports = { startServer, sendError, notFound, loginMatches, sameSecret };
