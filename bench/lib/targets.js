'use strict';

/**
 * The issues' targets (issue 5; issue 8 for devices and the fleet's worker-count curve), judged on
 * figures from the same run (medians over rounds). Each is met, not met (with by how much) or not
 * measured (with why). What limits a missed target is written in the results' notes and
 * bench/README.md, not guessed here.
 */

const path = require('node:path');
const { findRow } = require('./report');
const { aggregate } = require('./aggregate');
const { fmtNs, fmtInt, fmtRatio } = require('./format');

/** Issue 11's committed allocation per request of the nines rows (allocationTargets) */
const ALLOC_BASELINE = path.join(__dirname, '..', 'alloc-baseline.json');

/** @returns {object} a target that could not be judged */
const absent = (text, limit, why) => ({ text, limit, met: null, why });

/**
 * "at most" target on a ratio.
 * @param {string} text
 * @param {number} ratio measured / reference
 * @param {number} limit
 * @param {string} measured human text
 */
function atMost (text, ratio, limit, measured) {
  const met = ratio <= limit;
  return { text, measured: `${measured} (${fmtRatio(ratio)})`, limit: `≤ ${fmtRatio(limit)}`, met, ratio, by: met ? undefined : `${((ratio / limit - 1) * 100).toFixed(0)} % over` };
}

/** "at least" target on a ratio. */
function atLeast (text, ratio, limit, measured) {
  const met = ratio >= limit;
  return { text, measured: `${measured} (${fmtRatio(ratio)})`, limit: `≥ ${fmtRatio(limit)}`, met, ratio, by: met ? undefined : `${((1 - ratio / limit) * 100).toFixed(0)} % short` };
}

/**
 * Adds what limits a missed target (shown only when it is missed).
 * @param {object} t a target
 * @param {string} text
 * @returns {object} t
 */
function withContext (t, text) {
  if (t.met === false) t.limits = text;
  return t;
}

/**
 * What the sweep's saturating step showed, in one placement: the step and the one before it, and
 * each round's last rate held.
 * @returns {string}
 */
function sweepContext (results, place) {
  const held = findRow(results, 'sweep', `nines-held-${place}`);
  if (!held) return '';
  const perRound = `per round, held up to ${held.row.runs.map((r) => `${fmtInt(r.heldRate)} (${fmtRatio(r.heldFraction)})`).join(', ')}`;
  const at = held.agg.saturatedAt && held.agg.saturatedAt.median;
  const step = Number.isFinite(at) ? findRow(results, 'sweep', `nines-${at}-${place}`) : null;
  if (!step) return perRound;
  const a = step.agg;
  return `${perRound}; at ${fmtInt(at)} req/s offered (median round): achieved ${fmtInt(a.reqPerSec.median)}, response p99 ${fmtNs(a.p99.median)}, ` +
    `the sweep's own dispatch lag p99 ${a.lagP99 ? fmtNs(a.lagP99.median) : '–'}`;
}

const PLACE = { one: 'one core', two: 'two cores', free: 'unpinned' };

/**
 * The sweep's nines ÷ C rows of one placement, up to 90 % of the closed-loop capacity (the steps the
 * target judges), each with its aggregate.
 * @returns {Array<{row: object, agg: object}>}
 */
function sweepRatioRows (q, place) {
  const held = findRow([q], 'sweep', `nines-held-${place}`);
  if (!held) return [];
  const top = 0.9 * held.agg.capacity.median + 50; // the 90 % step, rounded to 100/s
  return q.sections.flatMap((sec) => sec.rows)
    .filter((r) => r.id && r.id.startsWith('ratio-') && r.id.endsWith(`-${place}`) && r.rate <= top && r.runs && r.runs.length > 0)
    .map((r) => ({ row: r, agg: aggregate(r.runs) }));
}
/** The nines rows of question 1 judged by issue 11 */
const Q1_NINES = [['nines-probe', 'nines probe'], ['nines-worker', 'nines worker job'], ['nines-main', 'nines driver']];

/**
 * req/s of a nines client ÷ the C client's, from a ratio row (ratios taken within a round: reqRatio,
 * reqPerSec, cReqPerSec), judged on the median ratio.
 * @param {string} text
 * @param {{row: object, agg: object}} r the ratio row (findRow)
 * @param {number} limit at least this ratio
 * @returns {object} a target
 */
function reqVsC (text, r, limit) {
  const a = r.agg;
  return atLeast(text, a.reqRatio.median, limit, `${fmtInt(a.reqPerSec.median)} vs ${fmtInt(a.cReqPerSec.median)} req/s; ${ratioSpread(a.reqRatio, r.row.runs.length)}`);
}

/**
 * A question 1 nines row against the C client of its round and placement: req/s ≥ reqLimit×, p99 ≤
 * 1.3×, p99.9 ≤ 2× (issue 5's and issue 11's three), on the median of the per-round ratios.
 * @param {string} prefix "Modbus closed loop, one core: nines probe"
 * @param {{row: object, agg: object}|null} r the ratio row; null: not measured
 * @param {number} reqLimit
 * @param {string} why why not measured (r null)
 * @returns {object[]} the req/s, p99 and p99.9 targets
 */
