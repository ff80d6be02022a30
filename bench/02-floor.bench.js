'use strict';

/**
 * Question 2, the floor: what does one round trip with Modbus FC3×10 sizes (12-byte request, 29-byte
 * reply) cost on this machine's loopback, with nothing parsed? A C client and server, TCP_NODELAY,
 * one connection, closed loop. Every other latency row is also reported as a ratio to this one: the
 * unpinned floor, and the floor pinned as question 1's placements are (lib/placement.js), so a
 * pinned row is compared with the floor of its own placement.
 */

const { options, Row, interleave, run } = require('./lib/question');
const { startServer } = require('./lib/procs');
const { runCClient, cSkipReason, cPath } = require('./lib/c-peers');
const { placements: allPlacements, pinned, describe } = require('./lib/placement');

run(async () => {
  const o = options();
  const row = new Row('floor', 'C TCP ping-pong (12 B → 29 B), floor, unpinned');
  const { placements, notes } = allPlacements();
  const pinnedRows = placements.filter((p) => p.client !== undefined)
    .map((p) => ({ p, row: new Row(`floor-${p.id}`, `C TCP ping-pong (12 B → 29 B), floor, ${describe(p)}`, { placement: p.id }) }));
  const cmdlines = [];
  if (!cPath('pingpong')) {
    row.skip(cSkipReason('pingpong'));
    for (const x of pinnedRows) x.row.skip(cSkipReason('pingpong'));
  } else {
    const start = (cpu) => { const [cmd, args] = pinned(cpu, cPath('pingpong'), ['server']); return startServer(cmd, args, { label: 'pingpong' }); };
    const free = await start(undefined);
    // the pinned placements share one server on their server CPU
    const onCore = pinnedRows.length ? await start(pinnedRows[0].p.server) : null;
    for (const s of [free, onCore]) if (s) cmdlines.push(s.cmdline);
    const variant = (r, server, cpu) => ({
      row: r,
      run: async () => {
        const x = await runCClient('pingpong', { port: server.port, count: o.count, durationMs: o.durationMs, warmup: o.warmup, cpu });
        if (!cmdlines.includes(x.cmdline)) cmdlines.push(x.cmdline);
        r.addLatency({ hist: x.hist, count: x.json.count, errors: x.json.errors, reqPerSec: x.json.reqPerSec });
      }
    });
    await interleave(o.rounds, [variant(row, free, undefined), ...pinnedRows.map((x) => variant(x.row, onCore, x.p.client))]);
    await Promise.all([free, onCore].filter(Boolean).map((s) => s.stop()));
  }
  return {
    question: 2,
    name: 'floor',
    title: 'The floor: C TCP ping-pong on 127.0.0.1, unpinned and in both CPU placements',
    latency: true,
    sections: [{ title: 'Floor', kind: 'latency', rows: [row, ...pinnedRows.map((x) => x.row)] }],
    notes,
    cmdlines
  };
});
