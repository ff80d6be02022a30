'use strict';

/**
 * Question 2, the floor: what does one round trip with Modbus FC3×10 sizes (12-byte request, 29-byte
 * reply) cost on this machine's loopback, with nothing parsed? A C client and server, TCP_NODELAY,
 * one connection, closed loop. Every other latency row is also reported as a ratio to this one.
 */

const { options, Row, interleave, run } = require('./lib/question');
const { startCServer, runCClient, cSkipReason, cPath } = require('./lib/c-peers');

run(async () => {
  const o = options();
  const row = new Row('floor', 'C TCP ping-pong (12 B → 29 B), floor');
  const cmdlines = [];
  if (!cPath('pingpong')) {
    row.skip(cSkipReason('pingpong'));
  } else {
    const server = await startCServer('pingpong');
    cmdlines.push(server.cmdline);
    await interleave(o.rounds, [{
      row,
      run: async () => {
        const r = await runCClient('pingpong', { port: server.port, count: o.count, durationMs: o.durationMs, warmup: o.warmup });
        if (!cmdlines.includes(r.cmdline)) cmdlines.push(r.cmdline);
        row.addLatency({ hist: r.hist, count: r.json.count, errors: r.json.errors, reqPerSec: r.json.reqPerSec });
      }
    }]);
    await server.stop();
  }
  return {
    question: 2,
    name: 'floor',
    title: 'The floor: C TCP ping-pong on 127.0.0.1',
    latency: true,
    sections: [{ title: 'Floor', kind: 'latency', rows: [row] }],
    cmdlines
  };
});
