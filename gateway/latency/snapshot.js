'use strict';

/**
 * Interval snapshots: what a Recorder hands over each interval, their checked wire form (for
 * postMessage and JSON) and exact merging. Recorder itself is in recorder.js.
 */

const { createAccumulator, mergeInto, encodeHistogram, decodeHistogram, checkHistogram } = require('./histogram');
const { invalid, nonNegInt, finite, plainObject } = require('./validate');

/**
 * Catch-up policies (latency-method.md rule 4) plus "closed" for closed-loop runs (`rate: max`),
 * whose response times are service times and must be labelled so. Merged snapshots of different
 * policies say "mixed".
 */
const POLICIES = Object.freeze(['burst', 'capped', 'skip', 'closed']);
const MIXED = 'mixed';
const HIST_FIELDS = Object.freeze(['response', 'service', 'lag']);
const COUNT_FIELDS = Object.freeze(['count', 'ok', 'errors', 'timeouts', 'skipped', 'clamped', 'invalid']);

/**
 * @typedef {object} Snapshot one interval of one job
 * @property {number} seq interval number, from 0, +1 per snapshot (merged: the highest)
 * @property {number} startMs interval start, epoch ms
 * @property {number} endMs interval end, epoch ms (>= startMs)
 * @property {number} count samples: ok + errors + timeouts + skipped
 * @property {number} ok
 * @property {number} errors error replies (recorded as samples)
 * @property {number} timeouts recorded as samples at the timeout, a lower bound
 * @property {number} skipped missed slots under the "skip" policy (response only)
 * @property {number} clamped values above 1 h, recorded as 1 h (any of the three histograms)
 * @property {number} invalid values refused and not recorded (NaN, fraction, negative…)
 * @property {string} policy burst | capped | skip | closed | mixed
 * @property {import('./paged-histogram').PagedHistogram|null} response ns from the intended send time
 * @property {import('./paged-histogram').PagedHistogram|null} service ns from the actual send
 * @property {import('./paged-histogram').PagedHistogram|null} lag dispatch lag ns (actual − intended send)
 */

/**
 * @param {unknown} policy
 * @param {string} field
 * @param {boolean} allowMixed
 * @returns {string}
 */
function checkPolicy (policy, field, allowMixed) {
  if (POLICIES.includes(/** @type {string} */ (policy)) || (allowMixed && policy === MIXED)) return /** @type {string} */ (policy);
  const names = allowMixed ? [...POLICIES, MIXED] : POLICIES;
  throw invalid(field, policy, `one of ${names.map((p) => `"${p}"`).join(', ')}`);
}

/**
 * Checks the counts and times shared by snapshots and their wire form.
 * @param {Record<string, unknown>} snap
 * @param {string} field
 */
function checkCounts (snap, field) {
  nonNegInt(snap.seq, `${field}.seq`);
  finite(snap.startMs, `${field}.startMs`);
  finite(snap.endMs, `${field}.endMs`);
  if (snap.endMs < snap.startMs) throw invalid(`${field}.endMs`, snap.endMs, `>= startMs (${snap.startMs})`);
  for (const name of COUNT_FIELDS) nonNegInt(snap[name], `${field}.${name}`);
  const sum = snap.ok + snap.errors + snap.timeouts + snap.skipped;
  if (snap.count !== sum) throw invalid(`${field}.count`, snap.count, `ok + errors + timeouts + skipped (${sum})`);
  checkPolicy(snap.policy, `${field}.policy`, true);
}

/**
 * @param {unknown} snap
 * @param {string} [field]
 * @returns {Snapshot}
 */
function checkSnapshot (snap, field = 'snapshot') {
  plainObject(snap, field);
  checkCounts(snap, field);
  for (const name of HIST_FIELDS) {
    if (snap[name] === null) throw invalid(`${field}.${name}`, null, 'a histogram (this snapshot was recycled)');
    checkHistogram(snap[name], `${field}.${name}`);
  }
  return /** @type {Snapshot} */ (snap);
}

