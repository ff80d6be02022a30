'use strict';

const assert = require('node:assert/strict');
const { once } = require('node:events');
const { AsciiClient } = require('../../gateway/drivers/ascii/client');
const { createAsciiSimulator } = require('../../gateway/simulators/ascii');
const { rejectsWith } = require('./helpers');

// reference/ascii-protocol-notes.md §3: the vectors run through OUR client against OUR simulator.
// "—" (silence) is a NINES_ERR_REPLY_TIMEOUT after 300 ms (the notes' minimum).
const SILENCE_MS = 300;

const S0_VECTORS = [
  ['$01M', '!01ED-588'], ['@01', '>00FF'], ['$016', '!00FF00'], ['$012', '!01400600'],
  ['#0100FF', '>'], ['@01', '>FFFF'], ['#010000', '>'], ['@01', '>00FF'],
  ['#01A001', '>'], ['@01', '>01FF'], ['#01A101', '>'], ['@01', '>03FF'],
  ['#011000', '>'], ['@01', '>02FF'], ['#01A100', '>'], ['@01', '>00FF'],
  ['@01A5', '>'], ['@01', '>A5FF'], ['$016', '!A5FF00'], ['#010A0F', '>'],
  ['@01', '>0FFF'], ['@0100', '>'], ['$01L1', '!000000'], ['$01L0', '!000000'],
  ['$01C', '!01'], ['#010', '!0100000'], ['$01C0', '!01'], ['~01OTANK1', '!01'],
  ['$01M', '!01TANK1'], ['~01OED-588', '!01'], ['~010', '!0100']
];

describe('ascii client against the ED-588 / ED-560 simulator', function () {
  let sim;
  let client;

  afterEach(async () => {
    if (client) await client.close();
    if (sim) await sim.close();
    client = null;
    sim = null;
  });

  async function start (simOpts, query = '', clientOpts = {}) {
    sim = await createAsciiSimulator({ port: 0, ...simOpts });
    client = new AsciiClient(`ascii://127.0.0.1:${sim.port}${query}`, { timeoutMs: 2000, backoff: { initialMs: 20, maxMs: 200 }, ...clientOpts });
    await client.connect();
  }

  it('answers every §3.1 vector from factory state, in order, on one connection', async () => {
    await start({ model: 'ED-588' });
    for (const [command, expected] of S0_VECTORS) {
      const r = await client.request(command);
      assert.equal(r.raw, expected, command);
    }
    assert.equal(client.stats.connects, 1);
    assert.equal(client.stats.lateReplies, 0);
  });

  it('gives the typed fields the vectors imply', async () => {
    await start({ model: 'ED-588' });
    assert.equal((await client.request('$01M')).name, 'ED-588');
    const cfg = await client.request('$012');
    assert.deepEqual([cfg.type, cfg.baudCode, cfg.flags, cfg.checksum], ['40', '06', 0, false]);
    await client.request('#01A001');
    const r = await client.request('@01');
    assert.equal(r.outputs[0], true);
    assert.equal(r.outputs[1], false);
    assert.deepEqual(r.inputs, Array(8).fill(true));
    assert.equal((await client.request('#010')).count, 0);
    assert.equal((await client.request('~010')).tripped, false);
  });

  it('handles the §3.2 error and edge cases: silence, recovery, broadcasts, ?01, reboot', async () => {
    await start({ model: 'ED-588' }, '', { timeoutMs: SILENCE_MS });
    // E1, E2
    await rejectsWith(client.request({ command: 'INVALIDCOMMAND', unchecked: true }), 'NINES_ERR_REPLY_TIMEOUT');
    assert.equal((await client.request('$01M')).name, 'ED-588');
    // E3, E4: not our address
    await rejectsWith(client.request('@02'), 'NINES_ERR_REPLY_TIMEOUT');
    await rejectsWith(client.request('$02M'), 'NINES_ERR_REPLY_TIMEOUT');
    // E5, E6: broadcasts resolve at once; nothing arrives for them later
    assert.equal((await client.request('~**')).noReply, true);
    assert.equal((await client.request('#**')).noReply, true);
    assert.equal((await client.request('@01')).raw, '>00FF');
    // E7
    const e7 = await rejectsWith(client.request('#018'), 'NINES_ERR_DEVICE_INVALID');
    assert.equal(e7.details.raw, '?01');
    assert.equal(client.stats.lateReplies, 0);
    // E8, last: no reply, the device drops the connection; the client reconnects
    const closed = once(client, 'close');
    assert.equal((await client.request('$01RS')).noReply, true);
    assert.deepEqual(await closed, [undefined]);
    assert.equal((await client.request('$01M', { timeoutMs: 5000 })).name, 'ED-588');
  });

  it('passes the §3.3 checksum vectors with checksum on at both ends', async () => {
    await start({ model: 'ED-588', checksum: true }, '?checksum=on');
    const c1 = await client.request('$012'); // sent as $012B7
    assert.equal(c1.raw, '!01400640');
    assert.equal(c1.checksum, true);
    assert.equal((await client.request('@01')).raw, '>00FF'); // C4
    assert.equal((await client.request('$01M')).name, 'ED-588'); // C5
    assert.equal((await client.request('#0100FF')).ack, true); // C6
  });

  it('gets silence for a missing or wrong checksum (§3.3 C2, C3)', async () => {
    await start({ model: 'ED-588', checksum: true }, '?checksum=off', { timeoutMs: SILENCE_MS });
    await rejectsWith(client.request('$012'), 'NINES_ERR_REPLY_TIMEOUT'); // C2
    await rejectsWith(client.request('$012B8'), 'NINES_ERR_REPLY_TIMEOUT'); // C3
    // the right checksum typed by hand is answered with a checksum, which a client in checksum-off
    // mode leaves in place ($012B7 is not a known shape, so the reply comes back as text)
    const r = await client.request('$012B7');
    assert.equal(r.raw, '!01400640B0');
  });

  it('drives the ED-560 analog vectors (§3.4)', async () => {
    await start({ model: 'ED-560' });
    assert.equal((await client.request('$01M')).name, 'ED-560');
    assert.equal((await client.request('#010+05.000')).ack, true);
    assert.equal((await client.request('$0160')).value, 5);
    assert.equal((await client.request('$0190')).range, '32');
    assert.equal((await client.request('~0140')).value, 0);
    assert.equal((await client.request('#012+05.130')).ack, true);
    assert.equal((await client.request('~0152')).ack, true);
    assert.equal((await client.request('~0142')).value, 5.13);
    await rejectsWith(client.request('#015+05.000'), 'NINES_ERR_DEVICE_INVALID');
    assert.equal((await client.request('#011N0F+01.000+02.000+03.000+04.000')).ack, true);
    assert.equal((await client.request('$0163')).value, 4);
  });
});
