'use strict';

/**
 * Interop with mbpoll (Debian's package; a libmodbus master nobody here wrote) against the TCP simulator and,
 * through a socat PTY pair, the RTU simulator. mbpoll's reference numbers are 1-based unless -0 is given.
 */

const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const { createModbusTcpSimulator, createModbusRtuSimulator } = require('../../gateway/simulators/modbus');
const { createPtyPair } = require('../helpers/pty');
const { assertTools } = require('../helpers/system-tools');

/** Kill mbpoll if it has not finished by then (its own -o timeout should end it well before), ms */
const MBPOLL_KILL_MS = 5000;

/**
 * Runs mbpoll once and parses its "[ref]: \tvalue" lines.
 * @param {string[]} args
 * @returns {Promise<{code: number, stdout: string, stderr: string, values: Map<number, number>}>}
 */
function mbpoll (args) {
  return new Promise((resolve, reject) => {
    execFile('mbpoll', args, { timeout: MBPOLL_KILL_MS, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
      if (err && err.killed) return reject(new Error(`mbpoll ${args.join(' ')} hung and was killed; ${stderr}`));
      if (err && typeof err.code !== 'number') return reject(err);
      const values = new Map();
      for (const m of stdout.matchAll(/^\[(\d+)\]:\s+(-?\d+)\s*$/gm)) values.set(Number(m[1]), Number(m[2]));
      resolve({ code: err ? err.code : 0, stdout, stderr, values });
    });
  });
}

describe('mbpoll against the Modbus simulators', function () {
  this.timeout(15000);
  // run alone, without the root hook of .mocharc.js, this still fails at once naming what is missing
  before(() => assertTools(['mbpoll', 'socat']));

  describe('TCP', () => {
    let sim;
    let tcp;
    beforeEach(async () => {
      sim = await createModbusTcpSimulator({ port: 0, modelOptions: { preset: 'pattern' } });
      // -1: poll once; -o: reply timeout in seconds, so a silent device never hangs the test
      tcp = (...args) => mbpoll(['-m', 'tcp', '-a', '1', '-o', '1', '-p', String(sim.port), ...args]);
    });
    afterEach(async () => {
      if (sim) await sim.close();
      sim = null;
    });

    it('reads holding registers with 1-based references (-r 1 is address 0)', async () => {
      const r = await tcp('-r', '1', '-c', '10', '-t', '4', '-1', '127.0.0.1');
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual([...r.values], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((ref) => [ref, ref - 1]));
    });

    it('reads holding registers with 0-based references (-0 -r 1 is address 1)', async () => {
      const r = await tcp('-0', '-r', '1', '-c', '3', '-t', '4', '-1', '127.0.0.1');
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual([...r.values.values()], [1, 2, 3]);
    });

    it('writes registers (FC16), which read back through the model', async () => {
      const r = await tcp('-t', '4', '-r', '1', '127.0.0.1', '10', '20', '30');
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /Written 3 references/);
      assert.deepEqual(sim.model.getRegisters('holdingRegisters', 0, 4), [10, 20, 30, 3]);
    });

    it('writes a single register (FC6)', async () => {
      const r = await tcp('-t', '4', '-r', '101', '127.0.0.1', '4242');
      assert.equal(r.code, 0, r.stderr);
      assert.equal(sim.model.getRegister('holdingRegisters', 100), 4242);
    });

    it('reads coils (-t 0) and writes them (FC15, FC5)', async () => {
      const r = await tcp('-r', '1', '-c', '4', '-t', '0', '-1', '127.0.0.1');
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual([...r.values.values()], [0, 1, 0, 1]);
      assert.equal((await tcp('-t', '0', '-r', '11', '127.0.0.1', '1', '1', '0')).code, 0);
      assert.deepEqual(sim.model.getBits('coils', 10, 3), [true, true, false]);
      assert.equal((await tcp('-t', '0', '-r', '11', '127.0.0.1', '0')).code, 0);
      assert.equal(sim.model.getBit('coils', 10), false);
    });

    it('reads discrete inputs (-t 1)', async () => {
      const r = await tcp('-r', '1', '-c', '6', '-t', '1', '-1', '127.0.0.1');
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual([...r.values.values()], [1, 0, 0, 1, 0, 0]);
    });

    it('reads input registers (-t 3)', async () => {
      const r = await tcp('-r', '1', '-c', '3', '-t', '3', '-1', '127.0.0.1');
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual([...r.values.values()], [1000, 1001, 1002]);
    });

    it('reports the simulator\'s exception 2 for a read past the bank', async () => {
      const r = await tcp('-r', '10000', '-c', '2', '-t', '4', '-1', '127.0.0.1');
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /Illegal data address/);
    });
  });

  describe('RTU through a socat PTY pair', () => {
    let pty;
    let sim;
    let rtu;
    beforeEach(async () => {
      pty = await createPtyPair();
      sim = await createModbusRtuSimulator({ path: pty.a, baudRate: 9600, parity: 'none', modelOptions: { preset: 'pattern' } });
      rtu = (...args) => mbpoll(['-m', 'rtu', '-b', '9600', '-P', 'none', '-a', '1', '-o', '1', ...args]);
    });
    afterEach(async () => {
      if (sim) await sim.close();
      if (pty) await pty.close();
      sim = pty = null;
    });

    it('reads holding registers', async () => {
      const r = await rtu('-r', '1', '-c', '10', '-t', '4', '-1', pty.b);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual([...r.values.values()], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    });

    it('writes registers, then reads them back with mbpoll and through the model', async () => {
      const w = await rtu('-t', '4', '-r', '1', pty.b, '10', '20', '30');
      assert.equal(w.code, 0, w.stderr);
      assert.deepEqual(sim.model.getRegisters('holdingRegisters', 0, 3), [10, 20, 30]);
      const r = await rtu('-r', '1', '-c', '3', '-t', '4', '-1', pty.b);
      assert.deepEqual([...r.values.values()], [10, 20, 30]);
    });

    it('reads coils, discrete inputs and input registers', async () => {
      assert.deepEqual([...(await rtu('-r', '1', '-c', '4', '-t', '0', '-1', pty.b)).values.values()], [0, 1, 0, 1]);
      assert.deepEqual([...(await rtu('-r', '1', '-c', '4', '-t', '1', '-1', pty.b)).values.values()], [1, 0, 0, 1]);
      assert.deepEqual([...(await rtu('-r', '3', '-c', '2', '-t', '3', '-1', pty.b)).values.values()], [1002, 1003]);
    });

    it('times out (no reply) for a slave address the simulator does not serve', async () => {
      const r = await mbpoll(['-m', 'rtu', '-b', '9600', '-P', 'none', '-a', '5', '-o', '0.2', '-r', '1', '-t', '4', '-1', pty.b]);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /timed out/i);
      assert.equal(sim.stats.ignored, 1);
    });
  });
});
