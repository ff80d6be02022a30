'use strict';

/**
 * pymodbus as an independent peer: it encodes typed values with its own payload builder, in the
 * word and byte order asked for, and writes them to a Modbus TCP server (test/fixtures/pymodbus-write.py).
 * Debian's python3 runs it (python3-pymodbus; test/helpers/system-tools.js checks it is there).
 */

const { spawn } = require('node:child_process');
const path = require('node:path');
const { assertTools } = require('./system-tools');

const SCRIPT = path.join(__dirname, '..', 'fixtures', 'pymodbus-write.py');
const PYTHON = '/usr/bin/python3';

/**
 * @param {{port: number, unit?: number, writes: Array<{address: number, type: string, order: string, value: number}>}} job
 * @returns {Promise<number[][]>} the registers written, per write
 */
function runPymodbus (job) {
  assertTools(['pymodbus']);
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, [SCRIPT], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 15000);
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`pymodbus-write.py exited ${code}: ${err.trim()}`));
      else resolve(out.trim().split('\n').map((line) => JSON.parse(line)));
    });
    child.stdin.end(JSON.stringify(job));
  });
}

module.exports = { runPymodbus };
