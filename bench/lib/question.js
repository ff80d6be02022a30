'use strict';

/**
 * What every question file shares: its options (--quick), the measurement sizes per mode, rounds
 * that interleave the variants (A B C, A B C, … so slow drift on a noisy machine hits all of them
 * alike), rows that collect one run per round, and the one JSON line the harness reads.
 */

const { createHist, encode } = require('./hist');
const { toRun } = require('./closed-loop');

/**
 * @returns {{quick: boolean, rounds: number, count: number, durationMs: number, warmup: number}} the
 *   sizes of one closed-loop measurement: quick is a smoke pass (does it run and report); full is 5 short
 *   rounds (long questions cap it at 3), because on a shared machine more short rounds give a steadier median
 */
function options () {
  const quick = process.argv.includes('--quick') || process.env.NINES_BENCH_QUICK === '1';
  return quick
    ? { quick, rounds: 1, count: 2000, durationMs: 300, warmup: 200 }
    : { quick, rounds: 5, count: 500000, durationMs: 2000, warmup: 2000 };
}

/** A table row: one run per round, and the runs' histograms merged for the plot. */
class Row {
  /**
   * @param {string} id stable key (targets and ratios look rows up by it)
   * @param {string} label what the reader sees
   * @param {object} [extra] e.g. {server, note}
   */
  constructor (id, label, extra = {}) {
    this.id = id;
    this.label = label;
    Object.assign(this, extra);
    this.runs = [];
    this._hist = null;
  }

  /**
   * Adds a closed-loop result (hist, count, errors, reqPerSec) as a run.
   * @param {{hist: object, count: number, errors: number, reqPerSec: number}} r
   * @param {object} [more] extra numeric fields for this run
   */
  addLatency (r, more = {}) {
    this.runs.push({ ...toRun(r), ...more });
    if (!this._hist) this._hist = createHist();
    this._hist.add(r.hist);
    if (r.firstError && !this.firstError) this.firstError = r.firstError;
  }

  /** @param {object} run plain numbers (custom tables) */
  add (run) {
    this.runs.push(run);
  }

  /** @param {string} why the row could not be measured */
  skip (why) {
    this.skipped = why;
  }

  toJSON () {
    const out = { ...this };
    delete out._hist;
    if (this._hist) out.hist = encode(this._hist);
    return out;
  }
}

/**
 * Runs `rounds` rounds of the variants, in order within a round; a variant that throws is marked
 * skipped with the reason and not run again.
 * @param {number} rounds
 * @param {Array<{row: Row, run: (round: number) => Promise<void>}>} variants
 */
async function interleave (rounds, variants) {
  for (let r = 0; r < rounds; r++) {
    for (const v of variants) {
      if (v.row.skipped) continue;
      const t0 = Date.now();
      try {
        if (process.env.NINES_BENCH_DEBUG) console.error(`[${v.row.id}] round ${r + 1} …`);
        await v.run(r);
        if (process.env.NINES_BENCH_DEBUG) console.error(`[${v.row.id}] round ${r + 1} done in ${Date.now() - t0} ms`);
      } catch (err) {
        v.row.skip(`failed: ${err.code ? err.code + ' ' : ''}${err.message}`);
        console.error(`[${v.row.id}] ${err.stack || err}`);
      }
    }
  }
}

/**
 * Prints the question's result as the last stdout line (the harness reads it) and ends cleanly.
 * @param {object} result {question, name, title, sections: [{title, kind, rows, columns?}], notes, ...}
 */
function report (result) {
  process.stdout.write('\n' + JSON.stringify({ ...result, quick: options().quick, node: process.version }) + '\n');
}

/**
 * Runs a question's main function; on failure prints the error and sets a failing exit code.
 * @param {() => Promise<object>} main resolves to the result
 * @param {{limitMs?: number}} [opts] the full run's time limit, for a question that needs longer than most
 */
function run (main, { limitMs: fullMs = 420000 } = {}) {
  // a hung peer must not hang the suite: the whole question has a time limit
  const limitMs = options().quick ? 60000 : fullMs;
  setTimeout(() => {
    console.error(`question did not finish within ${limitMs} ms; giving up`);
    process.exit(3); // eslint-disable-line n/no-process-exit
  }, limitMs).unref();
  main().then(report, (err) => {
    console.error(err);
    process.exitCode = 1;
  }).finally(() => {
    // servers and sockets that linger must not keep a finished bench alive
    setTimeout(() => process.exit(), 500).unref(); // eslint-disable-line n/no-process-exit
  });
}

module.exports = { options, Row, interleave, report, run };
