'use strict';

/**
 * Question 13: on a shared bus, what does one dead unit cost the others (issue 14)? Ten units on one
 * line, each polled at 20/s (FC3 ×10, one poll job per unit, policy skip, timeout 150 ms), on three
 * kinds of line:
 *
 *   rtu      a serial line: the nines RTU simulator on one end of a socat PTY pair, 115200 baud, the
 *            gateway on the other (on its main thread, as it runs serial lines);
 *   rtutcp   the same RTU slaves behind one RTU-over-TCP socket, as a serial server forwards them;
 *   tcp      ten unit ids behind one Modbus TCP connection, as a PLC gateway forwards them.
 *
 * Per line and round, a fresh gateway process (lib/bus-child.js) with a fresh simulator process
 * (lib/line-sim.js) runs three phases: all healthy; unit 3 silent (the simulator stops answering it);
 * unit 3 answering again. Reported: the other nine's share of polls answered (the worst unit, as a %
 * of its offered rate), their pooled p99 healthy and silent and the ratio (also without the first
 * timeout: the silence where only the unit's probes cost the line), the time from the silence to
 * the unit's `down` in the device health, from the restore to its `up`, and the requests that reached
 * the silent unit. Rounds interleave the three lines.
 */

const path = require('node:path');
const { options, Row, interleave, run } = require('./lib/question');
const { runJson } = require('./lib/procs');
const { decode } = require('./lib/hist');
const { phaseOf } = require('../gateway/jobs/job');

const CHILD = path.join(__dirname, 'lib', 'bus-child.js');
const UNITS = 10;
const SILENT = 3;
const RATE = 20;
const TIMEOUT_MS = 150;
/** The unit backoff's maximum (devices/spec.js default): a unit is back within it plus one poll period */
const UNIT_BACKOFF_MAX_MS = 10000;

const LINES = [
  { id: 'rtu', label: 'serial line (RTU, socat PTY pair, 115200 baud)' },
  { id: 'rtutcp', label: 'one RTU-over-TCP socket (serial server)' },
  { id: 'tcp', label: 'one Modbus TCP connection (gateway)' }
];

/** ms between the two closest phases of units u1 … uN over a period of periodMs (jobs/job.js phaseOf) */
function closestMs (n, periodMs) {
  const at = Array.from({ length: n }, (_, i) => phaseOf(`u${i + 1}`) * periodMs).sort((a, b) => a - b);
  let min = periodMs - at[n - 1] + at[0];
  for (let i = 1; i < n; i++) min = Math.min(min, at[i] - at[i - 1]);
  return min;
}

