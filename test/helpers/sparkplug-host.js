'use strict';

const { spawn } = require('node:child_process');
const path = require('node:path');
const { assertTools } = require('./system-tools');

/**
 * An independent Sparkplug B host in another process: Python's paho-mqtt and Google's protobuf
 * runtime with the classes protoc generated from Eclipse Tahu's sparkplug_b.proto
 * (test/fixtures/sparkplug/sparkplug-host.py). It decodes every message of a group, checks the
 * edge node's birth, death and sequence rules, and sends commands it encodes itself. Debian's
 * python3 runs it (python3-protobuf, python3-paho-mqtt; test/helpers/system-tools.js checks them).
 */

const SCRIPT = path.join(__dirname, '..', 'fixtures', 'sparkplug', 'sparkplug-host.py');
const PYTHON = '/usr/bin/python3';

/**
 * @typedef {object} HostMessage one message as the host decoded it
 * @property {string} topic
 * @property {string} type NBIRTH, DDATA, …
 * @property {string|null} device
 * @property {number} qos
 * @property {boolean} retain
 * @property {number|null} seq
 * @property {Array<{name: string, alias: number|null, datatype: string, value: unknown, is_null: boolean, is_historical: boolean,
 *   timestamp: number|null, properties: object, template?: object}>} metrics 64-bit integer values as decimal text; a DATA
 *   metric's name resolved by the host from its alias
 * @property {string[]} violations the Sparkplug rules this message broke, as the host saw them
 * @property {string} [undecodable] why the payload did not decode
 */

/**
 * @param {{port: number, group: string, node: string, late?: boolean, host?: string}} opts late: the host joins a
 *   node already alive and ignores it until the birth it asks for, as Sparkplug hosts do; host: its
 *   primary host id, for the `state` command (a STATE line goes into `messages` when it is sent)
 * @returns {Promise<{messages: HostMessage[], send: (cmd: object) => Promise<void>,
 *   waitFor: (pred: (m: HostMessage) => boolean, ms?: number, from?: number) => Promise<HostMessage>, stop: () => Promise<void>}>}
 */
async function startSparkplugHost ({ port, group, node, late = false, host = null }) {
  assertTools(['sparkplug']);
  const child = spawn(PYTHON, [SCRIPT], { stdio: ['pipe', 'pipe', 'pipe'] });
  const messages = [];
  const sent = [];
  let err = '';
  let buf = '';
  let exited = null;
  const waiters = new Set();
  const wake = () => { for (const w of [...waiters]) w(); };
  child.stderr.on('data', (d) => { err += d; });
  child.stdout.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = JSON.parse(buf.slice(0, i));
      buf = buf.slice(i + 1);
      if (line.ready) messages.ready = true;
      else if (line.sent) sent.push(line);
      else messages.push(line);
    }
    wake();
  });
  const exit = new Promise((resolve) => child.on('close', (code) => { exited = code; wake(); resolve(); }));
  child.stdin.write(JSON.stringify({ port, group, node, late, host }) + '\n');

  /** Resolves when cond() is true; bounded by ms, and fails at once if the host exited */
  const until = (cond, ms, what) => new Promise((resolve, reject) => {
    const check = () => {
      const got = cond();
      if (got) { done(); resolve(got); } else if (exited !== null) { done(); reject(new Error(`sparkplug-host.py exited ${exited} while waiting for ${what}: ${err.trim()}`)); }
    };
    const timer = setTimeout(() => { done(); reject(new Error(`sparkplug-host.py: no ${what} within ${ms} ms (${messages.length} messages; stderr: ${err.trim() || 'none'})`)); }, ms);
    const done = () => { clearTimeout(timer); waiters.delete(check); };
    waiters.add(check);
    check();
  });
  await until(() => messages.ready, 10000, 'subscription');
  return {
    messages,
    async send (cmd) {
      const n = sent.length;
      child.stdin.write(JSON.stringify(cmd) + '\n');
      await until(() => sent.length > n, 5000, `the ${cmd.cmd} command sent`);
    },
    waitFor (pred, ms = 10000, from = 0) {
      return until(() => messages.slice(from).find(pred), ms, 'a matching message');
    },
    async stop () {
      if (exited === null) {
        child.stdin.end(JSON.stringify({ cmd: 'quit' }) + '\n');
        const t = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exit;
        clearTimeout(t);
      }
    }
  };
}

module.exports = { startSparkplugHost };
