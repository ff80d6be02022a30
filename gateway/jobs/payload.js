'use strict';

const { latencyPayload } = require('../latency');
const { fellBehind } = require('../latency/outcome');

/** An interval shorter than this, or holding fewer slots, is too short to judge whether its rate held */
const MIN_JUDGED_MS = 100;
const MIN_JUDGED_SLOTS = 5;

/**
 * The latency summary of one interval (design.md payload), as the gateway publishes it and the
 * Node-RED poll node outputs it.
 *
 * A fixed-rate job's summary says whether the interval held its rate: `fellBehind` is true when
 * what was sent (ok + errors + timeouts; slots skipped under `skip` were not sent) is below 95 % of
 * the offered rate, the sweep's and the probe's rule (latency/outcome.js). Judged over the part of
 * the interval the job was sending (its first interval also holds the device's connecting), and
 * allowing one request per lane in flight across the interval's edges, so a job that keeps up is
 * never flagged for where the interval was cut. Closed-loop jobs have no rate to hold: false.
 *
 * @param {object} snap interval snapshot (Recorder form)
 * @param {number} seq interval number, contiguous per job
 * @param {{target: string, op: string, connections?: number, ratePerSec?: number|null, loopDelayP99Ms?: number,
 *   sendingSinceMs?: number|null}} meta from the job; sendingSinceMs: epoch ms the job's schedule began
 *   (null: not yet; undefined: unknown, the whole interval counts)
 * @param {{gateway: string, job: string}} who
 * @returns {object}
 */
function summaryPayload (snap, seq, meta, { gateway, job }) {
  const payload = latencyPayload({ ...snap, seq }, { gateway, job, target: meta.target, op: meta.op });
  payload.connections = meta.connections;
  payload.offered = meta.ratePerSec;
  payload.fellBehind = intervalFellBehind(snap, meta);
  if (meta.tags !== undefined) payload.tags = meta.tags;
  if (meta.unit) payload.unit = meta.unit;
  if (meta.loopDelayP99Ms !== undefined) payload.loopDelayP99 = meta.loopDelayP99Ms;
  return payload;
}

/**
 * @param {{startMs: number, endMs: number, ok: number, errors: number, timeouts: number}} snap
 * @param {{ratePerSec?: number|null, connections?: number, sendingSinceMs?: number|null}} meta
 * @returns {boolean}
 */
function intervalFellBehind (snap, meta) {
  const offered = meta.ratePerSec;
  if (offered === null || offered === undefined || offered === Infinity || meta.sendingSinceMs === null) return false;
  const fromMs = meta.sendingSinceMs === undefined ? snap.startMs : Math.max(snap.startMs, meta.sendingSinceMs);
  const ms = snap.endMs - fromMs;
  if (ms < MIN_JUDGED_MS || offered * ms / 1000 < MIN_JUDGED_SLOTS) return false;
  const sent = snap.ok + snap.errors + snap.timeouts;
  return fellBehind((sent + (meta.connections || 1)) * 1000 / ms, offered);
}

module.exports = { summaryPayload, intervalFellBehind };
