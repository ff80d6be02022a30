'use strict';

/**
 * On a serial port, a late reply that comes within the quiet period while this process's thread pool
 * is busy is never taken for the next request's (issue 18). serialport reads a port in the libuv thread
 * pool once it polls readable; with the pool busy, that read waits behind the pool's other work, past the
 * end of the quiet period, and the next request would be written before the owed reply was read. Here the server (a process of its own, on a socat PTY) answers the
 * first read 170 ms late, inside the 100 ms timeout + 100 ms quiet period, and every thread of the pool
 * is kept busy from 120 ms until well after the period ends, so the reply waits in the kernel, polled
 * readable but unread, while the clock says the line is quiet.
 */

const assert = require('node:assert/strict');
const { readAfterTimeout } = require('../helpers/read-after-timeout');
const crypto = require('node:crypto');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { createClient } = require('../../gateway/drivers/modbus');
const { createPtyPair } = require('../helpers/pty');

/** libuv's pool: every thread is taken, so the port's read waits behind them */
const POOL_THREADS = Number(process.env.UV_THREADPOOL_SIZE) || 4;

/** @returns {Promise<number>} ms the pool was busy: POOL_THREADS key derivations of about `ms` each */
function occupyPool (ms) {
  const start = Date.now();
  // iterations for about `ms` on this machine, measured on the main thread first (a derivation is
  // CPU-bound): the fastest of three tries, since a try descheduled midway only reads slower, and a
  // slow reading made the derivations too short to hold the pool (89 ms for 160 asked, beside a
  // second copy of the suite)
  let perIteration = Infinity;
  for (let i = 0; i < 3; i++) {
    const t0 = process.hrtime.bigint();
    crypto.pbkdf2Sync('x', 'y', 2000, 32, 'sha256');
    perIteration = Math.min(perIteration, Number(process.hrtime.bigint() - t0) / 1e6 / 2000);
  }
  const iterations = Math.max(1000, Math.round(ms / perIteration));
  return Promise.all(Array.from({ length: POOL_THREADS }, () => new Promise((resolve, reject) => {
    crypto.pbkdf2('x', 'y', iterations, 32, 'sha256', (err) => (err ? reject(err) : resolve()));
  }))).then(() => Date.now() - start);
}

describe('modbus client (RTU on a serial port): a late reply read after the thread pool was busy', function () {
  this.timeout(20000);

  it('is the timed-out request\'s, not the next one\'s', async () => {
    const pty = await createPtyPair();
    const child = spawn(process.execPath, [path.join(__dirname, '..', 'fixtures', 'late-serial-server.js'), '170', pty.a], { stdio: ['pipe', 'pipe', 'inherit'] });
    let client = null;
    try {
      await new Promise((resolve, reject) => {
        child.stdout.once('data', resolve);
        child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
      });
      client = createClient(`modbus+rtu://${pty.b}?unitId=1&baudRate=115200`, { timeoutMs: 100 });
      await client.connect();
      const sentAt = Date.now();
      let busy = null;
      // from 120 ms, before the reply comes (170 ms), until past the quiet period's end (200 ms)
      const block = setTimeout(() => { busy = occupyPool(160); }, 120 - (Date.now() - sentAt));
      const second = await readAfterTimeout(client);
      clearTimeout(block);
      const busyMs = busy === null ? 0 : await busy;
      // the pool was held across the quiet period's end, or the case was not made
      assert.ok(120 + busyMs > 210, `the thread pool was busy only ${busyMs} ms from 120 ms`);
      assert.deepEqual(second, [1005], 'the second read got the reply to its own address');
      assert.equal(client.stats.lateReplies, 1);
    } finally {
      if (client !== null) await client.close();
      child.stdin.end();
      await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve)));
      await pty.close();
    }
  });
});