function versusC (prefix, r, reqLimit, why) {
  const t = [`${prefix} req/s ≥ ${reqLimit}× the C client`, `${prefix} p99 ≤ 1.3× the C client`, `${prefix} p99.9 ≤ 2× the C client`];
  if (!r) return [absent(t[0], `≥ ${reqLimit}×`, why), absent(t[1], '≤ 1.3×', why), absent(t[2], '≤ 2×', why)];
  const n = r.row.runs.length;
  return [reqVsC(t[0], r, reqLimit), atMost(t[1], r.agg.p99Ratio.median, 1.3, ratioSpread(r.agg.p99Ratio, n)), atMost(t[2], r.agg.p999Ratio.median, 2, ratioSpread(r.agg.p999Ratio, n))];
}

/**
 * Issue 11's targets, one core (client and server on one CPU: the client's CPU per request shows):
 * req/s ≥ 0.95×, p99 ≤ 1.3×, p99.9 ≤ 2× the C client, max ≤ 2 ms over 50,000 requests. Ratios are
 * taken within a round (the C client of the same round and placement), judged on their median.
 * @param {object[]} results
 * @param {string} placement
 * @returns {object[]}
 */
function tailTargets (results, placement) {
  const q = 'modbus-round-trip';
  const where = PLACE[placement] || placement;
  const out = [];
  for (const [id, name] of Q1_NINES) {
    const prefix = `Modbus closed loop, ${where}: ${name}`;
    const t4 = `${prefix} max ≤ 2 ms over 50,000 requests`;
    const r = findRow(results, q, `ratio-${id}-${placement}`);
    const row = findRow(results, q, `${id}-${placement}`);
    if (!r || !row) {
      const why = !results.some((x) => x.name === q) ? 'question 1 not run' : `no ${name} or C client row in this placement`;
      out.push(...versusC(prefix, null, 0.95, why), absent(t4, '≤ 2 ms', why));
      continue;
    }
    const a = r.agg;
    const n = r.row.runs.length;
    const [t1, t2, t3] = versusC(prefix, r, 0.95);
    const gc = row.agg.gcPauseMaxNs ? `; GC pauses up to ${fmtNs(row.agg.gcPauseMaxNs.median)} (${fmtInt(row.agg.scavenges ? row.agg.scavenges.median : 0)} scavenges, ${fmtInt(row.agg.markCompacts ? row.agg.markCompacts.median : 0)} mark-compacts), ${fmtInt(row.agg.allocPerReq ? row.agg.allocPerReq.median : NaN)} B allocated per request` : '';
    const cpu = row.agg.cpuNsPerReq ? `; CPU per request ${fmtNs(row.agg.cpuNsPerReq.median)}` : '';
    out.push(withContext(t1, `the client's CPU per request adds to the server's on one core${cpu}`));
    out.push(withContext(t2, `p99 ${fmtNs(row.agg.p99.median)}${cpu}`));
    out.push(withContext(t3, `p99.9 ${fmtNs(row.agg.p999.median)}${gc}`));
    const maxes = r.row.runs.map((x) => fmtNs(x.max)).join(', ');
    out.push(withContext(atMost(t4, a.max.median / 2e6, 1, `${fmtNs(a.max.median)}${n > 1 ? ` (per round ${maxes}), median` : ''}; the C client's ${fmtNs(a.cMax.median)}`),
      `one stall per run sets the max: a collection${gc ? gc.replace(/^; /, ' (') + ')' : ''}, a background compile or another process on the shared core`));
  }
  return out;
}

/** @param {object[]} results @returns {object[]} */
function modbusTargets (results) {
  const q = 'modbus-round-trip';
  const q1 = results.find((r) => r.name === q);
  const placements = q1 && q1.placements ? q1.placements : ['one', 'two'];
  const out = [];
  const one = placements.includes('one') ? 'one' : placements[0];
  out.push(...tailTargets(results, one));
  // issue 5's targets, judged where the wire dominates (two cores; in its day the runs were unpinned)
  const other = placements.find((p) => p !== one) || one;
  const where = PLACE[other] || other;
  const [t1, t2, t3] = versusC(`Modbus closed loop, ${where}: nines driver`, findRow(results, q, `ratio-nines-main-${other}`), 0.85,
    q1 ? 'no nines driver or C client row' : 'question 1 not run');
  out.push(t1, t2, withContext(t3, 'the tail of a JavaScript client includes garbage collection and event-loop turns the C client does not have'));
  const nines = findRow(results, q, `nines-main-${one}`);
  const c = findRow(results, q, `c-libmodbus-${one}`);
  const floor = findRow(results, 'floor', `floor-${one}`) || findRow(results, 'floor', 'floor');
  const nr = ['nrcm-queue-off', 'nrcm-queue-on'].map((id) => findRow(results, q, `${id}-${one}`)).filter(Boolean)
    .sort((a, b) => b.agg.reqPerSec.median - a.agg.reqPerSec.median)[0];
  const t4 = `nines ≥ 50× node-red-contrib-modbus (its fastest setting), ${PLACE[one] || one}`;
  if (nines && nr) {
    const need = nr.agg.reqPerSec.median * 50;
    out.push(withContext(atLeast(t4, nines.agg.reqPerSec.median / nr.agg.reqPerSec.median, 50, `${fmtInt(nines.agg.reqPerSec.median)} vs ${fmtInt(nr.agg.reqPerSec.median)} req/s`),
      `50× its ${fmtInt(nr.agg.reqPerSec.median)} req/s is ${fmtInt(need)} req/s` + (floor ? `, ${fmtRatio(need / floor.agg.reqPerSec.median)} of what the loopback floor itself did in this run (${fmtInt(floor.agg.reqPerSec.median)} req/s)` : '') +
      (c ? ` and ${fmtRatio(need / c.agg.reqPerSec.median)} of the C libmodbus client` : '')));
  } else out.push(absent(t4, '≥ 50×', 'node-red-contrib-modbus row missing'));
  const sim = findRow(results, q, `sim-c-client-${one}`);
  const t5 = `nines Modbus simulator within 1.5× of the C server (req/s, C client), ${PLACE[one] || one}`;
  if (sim && c) out.push(withContext(atLeast(t5, sim.agg.reqPerSec.median / c.agg.reqPerSec.median, 1 / 1.5, `${fmtInt(sim.agg.reqPerSec.median)} vs ${fmtInt(c.agg.reqPerSec.median)} req/s`),
    'the simulator answers in JavaScript on its event loop; the C server answers from a poll() loop'));
  else out.push(absent(t5, '≥ 0.67×', 'simulator or C server row missing'));
  out.push(...allocationTargets(results));
  return out;
}

