'use strict';

/**
 * Starts a real Node-RED 4 (test/e2e/node-red-child.js) with a fresh user directory in which
 * node-red-contrib-nines is linked as an installed module, and talks to its Admin HTTP API and
 * its comms websocket (debug sidebar messages) on 127.0.0.1.
 */

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const WebSocket = require('ws');

const ROOT = path.resolve(__dirname, '..', '..');
const PKG = require(path.join(ROOT, 'package.json'));

/**
 * @param {object} [opts]
 * @param {string} [opts.userDir] a user directory the caller prepared (e.g. with `npm install`): used as
 *   it is, and left for the caller to remove; by default a temp one with the package linked in
 * @param {string} [opts.logLevel] Node-RED's console log level (default 'warn')
 * @param {Record<string, {password: string, permissions: string}>} [opts.users] turns on the editor's
 *   login with these users (node-red-child.js)
 * @returns {Promise<{port: number, url: string, userDir: string, pid: number, api: Function, stop: () => Promise<void>,
 *   stdout: () => string, stderr: () => string}>} stdout holds Node-RED's log; pid is the Node-RED process
 */
async function startNodeRed (opts = {}) {
  const ownDir = !opts.userDir;
  const userDir = opts.userDir || fs.mkdtempSync(path.join(os.tmpdir(), 'nines-e2e-'));
  if (ownDir) {
    fs.mkdirSync(path.join(userDir, 'node_modules'));
    fs.symlinkSync(ROOT, path.join(userDir, 'node_modules', PKG.name), 'dir');
    fs.writeFileSync(path.join(userDir, 'package.json'), JSON.stringify({ name: 'nines-e2e', private: true, dependencies: { [PKG.name]: '*' } }));
  }

  const child = spawn(process.execPath, [path.join(__dirname, 'node-red-child.js')], {
    cwd: userDir,
    env: { ...process.env, NINES_E2E_USERDIR: userDir, ...(opts.logLevel ? { NINES_E2E_LOG: opts.logLevel } : {}), ...(opts.users ? { NINES_E2E_USERS: JSON.stringify(opts.users) } : {}) },
    stdio: ['pipe', 'pipe', 'pipe']
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => { stdout += d; });
  child.stderr.on('data', (d) => { stderr += d; });
  const removeDir = () => { if (ownDir) fs.rmSync(userDir, { recursive: true, force: true }); };
  let port;
  try {
    port = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`Node-RED did not start in 30 s: ${stderr}`)), 30000);
      child.stdout.on('data', () => {
        const m = /NINES_E2E_READY (\d+)/.exec(stdout);
        if (m) { clearTimeout(timer); resolve(Number(m[1])); }
      });
      child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`Node-RED exited with ${code}: ${stderr}`)); });
    });
  } catch (err) {
    // leave nothing behind: a child that did not start is killed, its temp dir removed
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
    removeDir();
    throw err;
  }
  const url = `http://127.0.0.1:${port}`;

  /**
   * One Admin API call.
   * @param {string} method
   * @param {string} p path
   * @param {unknown} [body] JSON body
   * @param {object} [headers]
   * @returns {Promise<{status: number, body: any}>}
   */
  async function api (method, p, body, headers = {}) {
    const res = await fetch(url + p, {
      method,
      headers: { Accept: 'application/json', ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body)
    });
    const text = await res.text();
    let parsed = text;
    try { parsed = text ? JSON.parse(text) : undefined; } catch (err) { /* not JSON */ }
    return { status: res.status, body: parsed };
  }

  async function stop () {
    if (child.exitCode !== null || child.signalCode !== null) { removeDir(); return; }
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10000);
    await exited;
    clearTimeout(timer);
    removeDir();
  }

  return { port, url, userDir, pid: child.pid, api, stop, stdout: () => stdout, stderr: () => stderr };
}

/**
 * Subscribes to the debug sidebar through the editor's comms websocket.
 * @param {string} url http://127.0.0.1:port
 * @returns {Promise<{messages: object[], waitFor: (pred: (m: object) => boolean, what: string, limitMs?: number) => Promise<object>, close: () => void}>}
 *   each message: {id, name, msg (decoded when JSON), format, topic}
 */
function debugTap (url) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url.replace(/^http/, 'ws') + '/comms');
    const messages = [];
    const waiters = new Set();
    ws.on('open', () => {
      ws.send(JSON.stringify({ subscribe: 'debug' }));
      resolve({
        messages,
        waitFor (pred, what, limitMs = 10000) {
          const found = messages.find(pred);
          if (found) return Promise.resolve(found);
          return new Promise((res, rej) => {
            const w = { pred, res, timer: setTimeout(() => { waiters.delete(w); rej(new Error(`no debug message: ${what}; got ${JSON.stringify(messages.map((m) => m.name))}`)); }, limitMs) };
            waiters.add(w);
          });
        },
        close () { ws.close(); }
      });
    });
    ws.on('error', reject);
    ws.on('message', (data) => {
      let list;
      try { list = JSON.parse(String(data)); } catch (err) { return; }
      for (const item of Array.isArray(list) ? list : [list]) {
        if (item.topic !== 'debug' || !item.data) continue;
        const d = item.data;
        let msg = d.msg;
        if (typeof msg === 'string' && /^(Object|array|number|boolean)/.test(d.format || '')) {
          try { msg = JSON.parse(msg); } catch (err) { /* keep text */ }
        }
        const m = { id: d.id, name: d.name, msg, format: d.format, topic: d.topic };
        messages.push(m);
        for (const w of waiters) {
          if (w.pred(m)) { clearTimeout(w.timer); waiters.delete(w); w.res(m); }
        }
      }
    });
  });
}

/**
 * An example flow as Import › Examples gives it: its own tab, ready to deploy.
 * @param {Function} api
 * @param {string} name example file name without .json
 * @param {(node: object) => void} [rewrite] adjusts nodes (host, port…)
 * @returns {Promise<object[]>}
 */
async function exampleFlow (api, name, rewrite = () => {}) {
  const res = await api('GET', `/library/examples/flows/${PKG.name}/${name}`);
  if (res.status !== 200 || !Array.isArray(res.body)) throw new Error(`example ${name}: HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
  // each example brings its own labelled tab, its flow nodes on it; config nodes stay global
  const nodes = res.body.map((n) => {
    const copy = { ...n };
    rewrite(copy);
    return copy;
  });
  if (nodes.filter((n) => n.type === 'tab').length !== 1) throw new Error(`example ${name}: no tab of its own`);
  return nodes;
}

module.exports = { startNodeRed, debugTap, exampleFlow, PKG };
