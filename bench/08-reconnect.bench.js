'use strict';

/**
 * Question 8: what does opening a connection per request cost, against reusing one (the Chronicle
 * network article's contrast)? FC3 ×10 against the reference server, closed loop: the nines driver
 * and the C libmodbus client, each with one reused connection and with connect → request → close
 * per request (latency includes the connect and the close).
 */

const path = require('node:path');
const { options, Row, interleave, run } = require('./lib/question');
const { closedLoop } = require('./lib/closed-loop');
const { ninesClient } = require('./lib/modbus-clients');
const { startReferenceModbusServer } = require('./lib/servers');
const { cPath, cSkipReason, runCClient } = require('./lib/c-peers');

run(async () => {
  const o = options();
  const { createClient } = require(path.join(__dirname, '..', 'gateway', 'drivers'));
  const { validateOp } = require(path.join(__dirname, '..', 'gateway', 'drivers', 'modbus'));
  const op = validateOp({ fc: 3, address: 0, quantity: 10 });
  const server = await startReferenceModbusServer();
  const url = `modbus+tcp://127.0.0.1:${server.port}?unitId=1`;
  // every reconnect leaves a socket in TIME_WAIT: keep the count well below the ephemeral port range
  const reconnectSize = { ...o, count: o.quick ? 300 : 4000, warmup: o.quick ? 20 : 200 };
  const rows = {
    ninesReuse: new Row('nines-reuse', 'nines driver, one reused connection'),
    ninesEach: new Row('nines-reconnect', 'nines driver, connect per request'),
    cReuse: new Row('c-reuse', 'C libmodbus, one reused connection'),
    cEach: new Row('c-reconnect', 'C libmodbus, connect per request')
  };
  if (!cPath('modbus-client')) { rows.cReuse.skip(cSkipReason('modbus-client')); rows.cEach.skip(cSkipReason('modbus-client')); }
  const cmdlines = new Set([server.cmdline]);
  const cRun = (row, reconnect, size) => ({
    row,
    run: async () => {
      const r = await runCClient('modbus-client', { port: server.port, count: size.count, durationMs: size.durationMs, warmup: size.warmup, reconnect });
      cmdlines.add(r.cmdline.replace(/ \/tmp\/\S+/, ' <samples>'));
      row.addLatency({ hist: r.hist, count: r.json.count, errors: r.json.errors, reqPerSec: r.json.reqPerSec });
    }
  });
  await interleave(o.rounds, [
    {
      row: rows.ninesReuse,
      run: async () => {
        const c = await ninesClient(server.port);
        try { rows.ninesReuse.addLatency(await closedLoop(c.read, o)); } finally { await c.close(); }
      }
    },
    {
      row: rows.ninesEach,
      run: async () => {
        rows.ninesEach.addLatency(await closedLoop(async () => {
          const c = createClient(url, { timeoutMs: 1000, reconnect: false });
          c.on('error', () => {});
          try {
            await c.connect();
            return await c.request(op);
          } finally {
            await c.close();
          }
        }, reconnectSize));
      }
    },
    cRun(rows.cReuse, false, o),
    cRun(rows.cEach, true, reconnectSize)
  ]);
  await server.stop();
  return {
    question: 8,
    name: 'reconnect',
    title: 'Reconnect per request vs a reused connection (FC3 ×10, closed loop)',
    latency: true,
    server: server.name,
    sections: [{ title: `Against the ${server.name}`, kind: 'latency', rows: Object.values(rows) }],
    notes: [`Connect-per-request runs are capped at ${reconnectSize.count} requests per round (TIME_WAIT sockets).`],
    cmdlines: [...cmdlines]
  };
});
