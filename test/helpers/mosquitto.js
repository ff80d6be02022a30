'use strict';

const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');

/**
 * Starts a real Mosquitto for tests, on a free loopback port, with its own temporary config
 * (anonymous access, no persistence). The binary is looked up in $MOSQUITTO_BIN, then PATH, then
 * /usr/sbin and /usr/local/sbin; if none is found the error says how to install it.
 */

const READY_TIMEOUT_MS = 5000;

/**
 * Finds the mosquitto binary. $MOSQUITTO_BIN, when set, is the only candidate (a wrong explicit
 * setting should fail loudly, not fall back to another binary).
 * @param {object} [opts]
 * @param {Record<string, string|undefined>} [opts.env=process.env]
 * @param {string[]} [opts.fallbacks] directories tried after PATH
 * @returns {string} path of the mosquitto binary
 * @throws {Error} naming where it looked and how to install it
 */
function findMosquitto ({ env = process.env, fallbacks = ['/usr/sbin', '/usr/local/sbin', '/opt/homebrew/sbin'] } = {}) {
  const executable = (file) => {
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return fs.statSync(file).isFile();
    } catch {
      return false;
    }
  };
  if (env.MOSQUITTO_BIN) {
    if (executable(env.MOSQUITTO_BIN)) return env.MOSQUITTO_BIN;
    throw new Error(`MOSQUITTO_BIN=${env.MOSQUITTO_BIN} is not an executable file`);
  }
  const dirs = (env.PATH || '').split(path.delimiter).filter(Boolean).concat(fallbacks);
  for (const dir of dirs) {
    const candidate = path.join(dir, 'mosquitto');
    if (executable(candidate)) return candidate;
  }
  throw new Error(`mosquitto binary not found (looked in PATH and ${fallbacks.join(', ')}); ` +
    'install it (Debian/Ubuntu: apt-get install mosquitto; macOS: brew install mosquitto) or set MOSQUITTO_BIN');
}

/**
 * A free TCP port on 127.0.0.1: listen on 0, read the port, close.
 * @returns {Promise<number>}
 */
function freePort () {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {net.AddressInfo} */ (srv.address());
      srv.close(() => resolve(port));
    });
  });
}

/** Resolves once a TCP connect to the port succeeds. */
function waitForPort (port, deadline, exited) {
  return new Promise((resolve, reject) => {
    const attempt = () => {
      if (exited()) return reject(new Error('exited'));
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => { s.destroy(); resolve(); });
      s.once('error', () => {
        s.destroy();
        if (Date.now() > deadline) reject(new Error('timeout'));
        else setTimeout(attempt, 20);
      });
    };
    attempt();
  });
}

/**
 * @typedef {object} Mosquitto
 * @property {string} url mqtt://127.0.0.1:<port>
 * @property {number} port
 * @property {() => Promise<void>} stop SIGTERM, wait for exit, remove the temp dir
 * @property {() => Promise<void>} kill SIGKILL (a crash), wait for exit, remove the temp dir
 * @property {() => void} freeze SIGSTOP: the kernel still accepts and acknowledges TCP, nobody reads
 * @property {() => void} thaw SIGCONT
 */

/**
 * Starts Mosquitto and waits until it accepts connections.
 * @param {object} [opts]
 * @param {number} [opts.port] a port to reuse (e.g. to restart on the same one); default a free one
 * @returns {Promise<Mosquitto>}
 */
async function startMosquitto ({ port } = {}) {
  const bin = findMosquitto();
  const usePort = port || await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-mosquitto-'));
  const conf = path.join(dir, 'mosquitto.conf');
  const lines = [
    `listener ${usePort} 127.0.0.1`,
    'allow_anonymous true',
    'persistence false',
    'log_dest stderr',
    'log_type error',
    'log_type warning'
  ];
  // Run as root (CI containers), Mosquitto would switch to the "mosquitto" user; stay as we are
  if (process.getuid && process.getuid() === 0) lines.push('user root');
  fs.writeFileSync(conf, lines.join('\n') + '\n');

  const child = spawn(bin, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let exited = false;
  child.stderr.on('data', (d) => { stderr += d; });
  const exit = new Promise((resolve) => {
    child.once('exit', () => { exited = true; resolve(); });
    // spawn failures (e.g. EACCES) come as 'error' without 'exit'
    child.once('error', (err) => { stderr += err.message; exited = true; resolve(); });
  });

  const cleanup = () => fs.rmSync(dir, { recursive: true, force: true });
  let frozen = false;
  const end = async (signal) => {
    // a stopped process takes no SIGTERM until it runs again
    if (frozen && !exited) { child.kill('SIGCONT'); frozen = false; }
    if (!exited) child.kill(signal);
    await exit;
    cleanup();
  };

  try {
    await waitForPort(usePort, Date.now() + READY_TIMEOUT_MS, () => exited);
  } catch (err) {
    await end('SIGKILL');
    throw new Error(`mosquitto did not start on 127.0.0.1:${usePort} (${err.message}): ${stderr.trim() || 'no output'}`, { cause: err });
  }
  return {
    url: `mqtt://127.0.0.1:${usePort}`,
    port: usePort,
    stop: () => end('SIGTERM'),
    kill: () => end('SIGKILL'),
    freeze: () => { if (!exited) { child.kill('SIGSTOP'); frozen = true; } },
    thaw: () => { if (frozen && !exited) child.kill('SIGCONT'); frozen = false; }
  };
}

module.exports = { startMosquitto, findMosquitto, freePort };