/** The nines rows of question 1 (one core: driver, probe, worker job) whose allocation the guard holds */
const ALLOC_GUARDED = ['nines-main-one', 'nines-probe-one', 'nines-worker-one'];

/**
 * Issue 11's regression guard: the bytes a nines row allocates per request may not grow by more
 * than 20 % over the committed baseline (bench/alloc-baseline.json), judged in every run, the quick
 * one included (run.js fails the run when one is missed). The baseline holds one Node major
 * version's figures: allocation is V8's, and another version's is not comparable. Where question 1
 * ran in the one-core placement, a guarded row without a figure (the row failed, its allocation
 * pass reported nothing, the baseline lacks it) is not met: otherwise a broken measurement would
 * pass the guard in silence.
 * @param {object[]} results
 * @param {{node: string, rows: Object<string, number>}|null} [base] the committed baseline
 * @param {string} [node] the Node version this run measured on
 * @returns {object[]}
 */
function allocationTargets (results, base = allocBaseline(), node = process.version) {
  const q1 = results.find((r) => r.name === 'modbus-round-trip');
  const why = !q1 ? 'question 1 not run'
    : q1.error ? 'question 1 failed'
      : !(q1.placements || []).includes('one') ? 'question 1 measured no one-core placement (taskset)'
        : base && base.node.split('.')[0] !== node.split('.')[0] ? `measured on ${node}; the baseline is from ${base.node}`
          : null;
  const out = [];
  for (const id of ALLOC_GUARDED) {
    const bytes = base && base.rows[id];
    const text = `Allocation per request, ${id}: ≤ 1.2× the committed baseline (${bytes ? `${fmtInt(bytes)} B, ${base.node}` : 'none'})`;
    if (why) { out.push({ ...absent(text, '≤ 1.2×', why), guard: true }); continue; }
    const row = findRow(results, 'modbus-round-trip', id);
    const missing = !bytes ? 'no baseline figure for this row (write one with --write-alloc-baseline)'
      : !row ? 'the row failed or was skipped'
        : !row.agg.allocPerReq ? 'its allocation pass reported nothing'
          : null;
    if (missing) { out.push({ text, measured: missing, limit: '≤ 1.2×', met: false, by: 'not measured', guard: true }); continue; }
    const m = row.agg.allocPerReq.median;
    out.push({ ...atMost(text, m / bytes, 1.2, `${fmtInt(m)} B`), guard: true });
  }
  return out;
}

/** @returns {{node: string, date: string, rows: Object<string, number>}|null} the committed allocation baseline */
function allocBaseline () {
  try {
    return JSON.parse(require('node:fs').readFileSync(ALLOC_BASELINE, 'utf8'));
  } catch {
    return null;
  }
}

