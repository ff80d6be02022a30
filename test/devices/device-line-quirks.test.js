'use strict';

/**
 * A device whose spec carries the line quirks (interFrameDelayMs, delayAfterConnectMs) hands them to its
 * clients: two users polling a serial server's line (the RTU-over-TCP simulator in its quirk modes, which
 * drops requests that come too soon) fail without them and are all served with them; its health says
 * 'connecting' until the delay after connect has passed.
 */

const assert = require('node:assert/strict');
const { createModbusRtuTcpSimulator } = require('../../gateway/simulators/modbus');
const { READ, healthLog, deviceFixture } = require('./helpers');

/** Two users each polling `n` reads one after the other, as two jobs on one device do. */
async function twoUsers (device, n) {
  const tally = { ok: 0, timeouts: 0 };
  await Promise.all(['job-a', 'job-b'].map(async (name) => {
    const user = device.user(name);
    for (let i = 0; i < n; i++) {
      try {
        await user.request(READ);
        tally.ok++;
      } catch (err) {
        if (err.code === 'NINES_ERR_REPLY_TIMEOUT') tally.timeouts++;
        else throw err;
      }
    }
  }));
  return tally;
}

describe('Device: line quirks from its spec', function () {
  this.timeout(20000);
  const t = deviceFixture();

  it('without them, polls right after the connect and right behind a reply time out', async () => {
    const { sim, device } = await t.open(await createModbusRtuTcpSimulator({ port: 0, needsDelayAfterConnectMs: 100, needsInterFrameDelayMs: 30 }), { name: 'line', timeoutMs: 150 });
    const tally = await twoUsers(device, 4);
    assert.ok(tally.timeouts >= 2, JSON.stringify(tally));
    assert.ok(sim.stats.tooSoonAfterConnect >= 1);
    assert.ok(sim.stats.tooSoonAfterReply >= 1);
  });

  it('with them, every poll of both users is answered, and the device is up only once the delay after connect has passed', async () => {
    const { sim, device } = await t.open(await createModbusRtuTcpSimulator({ port: 0, needsDelayAfterConnectMs: 100, needsInterFrameDelayMs: 30 }),
      { name: 'line', timeoutMs: 1000, interFrameDelayMs: '50ms', delayAfterConnectMs: 200 }, { open: false });
    const log = healthLog(device);
    const opened = device.open();
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.equal(sim.stats.connections, 1, 'the socket is open');
    assert.equal(device.health.state, 'connecting', 'but not usable yet');
    await opened;
    assert.equal(device.health.state, 'up');
    const tally = await twoUsers(device, 4);
    assert.deepEqual(tally, { ok: 8, timeouts: 0 });
    assert.deepEqual([sim.stats.tooSoonAfterConnect, sim.stats.tooSoonAfterReply], [0, 0]);
    assert.deepEqual(log.map((h) => h.state), ['up']);
  });
});
