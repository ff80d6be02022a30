'use strict';

// The probe measuring pipelined Modbus TCP: `inflight` gives each connection that many requests at
// once (lanes), the run says how many it asked for and how many the device took, and the table
// shows a fallback.

const assert = require('node:assert/strict');
const { runProbe } = require('../../gateway/measure/probe');
const { formatTable } = require('../../gateway/cli/probe');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { startRawServer, registersPdu, answer } = require('../modbus/helpers');

describe('probe: requests in flight per connection (inflight)', function () {
  this.timeout(20000);
  const cleanup = [];
  afterEach(async () => {
    while (cleanup.length) await cleanup.pop()();
  });

  it('keeps inflight requests outstanding on one connection per run, never more', async () => {
    let outstanding = 0;
    let most = 0;
    const held = [];
    const srv = await startRawServer((req) => {
      outstanding++;
      most = Math.max(most, outstanding);
      held.push(req);
      // answer in batches once every lane has a request out: proves they were all on the wire at once
      if (held.length < 8) return;
      for (const r of held.splice(0)) { outstanding--; r.socket.write(answer(r, registersPdu(r.pdu))); }
    });
    cleanup.push(() => srv.close());
    const { runs } = await runProbe({ target: `modbus+tcp://127.0.0.1:${srv.port}?unitId=1`, read: '3:0:10', inflight: [8], count: 800 }).promise;
    assert.equal(runs.length, 1);
    const r = runs[0];
    assert.equal(r.inflight, 8);
    assert.equal(r.inflightEffective, 8);
    assert.equal(r.ok, 800);
    assert.equal(most, 8);
    assert.equal(srv.requests.length, 800);
    assert.match(r.name, /-1x-8inflight$/);
  });

  it('reports the fallback when the device takes one request at a time', async () => {
    const sim = await createModbusTcpSimulator({ port: 0, oneAtATime: true, faults: 'latency=2ms' });
    cleanup.push(() => sim.close());
    // the fallback comes about two timeouts after the first overlapping write
    const { runs } = await runProbe({ target: sim.url, read: '3:0:2', connections: [1], inflight: [1, 4], durationMs: 2000, timeoutMs: 250 }).promise;
    assert.deepEqual(runs.map((r) => [r.inflight, r.inflightEffective]), [[1, 1], [4, 1]]);
    assert.ok(runs[1].errorsByCode.NINES_ERR_REPLY_TIMEOUT.count >= 3);
    const table = formatTable(runs);
    assert.match(table, /\binflight\b/);
    assert.match(table, /\s4→1\s/);
    assert.match(table, /1x ×4: the device did not serve pipelined requests \(NINES_ERR_PIPELINE_UNSUPPORTED\); the client fell back to 1 in flight/);
  });

  it('refuses inflight above 1 on anything but modbus+tcp, and outside 1-64', () => {
    assert.throws(() => runProbe({ target: 'ascii://127.0.0.1:9500', command: '@01', inflight: [2], count: 1 }), (err) => err.code === 'NINES_ERR_INVALID_ARG' && err.details.field === 'inflight');
    assert.throws(() => runProbe({ target: 'modbus+tcp://127.0.0.1:5020', read: '3:0:1', inflight: [65], count: 1 }), (err) => err.details.field === 'inflight');
    assert.throws(() => runProbe({ target: 'modbus+tcp://127.0.0.1:5020', read: '3:0:1', inflight: [2], reconnectEach: true, count: 1 }), (err) => err.details.field === 'inflight');
  });

  it('leaves the table as it was when nothing is pipelined', () => {
    const run = { connections: 1, inflight: 1, inflightEffective: 1, ok: 1, errors: 0, timeouts: 0, ratePerSec: 1, summary: {}, policy: 'closed', model: 'modbus', label: 'fc3-0+1', errorsByCode: {} };
    assert.doesNotMatch(formatTable([run]), /inflight/);
  });
});
