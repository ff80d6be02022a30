'use strict';

const { latencyPayload } = require('../latency');

/**
 * The latency summary of one interval (design.md payload), as the gateway publishes it and the
 * Node-RED poll node outputs it.
 * @param {object} snap interval snapshot (Recorder form)
 * @param {number} seq interval number, contiguous per job
 * @param {{target: string, op: string, connections?: number, ratePerSec?: number|null, loopDelayP99Ms?: number}} meta from the job
 * @param {{gateway: string, job: string}} who
 * @returns {object}
 */
function summaryPayload (snap, seq, meta, { gateway, job }) {
  const payload = latencyPayload({ ...snap, seq }, { gateway, job, target: meta.target, op: meta.op });
  payload.connections = meta.connections;
  payload.offered = meta.ratePerSec;
  if (meta.loopDelayP99Ms !== undefined) payload.loopDelayP99 = meta.loopDelayP99Ms;
  return payload;
}

module.exports = { summaryPayload };
