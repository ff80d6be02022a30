'use strict';

/**
 * The defaults and limits of a job, each with one home. The job-spec builder (spec.js) applies them;
 * the gateway config's schema and checks (runtime/config/) and the Node-RED poll node state the same
 * numbers. Units are in the names.
 */
module.exports = Object.freeze({
  /** No rate given: closed loop (the next request as soon as the last is answered) */
  RATE_PER_SEC: Infinity,
  /** Requests a job has in flight at once; at most its device's connections × requests in flight */
  CONNECTIONS: 1,
  MAX_CONNECTIONS: 64,
  POLICIES: Object.freeze(['burst', 'capped', 'skip']),
  /**
   * The catch-up policy by purpose. `poll` (gateway jobs, poll nodes) is monitoring: after a stall
   * the missed slots are skipped and counted, never sent late (design.md "Polling is monitoring").
   * `measure` (probe, sweep) is a latency test: `capped`, as wrk2 does, so the backlog of a stall
   * shows in the percentiles (latency-method.md rule 4).
   */
  PURPOSE_POLICY: Object.freeze({ poll: 'skip', measure: 'capped' }),
  /** How a fixed-rate lane waits for its intended time (scheduler/wait.js) */
  PRECISIONS: Object.freeze(['spin', 'sleep']),
  /**
   * The wait by purpose (issue 20; figures from bench question 15, bench/README.md). `measure`
   * (probe, sweep, the latency-probe node) spins the last stretch before each send: the
   * instrument's own lateness is then the C reference's from 1,000/s up (p50 within -4.5 to +10.5
   * µs of it; dispatch lag p99 2-23 µs at 5,000/s and above, against 8-145 µs sleeping), which is
   * what a measurement needs. `poll` (gateway jobs, poll nodes) sleeps: a plant polls at 1-100 Hz,
   * where the sleeping wait's 30-110 µs at p50 (worker threads with 1 µs of timer slack,
   * scheduler/timer-slack.js) is far inside a poll period and is published as dispatch
   * lag, while spinning costs each job CPU (+1 % of a core at 100/s, +9-10 % at 1,000/s), adds up
   * over a gateway's jobs, and on a machine busy with other work was the thread kept waiting.
   */
  PURPOSE_PRECISION: Object.freeze({ poll: 'sleep', measure: 'spin' }),
  /** Latency summary interval */
  INTERVAL_MS: 10000,
  VALUE_MODES: Object.freeze(['off', 'on-change', 'every']),
  /** Values are published at most this often per job (gateway: values.maxRate) */
  VALUES_MAX_RATE_PER_SEC: 10
});
