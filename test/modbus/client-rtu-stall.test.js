'use strict';

/**
 * A late reply that comes within the quiet period, while this thread is busy, is never taken for the
 * next request's (issue 18). The serial server (a process of its own) answers the first read 180 ms
 * late, inside the 100 ms timeout + 100 ms quiet period; this thread is blocked from 150 ms to 240 ms,
 * so when it runs again the quiet period is over by the clock and the reply waits unread. A write
 * from that timer would go out before the reply is read, and the reply be taken for it.
 */

const assert = require('node:assert/strict');
const { readAfterTimeout } = require('../helpers/read-after-timeout');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { createClient } = require('../../gateway/drivers/modbus');

describe('modbus client (RTU over TCP): a late reply read after a stall of this thread', function () {
  this.timeout(20000);

  it('is the timed-out request\'s, not the next one\'s', async () => {
    const child = spawn(process.execPath, [path.join(__dirname, '..', 'fixtures', 'late-serial-server.js'), '180'], { stdio: ['pipe', 'pipe', 'inherit'] });
    const port = await new Promise((resolve, reject) => {
      child.stdout.once('data', (d) => resolve(Number(String(d).trim())));
      child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
    });
    const client = createClient(`modbus+rtutcp://127.0.0.1:${port}?unitId=1`, { timeoutMs: 100 });
    try {
      await client.connect();
      const sentAt = Date.now();
      // block this thread across the end of the quiet period (about 200 ms) and the late reply (180 ms),
      // in the check phase, as other work would: the next turn of the loop runs the timers first
      const block = setTimeout(() => setImmediate(() => { while (Date.now() - sentAt < 240) { /* busy */ } }), 150);
      const second = await readAfterTimeout(client);
      clearTimeout(block);
      assert.deepEqual(second, [1005], 'the second read got the reply to its own address');
      assert.equal(client.stats.lateReplies, 1);
    } finally {
      await client.close();
      child.stdin.end();
    }
  });
});
