'use strict';

/**
 * pymodbus as an independent peer: it encodes typed values with its own payload builder, in the
 * word and byte order asked for, and writes them to a Modbus TCP server (test/fixtures/pymodbus-write.py);
 * and it speaks Modbus RTU over TCP, as a client and as a server (test/fixtures/pymodbus-rtutcp.py),
 * and FC43/14 device identification and FC22 mask write over Modbus TCP (test/fixtures/pymodbus-fcs.py),
 * and Modbus/TCP Security with its AsyncModbusTlsClient and StartAsyncTlsServer (test/fixtures/pymodbus-tls.py).
 * Debian's python3 runs it (python3-pymodbus; test/helpers/system-tools.js checks it is there).
 */

const { spawn } = require('node:child_process');
const path = require('node:path');
const { assertTools } = require('./system-tools');

const SCRIPT = path.join(__dirname, '..', 'fixtures', 'pymodbus-write.py');
const RTUTCP_SCRIPT = path.join(__dirname, '..', 'fixtures', 'pymodbus-rtutcp.py');
/** How long a pymodbus child may run before it is killed, ms */
const CHILD_LIMIT_MS = 15000;
const PYTHON = '/usr/bin/python3';

const FCS_SCRIPT = path.join(__dirname, '..', 'fixtures', 'pymodbus-fcs.py');
const TLS_SCRIPT = path.join(__dirname, '..', 'fixtures', 'pymodbus-tls.py');

/**
 * Runs a pymodbus script that reads a job (JSON) on stdin and prints one JSON result per line.
 * @param {string[]} args the script and its arguments
 * @param {object} job
 * @returns {Promise<any[]>} the results, in order
 */
function runScript (args, job) {
  assertTools(['pymodbus']);
  const name = `${path.basename(args[0])}${args[1] ? ` ${args[1]}` : ''}`;
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_LIMIT_MS);
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`${name} exited ${code}: ${err.trim()}`));
      else resolve(out.trim().split('\n').map((line) => JSON.parse(line)));
    });
    child.stdin.end(JSON.stringify(job));
  });
}

/**
 * Starts a pymodbus server script that prints {"port": N} once it listens, and stops when its stdin closes.
 * @param {string[]} args the script and its arguments
 * @param {string} what the server, for messages
 * @returns {Promise<{port: number, close: () => Promise<void>}>}
 */
function startScript (args, what) {
  assertTools(['pymodbus']);
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const exited = new Promise((done) => child.once('exit', done));
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`${what} did not start: ${err.trim()}`)); }, CHILD_LIMIT_MS);
    child.stderr.on('data', (d) => { err += d; });
    child.on('error', reject);
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`${what} exited ${code}: ${err.trim()}`)); });
    child.stdout.on('data', (d) => {
      out += d;
      const m = /\{"port": (\d+)\}/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      resolve({
        port: Number(m[1]),
        close: async () => {
          // its stdin closing is its signal to stop; a kill bounds a server that does not
          const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
          child.stdin.end();
          await exited;
          clearTimeout(kill);
        }
      });
    });
  });
}

/**
 * @param {{port: number, unit?: number, writes: Array<{address: number, type?: string, order?: string, value?: unknown,
 *   parts?: Array<{type: string, value: unknown}>, repack?: boolean}>}} job (test/fixtures/pymodbus-write.py says what each holds)
 * @returns {Promise<number[][]>} the registers written, per write
 */
const runPymodbus = (job) => runScript([SCRIPT], job);

/**
 * pymodbus's RTU-over-TCP client (ModbusTcpClient with ModbusRtuFramer) runs a list of ops.
 * @param {{port: number, unit?: number, ops: Array<{read?: [number, number], write?: [number, number[]], coils?: [number, number], coil?: [number, boolean]}>}} job
 * @returns {Promise<any[]>} one result per op: the registers or bits read, or true for an acknowledged write
 */
const runPymodbusRtuTcpClient = (job) => runScript([RTUTCP_SCRIPT, 'client'], job);

/**
 * pymodbus's RTU-over-TCP server (ModbusTcpServer with ModbusRtuFramer) on 127.0.0.1 and a free port:
 * unit 1 holds 2i in holding register i, unit 2 holds 3i.
 * @returns {Promise<{port: number, close: () => Promise<void>}>}
 */
const startPymodbusRtuTcpServer = () => startScript([RTUTCP_SCRIPT, 'server'], 'pymodbus server');

/**
 * pymodbus's Modbus TCP client runs a list of FC43/14 and FC22 ops (test/fixtures/pymodbus-fcs.py).
 * @param {{port: number, unit?: number, ops: Array<{deviceId?: [number, number], mask?: [number, number, number], read?: [number, number]}>}} job
 * @returns {Promise<any[]>} one result per op
 */
const runPymodbusFcsClient = (job) => runScript([FCS_SCRIPT, 'client'], job);

/**
 * pymodbus's Modbus TCP server with a device identification (test/fixtures/pymodbus-fcs.py) on
 * 127.0.0.1 and a free port: unit 1, holding register i = i.
 * @returns {Promise<{port: number, close: () => Promise<void>}>}
 */
const startPymodbusFcsServer = () => startScript([FCS_SCRIPT, 'server'], 'pymodbus server');

/**
 * pymodbus's TLS client (AsyncModbusTlsClient, MBAP framing, verifying the server as "localhost") runs a list of ops
 * (test/fixtures/pymodbus-tls.py).
 * @param {{port: number, ca: string, cert: string, key: string, unit?: number, ops: Array<{read?: [number, number], write?: [number, number[]]}>}} job
 *   ca, cert, key: PEM file paths
 * @returns {Promise<any[]>} one result per op: the registers read, or true for an acknowledged write
 */
const runPymodbusTlsClient = (job) => runScript([TLS_SCRIPT, 'client'], job);

/**
 * pymodbus's TLS server (StartAsyncTlsServer, MBAP framing, a client certificate signed by ca required) on
 * 127.0.0.1 and a free port: unit 1, holding register i = 5i.
 * @param {{ca: string, cert: string, key: string}} files PEM file paths
 * @returns {Promise<{port: number, close: () => Promise<void>}>}
 */
const startPymodbusTlsServer = (files) => startScript([TLS_SCRIPT, 'server', JSON.stringify(files)], 'pymodbus TLS server');

module.exports = { runPymodbus, runPymodbusRtuTcpClient, startPymodbusRtuTcpServer, runPymodbusFcsClient, startPymodbusFcsServer, runPymodbusTlsClient, startPymodbusTlsServer };