/**
 * The wire form of a snapshot: plain data, safe for postMessage and JSON.
 * @param {Snapshot} snap
 * @returns {{v: 1, seq: number, startMs: number, endMs: number, count: number, ok: number, errors: number,
 *   timeouts: number, skipped: number, clamped: number, invalid: number, policy: string,
 *   response: string, service: string, lag: string}} histograms as V2 compressed base64 (ns)
 */
function encodeSnapshot (snap) {
  checkSnapshot(snap);
  return {
    v: 1,
    seq: snap.seq,
    startMs: snap.startMs,
    endMs: snap.endMs,
    count: snap.count,
    ok: snap.ok,
    errors: snap.errors,
    timeouts: snap.timeouts,
    skipped: snap.skipped,
    clamped: snap.clamped,
    invalid: snap.invalid,
    policy: snap.policy,
    response: encodeHistogram(snap.response),
    service: encodeHistogram(snap.service),
    lag: encodeHistogram(snap.lag)
  };
}

/**
 * Rebuilds a snapshot from its wire form, checking every field and decoding each histogram with
 * the checked decoder.
 * @param {unknown} obj what encodeSnapshot produced (possibly from another thread or process)
 * @param {{maxChars?: number}} [options] passed to decodeHistogram
 * @returns {Snapshot} a new snapshot owned by the caller (no recorder recycles it); `encoded` holds the
 *   base64 strings it was decoded from
 * @throws {NinesError} NINES_ERR_INVALID_ARG for a bad field, NINES_ERR_BAD_HISTOGRAM for a bad histogram
 */
function decodeSnapshot (obj, options = {}) {
  plainObject(obj, 'snapshot');
  if (obj.v !== 1) throw invalid('snapshot.v', obj.v, '1');
  checkCounts(obj, 'snapshot');
  const snap = {};
  for (const name of ['seq', 'startMs', 'endMs', ...COUNT_FIELDS, 'policy']) snap[name] = obj[name];
  for (const name of HIST_FIELDS) {
    const h = decodeHistogram(obj[name], options);
    if (h.totalCount > obj.count) {
      throw invalid(`snapshot.${name}`, `${h.totalCount} samples`, `a histogram of at most count (${obj.count}) samples`);
    }
    snap[name] = h;
  }
  // keep the wire form: whoever publishes this snapshot (latencyPayload's `hist`) need not encode
  // again what the worker already encoded
  snap.encoded = { response: obj.response, service: obj.service, lag: obj.lag };
  return /** @type {Snapshot} */ (snap);
}

/**
 * Merges snapshots exactly: counts add, histograms add bucket by bucket into 64-bit accumulators,
 * start = earliest start, end = latest end, seq = highest seq. Percentiles are read from the
 * merged histograms afterwards; they are never averaged.
 * @param {Snapshot[]} list at least one snapshot (any jobs, any gateways, any intervals)
 * @returns {Snapshot} new accumulators; policy is the common policy or "mixed"
 */
function mergeSnapshots (list) {
  if (!Array.isArray(list) || list.length === 0) throw invalid('list', list, 'a non-empty array of snapshots');
  list.forEach((snap, i) => checkSnapshot(snap, `list[${i}]`));
  // reduce, not Math.max(...list): spreading a long list overflows the call stack.
  const out = {
    seq: list.reduce((m, s) => Math.max(m, s.seq), 0),
    startMs: list.reduce((m, s) => Math.min(m, s.startMs), Infinity),
    endMs: list.reduce((m, s) => Math.max(m, s.endMs), -Infinity)
  };
  for (const name of COUNT_FIELDS) out[name] = list.reduce((sum, s) => sum + s[name], 0);
  out.policy = list.every((s) => s.policy === list[0].policy) ? list[0].policy : MIXED;
  for (const name of HIST_FIELDS) {
    const acc = createAccumulator();
    for (const snap of list) mergeInto(acc, snap[name]);
    acc.startTimeStampMsec = out.startMs;
    acc.endTimeStampMsec = out.endMs;
    out[name] = acc;
  }
  return /** @type {Snapshot} */ (out);
}

module.exports = {
  POLICIES,
  HIST_FIELDS,
  COUNT_FIELDS,
  checkPolicy,
  checkSnapshot,
  encodeSnapshot,
  decodeSnapshot,
  mergeSnapshots
};