run(async () => {
  const o = options();
  const rounds = o.quick ? 1 : 3;
  const plan = o.quick
    ? { intervalMs: 500, warmupMs: 700, healthyMs: 1500, silentMs: 2000, restoredMs: 500 }
    : { intervalMs: 1000, warmupMs: 2000, healthyMs: 6000, silentMs: 15000, restoredMs: 3000 };
  const upLimitMs = UNIT_BACKOFF_MAX_MS + 2000;
  const cmdlines = new Set();
  const notes = [];

  const rows = {};
  const latency = {};
  for (const l of LINES) {
    rows[l.id] = new Row(`bus-${l.id}`, l.label, { line: l.id });
    latency[l.id] = {
      healthy: new Row(`bus-${l.id}-healthy`, `${l.label}: the other nine, all healthy`, { line: l.id }),
      silent: new Row(`bus-${l.id}-silent`, `${l.label}: the other nine, unit ${SILENT} silent`, { line: l.id })
    };
  }

  const variant = (l) => ({
    row: rows[l.id],
    run: async () => {
      const spec = { kind: l.id, units: UNITS, silent: SILENT, ratePerSec: RATE, timeoutMs: TIMEOUT_MS, upLimitMs, ...plan };
      const args = [CHILD, JSON.stringify(spec)];
      cmdlines.add(['node', path.relative(__dirname, CHILD), `'${args[1]}'`].join(' '));
      const r = await runJson(process.execPath, args, { timeoutMs: plan.warmupMs + plan.healthyMs + plan.silentMs + upLimitMs + plan.restoredMs + 30000 });
      const ratio = r.silent.p99 / r.healthy.p99;
      const perUnit = Object.keys(r.healthy.perUnitP99).map((u) => r.silent.perUnitP99[u] / r.healthy.perUnitP99[u]);
      const neighbourErrors = Object.entries(r.jobErrors).filter(([k]) => !k.startsWith(`u${SILENT}:`) && !k.endsWith('NINES_ERR_UNIT_DOWN'));
      if (neighbourErrors.length) notes.push(`${l.label}, round ${rows[l.id].runs.length + 1}: neighbours' errors (first report per interval) ${neighbourErrors.map(([k, n]) => `${k} ×${n}`).join(', ')}`);
      rows[l.id].add({
        healthyPct: r.healthy.answeredMinPct,
        silentPct: r.silent.answeredMinPct,
        p99Healthy: r.healthy.p99,
        p99Silent: r.silent.p99,
        p99Ratio: ratio,
        p99Steady: r.steady.p99,
        p99SteadyRatio: r.steady.p99 / r.healthy.p99,
        worstUnitRatio: Math.max(...perUnit),
        neighboursFailed: r.silent.failed,
        downNs: r.downNs,
        upNs: r.upNs,
        reached: r.reached,
        silentSkipped: r.silentUnit.skipped,
        restoredPct: Math.min(r.restored.answeredMinPct, r.restoredUnit.answeredPct),
        silentS: r.silentMs / 1000
      });
      const rate = (f) => f.ok / (f.spanMs / 1000);
      latency[l.id].healthy.addLatency({ hist: decode(r.healthy.hist), count: r.healthy.slots, errors: r.healthy.failed, reqPerSec: rate(r.healthy) });
      latency[l.id].silent.addLatency({ hist: decode(r.silent.hist), count: r.silent.slots, errors: r.silent.failed, reqPerSec: rate(r.silent) });
    }
  });
  await interleave(rounds, LINES.map(variant));
  for (const l of LINES) {
    if (rows[l.id].skipped) for (const x of Object.values(latency[l.id])) x.skip(rows[l.id].skipped);
  }

  return {
    question: 13,
    name: 'bus-isolation',
    title: `Shared-bus isolation: ${UNITS} units at ${RATE}/s each on one line, one goes silent`,
    latency: true,
    timeoutMs: TIMEOUT_MS,
    ratePerSec: RATE,
    plotRows: LINES.flatMap((l) => [`bus-${l.id}-healthy`, `bus-${l.id}-silent`]),
    sections: [
      {
        title: `Per line: the other nine with unit ${SILENT} silent for ${plan.silentMs / 1000} s, against ${plan.healthyMs / 1000} s all healthy (median, min–max over rounds)`,
        kind: 'custom',
        rows: LINES.map((l) => rows[l.id]),
        columns: [
          { key: 'healthyPct', label: 'answered, healthy (worst of 9, % of offered)', unit: 'pct' },
          { key: 'silentPct', label: 'answered, unit silent (worst of 9)', unit: 'pct' },
          { key: 'p99Healthy', label: 'p99 of the 9, healthy', unit: 'ns' },
          { key: 'p99Silent', label: 'p99 of the 9, unit silent', unit: 'ns' },
          { key: 'p99Ratio', label: 'p99 × healthy', unit: 'ratio' },
          { key: 'p99Steady', label: 'p99 of the 9, silent after its first timeout', unit: 'ns' },
          { key: 'p99SteadyRatio', label: 'that × healthy', unit: 'ratio' },
          { key: 'worstUnitRatio', label: 'p99 × healthy, worst of the 9', unit: 'ratio' },
          { key: 'neighboursFailed', label: 'polls of the 9 failed while silent', unit: 'int' },
          { key: 'downNs', label: 'silence → down', unit: 'ns' },
          { key: 'upNs', label: 'restore → up', unit: 'ns' },
          { key: 'reached', label: 'requests that reached the silent unit', unit: 'int' },
          { key: 'silentSkipped', label: 'its polls skipped', unit: 'int' },
          { key: 'restoredPct', label: 'answered after up (worst of 10)', unit: 'pct' }
        ]
      },
      { title: 'Response time of the other nine, healthy and with one unit silent (merged over rounds)', kind: 'latency', rows: LINES.flatMap((l) => [latency[l.id].healthy, latency[l.id].silent]) }
    ],
    notes: [
      `${UNITS} poll jobs (one per unit, FC3 ×10 from 0, ${RATE}/s, policy skip, intervals of ${plan.intervalMs} ms) on one device with \`units\` (timeout ${TIMEOUT_MS} ms; unit backoff 1 s doubling to 10 s with jitter, the default), in a fresh gateway process per run; ` +
        `phases of ${plan.healthyMs / 1000} s healthy, ${plan.silentMs / 1000} s with unit ${SILENT} silent, then until it is up again plus ${plan.restoredMs / 1000} s; each begins with pool.reset(). Rounds: ${rounds}, interleaving the lines.`,
      '"Answered" is polls answered ÷ polls intended (slots of the fixed-rate schedule), per unit; the worst of the other nine is shown. Response times count from the intended send time; a skipped slot is recorded with what it waited (the job\'s rule), so a stall shows in the percentiles.',
      `"Silent after its first timeout" leaves out the intervals that began before the unit was down plus two timeouts: what remains is the cost of its probes (one per backoff, each waiting twice the unit's slowest recent answer, at least 50 ms), not of the request that found it silent.`,
      '"Silence → down" is from the command to the simulator (over a pipe) to the device health event arriving in the gateway process; "restore → up" likewise. "Requests that reached the silent unit" is the simulator\'s count of requests to a unit it does not answer, over the silent phase.',
      `Each job starts at a phase of its period taken from its name (jobs/job.js phaseOf): ${Array.from({ length: UNITS }, (_, i) => `u${i + 1} ${phaseOf(`u${i + 1}`).toFixed(3)}`).join(', ')}. ` +
        `Over the ${1000 / RATE} ms period, the two closest start ${closestMs(UNITS, 1000 / RATE).toFixed(1)} ms apart; polls that come due while another is on the line wait for it, and the healthy p99 includes that wait.`,
      'The serial line is a PTY pair: no wire timing (115200 baud shapes nothing but the client\'s t3.5 of 1.75 ms); the RTU-over-TCP client keeps its 1.75 ms silence before each write. On both RTU lines a timeout is followed by a quiet period as long as the timed-out wait (late replies, rtu-transport.js), so the silent unit holds the line twice its wait.',
      ...notes
    ],
    cmdlines: [...cmdlines]
  };
});