/** @param {object[]} results @returns {object[]} */
function otherTargets (results) {
  const out = [];
  const floor = findRow(results, 'floor', 'floor');
  const ascii = findRow(results, 'ascii', 'sim-1');
  const t6 = 'ASCII one connection: p50 ≤ 1.6× the TCP floor p50';
  if (floor && ascii) out.push(withContext(atMost(t6, ascii.agg.p50.median / floor.agg.p50.median, 1.6, `${fmtNs(ascii.agg.p50.median)} vs ${fmtNs(floor.agg.p50.median)}`),
    'the nines client (probe, scheduler, parser) and the simulator both run JavaScript per request; the C responder row shows the client alone'));
  else out.push(absent(t6, '≤ 1.6×', 'ASCII or floor row missing'));

  const t7 = 'Isolation: worker job p99.9 under main-thread load ≤ 1.2× idle';
  const w = findRow(results, 'isolation', 'worker');
  if (w) out.push(withContext(atMost(t7, w.agg.ratioP999.median, 1.2, `${fmtNs(w.agg.p999Load.median)} vs ${fmtNs(w.agg.p999Idle.median)}`),
    `per-round ratios ${w.row.runs.map((r) => fmtRatio(r.ratioP999)).join(', ')}: the worker never waits on the main thread, but on 2 cores the busy main thread, the worker and the server process compete for CPU, so the worker is descheduled at times`));
  else out.push(absent(t7, '≤ 1.2×', 'isolation question not run'));
  for (const [id, name] of [['inline', 'inline job'], ['nrcm', 'node-red-contrib-modbus']]) {
    const r = findRow(results, 'isolation', id);
    const t = `Isolation: ${name} p99.9 degrades ≥ 10× under the same load (the contrast)`;
    if (r) out.push(atLeast(t, r.agg.ratioP999.median, 10, `${fmtNs(r.agg.p999Load.median)} vs ${fmtNs(r.agg.p999Idle.median)}`));
    else out.push(absent(t, '≥ 10×', 'isolation question not run'));
  }

  for (const [place, where] of Object.entries(PLACE)) {
    const t8 = `Sweep, ${where}: nines sweep holds the offered rate, p99 flat, up to ≥ 90 % of its closed-loop capacity`;
    const sw = findRow(results, 'sweep', `nines-held-${place}`);
    if (sw) out.push(withContext(atLeast(t8, sw.agg.heldFraction.median, 0.9, `held ${fmtInt(sw.agg.heldRate.median)} of ${fmtInt(sw.agg.capacity.median)} req/s`), sweepContext(results, place)));
    else if (place !== 'free') out.push(absent(t8, '≥ 0.90×', 'sweep question not run in this placement'));
    // what of a p99 rise is nines' own: its p99 over the C reference's at the same step, same round
    const t8c = `Sweep, ${where}: nines sweep p99 ≤ 1.5× the C reference's at every step up to 90 % of capacity`;
    const q = results.find((r) => r.name === 'sweep');
    const ratioRows = q ? sweepRatioRows(q, place) : [];
    if (ratioRows.length > 0) {
      const worst = ratioRows.reduce((a, b) => (b.agg.p99Ratio.median > a.agg.p99Ratio.median ? b : a));
      out.push(withContext(atMost(t8c, worst.agg.p99Ratio.median, 1.5, `${fmtNs(worst.agg.p99.median)} vs ${fmtNs(worst.agg.cP99.median)} at ${fmtInt(worst.row.rate)}/s, the worst step`),
        `per step (median over rounds): ${ratioRows.map((r) => `${fmtInt(r.row.rate)}/s ${fmtRatio(r.agg.p99Ratio.median)}`).join(', ')}`));
    } else if (sw) out.push(absent(t8c, '≤ 1.5×', 'no C reference steps in this run'));
  }

  const t9 = 'Recorder ≤ 200 ns per sample';
  const rec = findRow(results, 'recorder', 'record');
  if (rec) out.push(atMost(t9, rec.agg.nsPerOp.median / 200, 1, `${rec.agg.nsPerOp.median.toFixed(0)} ns`));
  else out.push(absent(t9, '≤ 200 ns', 'recorder question not run'));

  const f = findRow(results, 'fleet', 'fleet-1000');
  const t10 = '1,000 jobs in one gateway ≤ 256 MB RSS';
  const t11 = '1,000 jobs: dispatch-lag p99 ≤ 1 ms';
  if (f) {
    out.push(atMost(t10, f.agg.rssMB.median / 256, 1, `${f.agg.rssMB.median.toFixed(0)} MB`));
    out.push(withContext(atMost(t11, f.agg.lagP99Ns.median / 1e6, 1, fmtNs(f.agg.lagP99Ns.median)),
      `${fmtInt(f.agg.reqPerSec.median)} req/s over 1,000 connections in ${f.agg.workers ? fmtInt(f.agg.workers.median) : 'the default number of'} worker thread(s) (default: cores − 1) at ${f.agg.cpuPct.median.toFixed(0)} % CPU of the gateway process: the deadlines of 1,000 jobs queue behind each other's replies in one event loop; ${curveText(results) || 'no worker-count curve measured'}`));
  } else {
    out.push(absent(t10, '≤ 256 MB', 'fleet question not run'), absent(t11, '≤ 1 ms', 'fleet question not run'));
  }
  out.push(...curveTargets(results));
  return out;
}

/** @returns {Array<{workers: number, agg: object}>} the 1,000-device fleet's points over worker counts (question 7) */
function curvePoints (results) {
  const q = results.find((r) => r.name === 'fleet');
  const section = q && q.sections && q.sections.find((s) => s.rows.some((r) => /^fleet-1000-w\d+$/.test(r.id)));
  if (!section) return [];
  return section.rows.map((r) => findRow(results, 'fleet', r.id)).filter(Boolean)
    .map((p) => ({ workers: Number(p.row.id.split('-w')[1]), agg: p.agg }));
}

/** @returns {string} the curve in words: "1 worker: lag p99 2.6 ms, 170 MB; 2 workers: …" */
function curveText (results) {
  return curvePoints(results).map((p) => `${p.workers} worker${p.workers > 1 ? 's' : ''}: lag p99 ${fmtNs(p.agg.lagP99Ns.median)}, ${p.agg.rssMB.median.toFixed(0)} MB, ${p.agg.cpuPct.median.toFixed(0)} % CPU`).join('; ');
}

/**
 * Issue 8's fleet target (1,000 devices × 1 job at 10 Hz: dispatch-lag p99 ≤ 1 ms and RSS ≤ 256 MB),
 * judged at the best point of the worker-count curve.
 * @param {object[]} results
 * @returns {object[]}
 */
