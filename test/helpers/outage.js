'use strict';

/**
 * The outage drill of the devices issue: one poll job at a fixed rate on a simulated Modbus device,
 * the device down for a while (its server closed, so connections fail), then back on the same port.
 * Measured from the device's side (requests it received, read every 10 ms) and from the pool's
 * (health events, values). Used by the default suite with a short outage and by test/long with 25 s.
 */

const { WorkerPool } = require('../../gateway/workers/pool');
const { buildDeviceSpec } = require('../../gateway/devices');
const { buildJobSpec } = require('../../gateway/jobs/spec');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');

const { until, sleep } = require('./wait');

const TICK_MS = 10;

/**
 * @param {object} o
 * @param {number} o.ratePerSec
 * @param {number} o.downMs how long the device is away
 * @param {number} [o.afterMs=3000] observed after it is back
 * @param {string} [o.policy] catch-up policy (default: the poll default, skip)
 * @param {{initialMs: number, maxMs: number}} [o.backoff]
 * @returns {Promise<{maxWindow: number, windows: number[], upAfterMs: number|null, valuesAfterMs: number|null,
 *   firstReplyAfterMs: number|null, summaries: object[], backoffMaxMs: number}>}
 *   maxWindow: most requests the device got in any 1 s window after it came back
 */
async function runOutage ({ ratePerSec, downMs, afterMs = 3000, policy, backoff = { initialMs: 100, maxMs: 1000 } }) {
  let sim = await createModbusTcpSimulator({ port: 0 });
  const port = sim.port;
  const pool = new WorkerPool({ workers: 1 });
  const device = buildDeviceSpec({ name: 'plc', target: sim.url, timeoutMs: 500, backoff });
  const health = [];
  const values = [];
  const summaries = [];
  pool.on('health', (name, h) => health.push({ at: Date.now(), state: h.state }));
  pool.on('values', (job, v) => values.push({ at: Date.now() }));
  pool.on('summary', (job, p) => summaries.push(p));
  try {
    pool.addDevice(device);
    pool.startJob(buildJobSpec({
      name: 'poll', read: { fc: 4, address: 0, quantity: 2 }, ratePerSec, policy, intervalMs: 1000,
      values: { mode: 'every', n: 1, minIntervalMs: 0 }
    }, { device }));
    // polling before the outage: its first values are in
    await until(() => values.length > 0, 'values before the outage');
    await sim.close();
    await sleep(downMs);
    sim = await createModbusTcpSimulator({ port, modelOptions: { animate: true } });
    const backAt = Date.now();
    // requests the device received so far, read every 10 ms with the time of the reading: a window
    // is judged by the clock, not by counting ticks, which stretch when this thread is starved
    const samples = [{ at: Date.now(), n: 0 }];
    const sampler = setInterval(() => samples.push({ at: Date.now(), n: sim.stats.requests }), TICK_MS);
    let firstReplyAt = null;
    const watch = setInterval(() => { if (firstReplyAt === null && sim.stats.replies > 0) firstReplyAt = Date.now(); }, 5);
    await sleep(afterMs);
    clearInterval(sampler);
    clearInterval(watch);
    samples.push({ at: Date.now(), n: sim.stats.requests });
    // the most requests between two readings at most 1 s apart: every window counted is ≤ 1 s long
    const windows = [];
    for (let i = 0, j = 0; i < samples.length; i++) {
      while (j + 1 < samples.length && samples[j + 1].at - samples[i].at <= 1000) j++;
      windows.push(samples[j].n - samples[i].n);
    }
    const upAt = health.find((h) => h.at >= backAt && h.state === 'up');
    const valueAt = values.find((v) => v.at >= backAt);
    return {
      maxWindow: Math.max(...windows),
      windows,
      upAfterMs: upAt ? upAt.at - backAt : null,
      upAfterFirstReplyMs: upAt && firstReplyAt !== null ? upAt.at - firstReplyAt : null,
      valuesAfterMs: valueAt ? valueAt.at - backAt : null,
      firstReplyAfterMs: firstReplyAt === null ? null : firstReplyAt - backAt,
      sawDown: health.some((h) => h.state === 'down'),
      summaries,
      backoffMaxMs: backoff.maxMs
    };
  } finally {
    await pool.stop();
    await sim.close();
  }
}

module.exports = { runOutage };
