'use strict';

/**
 * Question 3: the ASCII `@01` round trip with 1, 2, 4 and 8 connections, the Brainboxes latency test
 * (each connection strictly one request at a time, closed loop), run by nines' own probe against the
 * nines ED-588 simulator (own process) and against the C responder, which answers at once with
 * replies of the same size: that row is the ASCII floor for the nines client.
 */

const path = require('node:path');
const { options, Row, interleave, run } = require('./lib/question');
const { startSimProcess } = require('./lib/servers');
const { startCServer, cPath, cSkipReason } = require('./lib/c-peers');
const { decode } = require('./lib/hist');

const CONNECTIONS = [1, 2, 4, 8];

run(async () => {
  const o = options();
  const { runProbe } = require(path.join(__dirname, '..', 'gateway', 'measure', 'probe'));
  const sim = await startSimProcess('ascii');
  const c = cPath('ascii-responder') ? await startCServer('ascii-responder') : null;
  const servers = [{ key: 'sim', name: 'nines simulator', srv: sim }, { key: 'c', name: 'C responder', srv: c }];
  const count = o.quick ? 1000 : 20000;
  const sections = servers.map((s) => ({
    title: `nines probe → ${s.name}${s.key === 'c' ? ' (the ASCII floor)' : ''}`,
    kind: 'latency',
    brainboxes: true,
    rows: CONNECTIONS.map((n) => {
      const row = new Row(`${s.key}-${n}`, `${s.name}, ${n} connection${n > 1 ? 's' : ''}`);
      if (!s.srv) row.skip(cSkipReason('ascii-responder'));
      return row;
    })
  }));
  const variants = servers.map((s, i) => ({
    row: sections[i].rows[0],
    run: async () => {
      const probe = runProbe({
        target: `ascii://127.0.0.1:${s.srv.port}?address=01`,
        command: '@01',
        connections: CONNECTIONS,
        count,
        warmup: o.quick ? 100 : 1000,
        timeoutMs: 1000
      });
      const { runs } = await probe.promise;
      for (const r of runs) {
        const row = sections[i].rows[CONNECTIONS.indexOf(r.connections)];
        row.addLatency({ hist: decode(r.hist), count: r.ok + r.errors + r.timeouts, errors: r.errors + r.timeouts, reqPerSec: r.ratePerSec });
      }
    }
  }));
  await interleave(o.rounds, variants);
  await sim.stop();
  if (c) await c.stop();
  return {
    question: 3,
    name: 'ascii',
    title: 'ASCII @01 round trip, 1/2/4/8 connections (Brainboxes method)',
    latency: true,
    sections,
    notes: [`${count} requests per run, split over the run's connections; closed loop: latencies are service times.`],
    cmdlines: [sim.cmdline, c && c.cmdline].filter(Boolean)
  };
});