function curveTargets (results) {
  const t1 = '1,000 devices × 1 job at 10 Hz, best worker count: dispatch-lag p99 ≤ 1 ms';
  const t2 = '1,000 devices × 1 job at 10 Hz, at that worker count: RSS ≤ 256 MB';
  // the fixed-rate issue's tighter bound on the same figure
  const t3 = '1,000 devices × 1 job at 10 Hz, best worker count: dispatch-lag p99 ≤ 0.5 ms';
  const points = curvePoints(results).filter((p) => p.agg.lagP99Ns);
  const none = 'no worker-count curve (question 7) measured';
  if (points.length === 0) return [absent(t1, '≤ 1 ms', none), absent(t2, '≤ 256 MB', none), absent(t3, '≤ 0.5 ms', none)];
  const best = points.reduce((a, b) => (b.agg.lagP99Ns.median < a.agg.lagP99Ns.median ? b : a));
  const at = `${best.workers} worker${best.workers > 1 ? 's' : ''}`;
  return [
    withContext(atMost(t1, best.agg.lagP99Ns.median / 1e6, 1, `${fmtNs(best.agg.lagP99Ns.median)} with ${at}`),
      `the curve: ${curveText(results)}. Each thread runs its devices' deadlines in one event loop; on this 2-core machine the threads also share the cores with the server process and the other sessions' load`),
    atMost(t2, best.agg.rssMB.median / 256, 1, `${best.agg.rssMB.median.toFixed(0)} MB with ${at}`),
    withContext(atMost(t3, best.agg.lagP99Ns.median / 0.5e6, 1, `${fmtNs(best.agg.lagP99Ns.median)} with ${at}`),
      `full collections in the measured interval: ${best.agg.markCompacts ? best.agg.markCompacts.median : '–'}; longest collector pause ${best.agg.gcPauseMaxNs ? fmtNs(best.agg.gcPauseMaxNs.median) : '–'}`)
  ];
}

/**
 * Issue 8's targets measured by question 9: fewer connections than jobs, and isolation of a dead
 * device. Connection count, rates and seq are correctness: judged on the worst round; p99 ratios
 * on the median of the per-round ratios.
 * @param {object[]} results
 * @returns {object[]}
 */
function deviceTargets (results) {
  const out = [];
  const t1 = 'Fewer connections than jobs: 10 jobs on a maxConnections 1 device, 1 connection (ss, server side)';
  const t2 = 'Fewer connections than jobs: each of the 10 jobs within 10 % of its configured rate';
  const t3 = 'Fewer connections than jobs: contiguous seq (and intervals) for each job';
  const a = findRow(results, 'devices', 'shared-1');
  if (a) {
    const g = a.agg;
    const conns = g.serverConnections ? g.serverConnections.max : g.healthOpen ? g.healthOpen.max : NaN;
    const how = g.serverConnections ? 'ss' : 'device health (ss unavailable)';
    out.push(atMost(t1, conns / 1, 1, `${fmtInt(conns)} connection(s), ${how}, most in any round`));
    const lo = g.rateMin.min;
    const hi = g.rateMax.max;
    const met = lo >= 0.9 && hi <= 1.1;
    const worst = Math.max(1 - lo, hi - 1);
    out.push({
      text: t2,
      measured: `worst job ${fmtRatio(lo)}, best ${fmtRatio(hi)} of its rate (any round)`,
      limit: '0.90–1.10×',
      met,
      ratio: worst,
      by: met ? undefined : `${((worst - 0.1) * 100).toFixed(0)} points beyond ±10 %`
    });
    const broken = g.seqBroken.max;
    out.push({ text: t3, measured: `${fmtInt(broken)} of 10 jobs with a gap (any round)`, limit: '0 jobs', met: broken === 0, by: broken === 0 ? undefined : `${fmtInt(broken)} job(s)` });
  } else {
    out.push(absent(t1, '≤ 1', 'devices question (9) not run'), absent(t2, '0.90–1.10×', 'devices question (9) not run'), absent(t3, '0 jobs', 'devices question (9) not run'));
  }
  for (const [id, what] of [['iso-refused', 'refusing'], ['iso-stalled', 'stalling']]) {
    const t = `Isolation: one of 5 devices ${what}, the other four's p99 ≤ 1.2× all healthy`;
    const r = findRow(results, 'devices', id);
    const h = findRow(results, 'devices', 'iso-healthy');
    if (r && h && r.agg.ratioP99) {
      out.push(withContext(atMost(t, r.agg.ratioP99.median, 1.2, `${fmtNs(r.agg.othersP99.median)} vs ${fmtNs(h.agg.othersP99.median)}`),
        `per-round ratios ${r.row.runs.map((x) => fmtRatio(x.ratioP99)).join(', ')} (p99.9: ${r.row.runs.map((x) => fmtRatio(x.ratioP999)).join(', ')}); the five devices share one worker thread (default count on 2 cores) and the cores with five simulator processes`));
    } else {
      out.push(absent(t, '≤ 1.2×', 'devices question (9) not run'));
    }
  }
  return out;
}

/**
 * What bounds a closed loop, from the CPU each side spent per request (question 12's ratio rows): on one
 * core client and server share one CPU, so their sum bounds the rate; on two, the busier side does.
 * @param {object} a aggregate of a ratio row (cpuNsPerReq, serverCpuNsPerReq, cCpuNsPerReq, cServerCpuNsPerReq)
 * @param {string} p placement id
 * @returns {string}
 */
