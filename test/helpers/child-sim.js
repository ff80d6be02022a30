'use strict';

const { spawn } = require('node:child_process');
const { NINES_BIN } = require('./nines-cli');

/**
 * Runs `nines sim <kind> --port 0 …` in a child process, so blocking this process's event loop
 * cannot stall the device. Resolves once it printed its URL.
 * @param {string} kind ascii | modbus | rtutcp | rtu (rtu: give --path)
 * @param {string[]} [args]
 * @param {{env?: object}} [opts] env: the child's environment (default: this process's)
 * @returns {Promise<{url: string, stop: () => Promise<void>}>}
 */
function startChildSim (kind, args = [], { env = process.env } = {}) {
  // a serial simulator opens the path given, and listens on no port
  const port = kind === 'rtu' ? [] : ['--port', '0'];
  const child = spawn(process.execPath, [NINES_BIN, 'sim', kind, ...port, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  let err = '';
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`nines sim did not start: ${err}`)); }, 10000);
    child.stderr.on('data', (d) => { err += d; });
    child.stdout.on('data', (d) => {
      out += d;
      const m = /((?:ascii|modbus\+tcp|modbus\+rtutcp|modbus\+rtu):\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({
          url: m[1],
          stop: async () => { child.kill('SIGTERM'); await exited; }
        });
      }
    });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`nines sim exited with ${code}: ${err}`)); });
  });
}

module.exports = { startChildSim };
