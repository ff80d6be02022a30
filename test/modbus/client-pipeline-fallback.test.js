'use strict';

// A client set to pipeline meets the simulator in its one-at-a-time mode (it drops what arrives while
// it is busy, as many real devices do): it must notice, fall back to one request in flight with a
// warning, and keep polling. Against a simulator that does pipeline, it must not. In clear and over TLS
// (Modbus/TCP Security), where the same frames travel inside TLS records.

const assert = require('node:assert/strict');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { createClient } = require('../../gateway/drivers/modbus');
const { eventOf } = require('./helpers');
const { tlsPair } = require('../helpers/tls-certs');

const READ = Object.freeze({ fc: 3, address: 0, quantity: 2 });
// long enough that a loaded machine's stall is no timeout: the fallback comes two timeouts after the first overlap
const TIMEOUT_MS = 1000;

/** The simulator's and the client's options per transport */
const TRANSPORTS = [
  { name: 'TCP', sim: () => ({}), client: () => ({}) },
  { name: 'TLS', sim: () => ({ tls: tlsPair().server }), client: () => ({ tls: tlsPair().client }) }
];

for (const t of TRANSPORTS) {
  describe(`modbus client (${t.name}): pipelining fallback`, function () {
    this.timeout(20000);
    let sim;
    let client;
    afterEach(async function () {
      if (client) await client.close();
      if (sim) await sim.close();
      sim = client = undefined;
    });

    /** Closed-loop lanes until stop(); counts outcomes (timeouts of requests written apart from queued ones). */
    function lanes (n) {
      const counts = { ok: 0, sentTimeouts: 0, queuedTimeouts: 0, other: [], most: 0 };
      let stopped = false;
      const lane = async () => {
        while (!stopped) {
          try {
            const p = client.request(READ);
            counts.most = Math.max(counts.most, client.inFlight);
            await p;
            counts.ok++;
          } catch (err) {
            if (err.code !== 'NINES_ERR_REPLY_TIMEOUT') counts.other.push(err.code);
            else if (err.details.queued) counts.queuedTimeouts++;
            else counts.sentTimeouts++;
          }
        }
      };
      const all = Array.from({ length: n }, lane);
      // every lane has at most one request outstanding, settled within its timeout: stop() is bounded
      return { counts, stop: () => { stopped = true; return Promise.all(all); } };
    }

    it('falls back to one in flight with NINES_ERR_PIPELINE_UNSUPPORTED against a one-at-a-time device, then polls on without timeouts', async function () {
      // a 2 ms service time: every request written while another is served arrives while the device is busy
      sim = await createModbusTcpSimulator({ port: 0, oneAtATime: true, faults: 'latency=2ms', ...t.sim() });
      client = createClient(sim.url, { maxInflight: 8, timeoutMs: TIMEOUT_MS, ...t.client() });
      await client.connect();
      const warned = eventOf(client, 'warning', 10000);
      const first = lanes(8);
      const [warning] = await warned;
      await first.stop();
      assert.equal(warning.code, 'NINES_ERR_PIPELINE_UNSUPPORTED');
      assert.equal(warning.details.maxInflight, 8);
      assert.equal(warning.details.effective, 1);
      assert.ok(warning.details.skipped >= 3);
      assert.ok(client.stats.pipelineSkipped >= warning.details.skipped, 'stats show the skipped requests the warning names');
      assert.match(warning.message, /does not serve pipelined requests/);
      assert.equal(client.effectiveInflight, 1);
      assert.equal(client.maxInflight, 8);
      assert.equal(first.counts.most, 8, 'it did pipeline before');
      // every request the device dropped timed out on the wire (a request it answered late would too)
      assert.ok(sim.stats.busyDropped >= 3);
      assert.ok(sim.stats.busyDropped <= first.counts.sentTimeouts, JSON.stringify({ sim: sim.stats, counts: first.counts }));
      // polling goes on at one in flight: the same eight lanes now lose nothing
      const dropped = sim.stats.busyDropped;
      const second = lanes(8);
      while (second.counts.ok < 200) await new Promise((resolve) => setTimeout(resolve, 5));
      await second.stop();
      assert.equal(second.counts.sentTimeouts + second.counts.queuedTimeouts, 0);
      assert.deepEqual(second.counts.other, []);
      assert.equal(second.counts.most, 1);
      assert.equal(sim.stats.busyDropped, dropped, 'the device dropped nothing more');
    });

    it('keeps pipelining against a device that serves pipelined requests, also when each takes a millisecond', async function () {
      sim = await createModbusTcpSimulator({ port: 0, faults: 'latency=1ms', ...t.sim() });
      client = createClient(sim.url, { maxInflight: 8, timeoutMs: TIMEOUT_MS, ...t.client() });
      await client.connect();
      let warnings = 0;
      client.on('warning', () => warnings++);
      const run = lanes(8);
      while (run.counts.ok < 300) await new Promise((resolve) => setTimeout(resolve, 5));
      await run.stop();
      assert.equal(run.counts.most, 8);
      assert.equal(warnings, 0);
      assert.equal(client.effectiveInflight, 8);
      assert.equal(client.stats.pipelineSkipped, 0);
      assert.equal(run.counts.sentTimeouts + run.counts.queuedTimeouts, 0);
      assert.equal(sim.stats.replies, sim.stats.requests);
    });
  });
}