function cpuBound (a, p) {
  const m = (k) => (a[k] ? a[k].median : NaN);
  const [n, ns, c, cs] = [m('cpuNsPerReq'), m('serverCpuNsPerReq'), m('cCpuNsPerReq'), m('cServerCpuNsPerReq')];
  if (![n, ns, c, cs].every(Number.isFinite)) return '';
  const mine = p === 'two' ? Math.max(n, ns) : n + ns;
  const theirs = p === 'two' ? Math.max(c, cs) : c + cs;
  const how = p === 'two' ? 'each on its own core, the busier of client and server bounds the rate' : 'on one core client and server share one CPU, so their sum bounds the rate';
  return `CPU per request: nines client ${fmtNs(n)} + server ${fmtNs(ns)}, C client ${fmtNs(c)} + server ${fmtNs(cs)}; ${how}: ` +
    `at most ${fmtInt(1e9 / mine)} req/s for nines, ${fmtInt(1e9 / theirs)} for C, a ratio of at most ${fmtRatio(theirs / mine)} however the wire is used. ` +
    'The libmodbus server reads and answers each request with its own system calls (select, two recv, a send), pipelined or not';
}

/** @returns {string} "ratios 1.7×–2.2× over 3 rounds, median" for an aggregated per-round ratio (the target appends the median) */
function ratioSpread (a, rounds) {
  return rounds > 1 ? `ratios ${fmtRatio(a.min)}–${fmtRatio(a.max)} over ${rounds} rounds, median` : 'ratio';
}

/**
 * Issue 9's pipelining targets (question 12), per CPU placement, against the C libmodbus server:
 * req/s at 8 in flight ≥ 2× the C client, at 1 in flight ≥ 0.85× (today's), and at a fixed rate both
 * reach, p99 ≤ the C client's. Each judged on the median of ratios taken within one round.
 * @param {object[]} results
 * @returns {object[]}
 */
function pipeliningTargets (results) {
  const q = results.find((r) => r.name === 'pipelining');
  const placements = q && q.placements ? q.placements : ['one', 'two'];
  const out = [];
  for (const p of placements) {
    const where = PLACE[p] || p;
    const t1 = `Pipelining, ${where}: nines req/s at 8 in flight ≥ 2× the C client (one connection, C server)`;
    const t2 = `Pipelining, ${where}: nines req/s at 1 in flight ≥ 0.85× the C client`;
    const t3 = `Pipelining, ${where}: at a fixed rate both reach, nines p99 (8 in flight) ≤ the C client's`;
    const why = !q ? 'pipelining question (12) not run' : 'no C libmodbus server or client row';
    const r8 = findRow(results, 'pipelining', `ratio-n8-csrv-${p}`);
    const r1 = findRow(results, 'pipelining', `ratio-n1-csrv-${p}`);
    if (r8) {
      out.push(withContext(reqVsC(t1, r8, 2),
        cpuBound(r8.agg, p) || 'with 8 requests out, the client still pays its JavaScript per reply (a \'data\' event, a promise, a lane\'s next call)'));
    } else out.push(absent(t1, '≥ 2×', why));
    if (r1) {
      out.push(withContext(reqVsC(t2, r1, 0.85),
        `one request at a time, the round trip is the client's CPU time plus the wire: where the wire is short, the JavaScript per request shows (question 1 says the same of its quiet runs). ${cpuBound(r1.agg, p)}`));
    } else out.push(absent(t2, '≥ 0.85×', why));
    const rr = findRow(results, 'pipelining', `rate-ratio-csrv-${p}`);
    const rc = findRow(results, 'pipelining', `rate-c-csrv-${p}`);
    const rn = findRow(results, 'pipelining', `rate-n8-csrv-${p}`);
    if (rr && rc && rn) {
      const held = rc.agg.held.min === 1 && rn.agg.held.min === 1;
      const a = rr.agg;
      const t = atMost(t3, a.p99Ratio.median, 1, `${fmtNs(a.p99.median)} vs ${fmtNs(a.cP99.median)} at ${fmtInt(rr.row.offered)}/s; ${ratioSpread(a.p99Ratio, rr.row.runs.length)}`);
      if (!held) {
        t.met = null;
        t.why = `the offered ${fmtInt(rr.row.offered)}/s was not held in every round (C ${fmtInt(rc.agg.reqPerSec.min)}, nines ${fmtInt(rn.agg.reqPerSec.min)} req/s at worst): not a rate both reach`;
      }
      out.push(withContext(t, 'at a fixed rate each request costs the probe\'s scheduler a wake-up in its worker thread as well (question 4), and on this shared 2-core machine a descheduled process adds milliseconds to either tail'));
    } else out.push(absent(t3, '≤ 1×', why));
  }
  return out;
}

/**
 * Issue 14's shared-bus targets (question 13), per line: with one of ten units silent, the other nine
 * keep ≥ 95 % of their rate (judged on the worst round: a rate is correctness) and their p99 stays
 * within 1.5× all healthy (the median of the per-round ratios); over the lines, the silent unit is
 * reported down within one timeout of its next poll and comes back by itself within its backoff.
 * @param {object[]} results
 * @returns {object[]}
 */
