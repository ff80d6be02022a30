'use strict';

/**
 * A small scripted TCP server for AsciiClient tests, in the spirit of Brainboxes.IO's MockStream
 * (one answer per command): `answer(line, conn)` decides what happens to each CR-terminated line.
 *
 * Actions (returned by answer, or nested):
 *   null / undefined              stay silent
 *   'text'                        send text + CR
 *   { reply: 'text' }             same
 *   { raw: string | Buffer }      send exactly these bytes (no CR added)
 *   { chunks: [..], gapMs }       send raw chunks one after another, gapMs apart
 *   { delayMs, then: action }     do `then` after delayMs
 *   { fn: () => action }          compute the action when it is due (e.g. after a delay)
 *   { end: true }                 half-close (FIN); { destroy: true }: drop the connection
 *   [action, action, …]           each in order, at once
 * Every timer and socket is tracked so close() leaves nothing behind.
 */

const net = require('node:net');

class ScriptedServer {
  /**
   * @param {(line: string, conn: {id: number, socket: net.Socket, lines: string[]}) => any} answer
   */
  constructor (answer) {
    this.answer = answer;
    /** every line received, in order, as {conn, line} */
    this.received = [];
    this.connections = 0;
    this.port = 0;
    this._sockets = new Set();
    this._timers = new Set();
    this._server = null;
  }

  /** @param {number} [port=0] @returns {Promise<number>} the port */
  listen (port = this.port) {
    return new Promise((resolve, reject) => {
      const server = net.createServer((socket) => this._onConnection(socket));
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        this._server = server;
        this.port = server.address().port;
        resolve(this.port);
      });
    });
  }

  /** @returns {string[]} lines received, any connection */
  get lines () { return this.received.map((r) => r.line); }

  _onConnection (socket) {
    const conn = { id: ++this.connections, socket, lines: [] };
    this._sockets.add(socket);
    socket.on('close', () => this._sockets.delete(socket));
    socket.on('error', () => {});
    let buf = '';
    socket.on('data', (chunk) => {
      buf += chunk.toString('latin1');
      let i;
      while ((i = buf.indexOf('\r')) !== -1) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        conn.lines.push(line);
        this.received.push({ conn: conn.id, line });
        this._do(socket, this.answer(line, conn));
      }
    });
  }

  _later (ms, fn) {
    const t = setTimeout(() => { this._timers.delete(t); fn(); }, ms);
    this._timers.add(t);
  }

  _write (socket, data) {
    if (!socket.destroyed && socket.writable) socket.write(data);
  }

  _do (socket, action) {
    if (action === null || action === undefined) return;
    if (typeof action === 'string') return this._write(socket, action + '\r');
    if (Array.isArray(action)) { for (const a of action) this._do(socket, a); return; }
    if (action.delayMs) return this._later(action.delayMs, () => this._do(socket, action.then));
    if (action.fn) return this._do(socket, action.fn());
    if (action.reply !== undefined) this._write(socket, action.reply + '\r');
    if (action.raw !== undefined) this._write(socket, action.raw);
    if (action.chunks) {
      const [first, ...rest] = action.chunks;
      this._write(socket, first);
      if (rest.length) this._later(action.gapMs || 1, () => this._do(socket, { chunks: rest, gapMs: action.gapMs }));
    }
    if (action.end) socket.end();
    if (action.destroy) socket.destroy();
  }

  /** Stops listening and drops every connection ("device off"). @returns {Promise<void>} */
  kill () {
    for (const t of this._timers) clearTimeout(t);
    this._timers.clear();
    for (const s of this._sockets) s.destroy();
    const server = this._server;
    this._server = null;
    if (!server) return Promise.resolve();
    return new Promise((resolve) => server.close(() => resolve()));
  }

  /** @returns {Promise<void>} */
  close () { return this.kill(); }
}

/**
 * @param {(line: string, conn: object) => any} answer
 * @returns {Promise<ScriptedServer>} listening on 127.0.0.1, port 0
 */
async function startScriptedServer (answer) {
  const s = new ScriptedServer(answer);
  await s.listen(0);
  return s;
}

/**
 * A port on 127.0.0.1 that nobody listens on (connects are refused).
 * @returns {Promise<number>}
 */
function freePort () {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** A factory-state ED-588 answer table (§3.1 subset), handy as a default script. */
const ED588 = {
  $01M: '!01ED-588',
  '@01': '>00FF',
  $016: '!00FF00',
  $012: '!01400600',
  '#010': '!0100000'
};

module.exports = { ScriptedServer, startScriptedServer, freePort, ED588 };