function busTargets (results) {
  const q = results.find((r) => r.name === 'bus-isolation');
  const lines = [['rtu', 'serial line (RTU)'], ['rtutcp', 'RTU over TCP'], ['tcp', 'Modbus TCP']];
  const out = [];
  const found = [];
  for (const [id, name] of lines) {
    const t1 = `Shared bus, ${name}: one of 10 units silent, the other nine keep ≥ 95 % of their rate`;
    const t2 = `Shared bus, ${name}: one of 10 units silent, the other nine's p99 ≤ 1.5× all healthy`;
    const r = findRow(results, 'bus-isolation', `bus-${id}`);
    if (!r) {
      const why = !q ? 'bus-isolation question (13) not run' : `no ${name} row (${(q.sections && q.sections[0].rows.find((x) => x.id === `bus-${id}`) || {}).skipped || 'no runs'})`;
      out.push(absent(t1, '≥ 95 %', why), absent(t2, '≤ 1.5×', why));
      continue;
    }
    found.push([name, r]);
    const a = r.agg;
    const rounds = r.row.runs.length;
    out.push(withContext(atLeast(t1, a.silentPct.min / 95, 1, `worst of the nine ${a.silentPct.min.toFixed(1)} % answered (healthy ${a.healthyPct.min.toFixed(1)} %), worst of ${rounds} round${rounds > 1 ? 's' : ''}`),
      `${fmtInt(a.neighboursFailed.max)} of their polls failed at most in a round: the request that found the unit silent holds the line a timeout${id === 'tcp' ? '' : ' and a quiet period as long'}, so the polls due meanwhile wait or are skipped`));
    out.push(withContext(atMost(t2, a.p99Ratio.median, 1.5, `${fmtNs(a.p99Silent.median)} vs ${fmtNs(a.p99Healthy.median)}; ${ratioSpread(a.p99Ratio, rounds)}`),
      `without the first timeout (only the probes) the nine's p99 is ${fmtNs(a.p99Steady.median)} (${fmtRatio(a.p99SteadyRatio.median)}). ` +
      `The request that finds the unit silent holds the line ${fmtInt(q.timeoutMs)} ms${id === 'tcp' ? '' : ` and RTU's quiet period after a timeout ${fmtInt(q.timeoutMs)} ms more`}, ` +
      'and each probe its wait (twice the unit\'s slowest answer, at least 50 ms' + (id === 'tcp' ? ')' : ', then as long quiet)') + ': every poll due meanwhile waits, and a p99 over a silence of seconds is that wait as soon as it covers 1 % of the polls. ' +
      (id === 'rtu' ? 'A PTY has no wire timing: the healthy p99 is the client\'s t3.5 and the event loops\', so the ratio is to a small figure.' : 'The healthy p99 is a millisecond or two on loopback, so any wait on the line is a large ratio.')));
  }
  const t3 = 'Shared bus, every line: the silent unit reported down within one timeout of its next poll';
  const t4 = 'Shared bus, every line: the unit back up by itself within its backoff after it answers again';
  if (found.length) {
    const limit = q.timeoutMs + 1000 / q.ratePerSec;
    const worst = found.reduce((w, x) => (x[1].agg.downNs.max > w[1].agg.downNs.max ? x : w));
    const down = worst[1].agg.downNs.max / 1e6;
    out.push(withContext(atMost(t3, down / limit, 1, `${fmtNs(worst[1].agg.downNs.max)} at worst (${worst[0]}), limit ${fmtInt(limit)} ms: a poll period plus the timeout`),
      'measured from the command to the simulator to the health event in the gateway process, across a pipe and the worker\'s message port'));
    const upWorst = found.reduce((w, x) => (x[1].agg.upNs.max > w[1].agg.upNs.max ? x : w));
    const upLimit = 10000 + 1000 / q.ratePerSec;
    out.push(atMost(t4, upWorst[1].agg.upNs.max / 1e6 / upLimit, 1, `${fmtNs(upWorst[1].agg.upNs.max)} at worst (${upWorst[0]}), limit ${fmtInt(upLimit)} ms: the backoff maximum plus a poll period`));
  } else {
    const why = !q ? 'bus-isolation question (13) not run' : 'no line measured';
    out.push(absent(t3, '≤ 1×', why), absent(t4, '≤ 1×', why));
  }
  return out;
}

/**
 * Issue 20's fixed-rate targets (question 15), per CPU placement, against the C open-loop reference
 * at the same rate: with precise waits (spin) p50 ≤ C's + 10 µs, p99 ≤ 1.5× C's, p99.9 ≤ 2× C's,
 * max ≤ 2 ms and dispatch lag p99 ≤ 20 µs; with the sleeping wait dispatch lag p99 ≤ 150 µs; each
 * at every rate of the run (the worst rate's median over rounds is judged, and named). Pipelined
 * at 8 in flight: p99 ≤ 1.5× the C client's at the same rate.
 * @param {object[]} results
 * @returns {object[]}
 */
function fixedRateTargets (results) {
  const q = results.find((r) => r.name === 'fixed-rate');
  const placements = q && q.placements ? q.placements : ['one', 'two'];
  const out = [];
  for (const p of placements) {
    const where = PLACE[p] || p;
    const why = !q ? 'fixed-rate question (15) not run' : 'no C reference rows';
    const texts = {
      p50: `Fixed rate, ${where}, precision spin: p50 ≤ the C reference's + 10 µs at every rate`,
      p99: `Fixed rate, ${where}, precision spin: p99 ≤ 1.5× the C reference's at every rate`,
      p999: `Fixed rate, ${where}, precision spin: p99.9 ≤ 2× the C reference's at every rate`,
      max: `Fixed rate, ${where}, precision spin: max ≤ 2 ms at every rate`,
      lag: `Fixed rate, ${where}, precision spin: dispatch lag p99 ≤ 20 µs at every rate`,
      lagSleep: `Fixed rate, ${where}, precision sleep: dispatch lag p99 ≤ 150 µs at every rate`,
      pipe: `Fixed rate, ${where}: pipelined (8 in flight, spin) p99 ≤ 1.5× the C reference's at 40 % of its closed-loop rate`
    };
    const ratios = (mode) => (q && q.sections ? q.sections.flatMap((sec) => sec.rows.filter((r) => r.id.startsWith(`ratio-${mode}-`) && r.id.endsWith(`-${p}`))) : [])
      .map((row) => findRow(results, 'fixed-rate', row.id)).filter(Boolean);
    // a rate the C reference did not hold in every round is no rate to compare at: named, not judged
    const cHeld = (r) => { const c = findRow(results, 'fixed-rate', `c-${r.row.offered}-${p}`); return c && c.agg.held && c.agg.held.min === 1; };
    const unheld = [...new Set(ratios('spin').filter((r) => !cHeld(r)).map((r) => r.row.offered))];
    const spin = ratios('spin').filter(cHeld);
    const sleep = ratios('sleep').filter(cHeld);
    if (!spin.length) {
      out.push(...Object.values(texts).map((t) => absent(t, '', why)));
      continue;
    }
    // the worst rate by the median over rounds of one figure
    const worst = (rows, key) => rows.reduce((w, r) => (r.agg[key] && (!w || r.agg[key].median > w.agg[key].median) ? r : w), null);
    const at = (r) => `at ${fmtInt(r.row.offered)}/s${unheld.length ? ` (not judged at ${unheld.map(fmtInt).join(', ')}/s, which the C reference did not hold)` : ''}`;
    const rounds = spin[0].row.runs.length;
    const ctx = 'this 2-core machine is shared: a descheduled process adds milliseconds to either client, and bench/stalls.js puts each such excursion down to its cause (bench/README.md)';
    const w50 = worst(spin, 'p50Diff');
    out.push(withContext(atMost(texts.p50, (w50.agg.p50Diff.median + 0) / 10e3, 1, `${fmtNs(w50.agg.p50Diff.median)} over C's p50 ${at(w50)}, the worst rate`), ctx));
    const w99 = worst(spin, 'p99Ratio');
    out.push(withContext(atMost(texts.p99, w99.agg.p99Ratio.median, 1.5, `${at(w99)}, the worst rate; ${ratioSpread(w99.agg.p99Ratio, rounds)}`), ctx));
    const w999 = worst(spin, 'p999Ratio');
    out.push(withContext(atMost(texts.p999, w999.agg.p999Ratio.median, 2, `${at(w999)}, the worst rate; ${ratioSpread(w999.agg.p999Ratio, rounds)}`), ctx));
    const wMax = worst(spin, 'max');
    out.push(withContext(atMost(texts.max, wMax.agg.max.median / 2e6, 1, `${fmtNs(wMax.agg.max.median)} ${at(wMax)} (the C reference's max there ${fmtNs(wMax.agg.cMax.median)})`), ctx));
    const wLag = worst(spin, 'lagP99');
    // the C reference's own lag at the same rate: a wake-up both deliver late is the machine's
    const cLag = (r) => (r.agg.cLagP99 ? ` (the C reference's own there ${fmtNs(r.agg.cLagP99.median)})` : '');
    out.push(withContext(atMost(texts.lag, wLag.agg.lagP99.median / 20e3, 1, `${fmtNs(wLag.agg.lagP99.median)} ${at(wLag)}, the worst rate${cLag(wLag)}`), ctx));
    const wSleep = sleep.length ? worst(sleep, 'lagP99') : null;
    out.push(wSleep ? withContext(atMost(texts.lagSleep, wSleep.agg.lagP99.median / 150e3, 1, `${fmtNs(wSleep.agg.lagP99.median)} ${at(wSleep)}, the worst rate${cLag(wSleep)}`), ctx) : absent(texts.lagSleep, '≤ 150 µs', why));
    const pipe = findRow(results, 'fixed-rate', `pipe-ratio-${p}`);
    out.push(pipe ? withContext(atMost(texts.pipe, pipe.agg.p99Ratio.median, 1.5, `${at(pipe)}; ${ratioSpread(pipe.agg.p99Ratio, pipe.row.runs.length)}`), ctx) : absent(texts.pipe, '≤ 1.5×', why));
  }
  return out;
}

/**
 * @param {object[]} results every question's result of this run
 * @returns {object[]} targets in the issue's order
 */
function evaluateTargets (results) {
  return [...modbusTargets(results), ...otherTargets(results), ...deviceTargets(results), ...pipeliningTargets(results), ...busTargets(results), ...fixedRateTargets(results)];
}

module.exports = { evaluateTargets, allocationTargets, ALLOC_BASELINE, ALLOC_GUARDED };
