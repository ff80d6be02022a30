'use strict';

/**
 * Summaries read from histograms, and the `nines/<gateway>/<job>/latency` MQTT payload of
 * design.md. Every published number can be recomputed by a subscriber from the payload's `hist`.
 */

const C = require('../base/constants');
const { checkHistogram, encodeHistogram, decodeHistogram } = require('./histogram');
const { PagedHistogram } = require('./paged-histogram');
const { checkSnapshot, checkPolicy } = require('./snapshot');
const { invalid, nonNegInt, positive, finite, nonEmptyString, plainObject } = require('./validate');

const STAT_FIELDS = Object.freeze(['count', 'min', 'mean', 'stddev', 'p50', 'p90', 'p99', 'p99_9', 'p99_99', 'max']);
const PERCENTILES = Object.freeze({ p50: 50, p90: 90, p99: 99, p99_9: 99.9, p99_99: 99.99 });
/** min, the named percentiles, max: what summarize() reads, ascending */
const SUMMARY_PERCENTILES = Object.freeze([0, ...Object.values(PERCENTILES), 100]);
/** A payload is a few KB of JSON around one encoded histogram. */
const MAX_PAYLOAD_CHARS = C.HIST_MAX_ENCODED_CHARS + 64 * 1024;

/**
 * @typedef {object} Stats
 * @property {number} count samples in the histogram
 * @property {number|null} min lowest equivalent value of the lowest occupied bucket (Java's getMinValue)
 * @property {number|null} mean from bucket medians, as HdrHistogram computes it
 * @property {number|null} stddev
 * @property {number|null} p50
 * @property {number|null} p90
 * @property {number|null} p99
 * @property {number|null} p99_9
 * @property {number|null} p99_99
 * @property {number|null} max highest equivalent value of the top bucket: what a decoded copy and
 *   Java's getMaxValue report (the library's maxValue keeps the raw value, latency-notes §1.4)
 */

/**
 * Summarizes a histogram of nanoseconds in a unit. Percentiles come from getValueAtPercentile
 * (highest equivalent value of the bucket), never from the library's `summary`, which truncates
 * them to 3 significant digits (latency-notes §1.4). Everything is read from the buckets, so
 * summarize(decodeHistogram(encodeHistogram(h))) deep-equals summarize(h).
 *
 * An empty histogram gives count 0 and null for every statistic (0 ms would be a false
 * measurement; the library's minNonZeroValue would be 2^53 - 1).
 *
 * @param {import('hdr-histogram-js').Histogram} h values in ns, nines' configuration
 * @param {{unitNs?: number}} [options] unitNs: ns per output unit, default 1e6 (milliseconds)
 * @returns {Stats} values in the unit, as plain numbers (not rounded)
 */
function summarize (h, options = {}) {
  checkHistogram(h, 'h');
  plainObject(options, 'options');
  const unitNs = options.unitNs === undefined ? 1e6 : positive(options.unitNs, 'options.unitNs');
  const count = h.totalCount;
  const out = { count };
  if (count === 0) {
    for (const name of STAT_FIELDS.slice(1)) out[name] = null;
    return /** @type {Stats} */ (out);
  }
  if (h instanceof PagedHistogram) {
    // the same values in three scans instead of nine (paged-histogram.js)
    const { mean, stddev } = h.meanAndStdDeviation();
    const v = h.valuesAtPercentiles(SUMMARY_PERCENTILES);
    out.min = v[0] / unitNs;
    out.mean = mean / unitNs;
    out.stddev = stddev / unitNs;
    let i = 1;
    for (const name of Object.keys(PERCENTILES)) out[name] = v[i++] / unitNs;
    out.max = v[i] / unitNs;
    return /** @type {Stats} */ (out);
  }
  const mean = h.mean;
  out.min = h.getValueAtPercentile(0) / unitNs;
  out.mean = mean / unitNs;
  out.stddev = h.getStdDeviation(mean) / unitNs;
  for (const [name, p] of Object.entries(PERCENTILES)) out[name] = h.getValueAtPercentile(p) / unitNs;
  out.max = h.getValueAtPercentile(100) / unitNs;
  return /** @type {Stats} */ (out);
}

/**
 * @param {unknown} op
 * @param {string} field
 * @returns {string|object}
 */
function checkOp (op, field) {
  if (typeof op === 'string' && op.length > 0) return op;
  if (op !== null && typeof op === 'object' && !Array.isArray(op)) return op;
  throw invalid(field, op, 'a non-empty string (ASCII command) or an object (Modbus operation)');
}

/**
 * Builds the `nines/<gateway>/<job>/latency` payload (design.md) for one snapshot.
 *
 * - start, end: epoch milliseconds as numbers (not ISO strings: cheaper, exact, and what
 *   Date and the .hlog StartTime arithmetic use).
 * - rate: achieved requests per second over the interval, (ok + errors + timeouts) / seconds;
 *   skipped slots were never sent. null for a zero-length interval.
 * - clamped / invalid: present only when non-zero.
 * - top-level statistics: response time; service and lag: the same statistics plus their count.
 * - hist: the response-time histogram (ns) as V2 compressed base64.
 *
 * @param {import('./snapshot').Snapshot & {summaries?: {response?: object, service?: object, lag?: object},
 *   encoded?: {response?: string}}} snapshot summaries and encoded: summarize()'s and
 *   encodeHistogram()'s results for its histograms when already made
 * @param {{gateway: string, job: string, target: string, op: string|object}} meta
 * @returns {object} plain JSON-safe object, unit "ms"
 */
function latencyPayload (snapshot, meta) {
  const snap = checkSnapshot(snapshot);
  plainObject(meta, 'meta');
  const seconds = (snap.endMs - snap.startMs) / 1000;
  const sent = snap.ok + snap.errors + snap.timeouts;
  // statistics and encodings made beforehand (the worker makes them in pieces, workers/host.js)
  const made = snapshot.summaries || {};
  const response = made.response || summarize(snap.response);
  const payload = {
    v: 1,
    gateway: nonEmptyString(meta.gateway, 'meta.gateway'),
    job: nonEmptyString(meta.job, 'meta.job'),
    target: nonEmptyString(meta.target, 'meta.target'),
    op: checkOp(meta.op, 'meta.op'),
    seq: snap.seq,
    start: snap.startMs,
    end: snap.endMs,
    policy: snap.policy,
    count: snap.count,
    ok: snap.ok,
    errors: snap.errors,
    timeouts: snap.timeouts,
    skipped: snap.skipped
  };
  if (snap.clamped > 0) payload.clamped = snap.clamped;
  if (snap.invalid > 0) payload.invalid = snap.invalid;
  payload.rate = seconds > 0 ? sent / seconds : null;
  payload.unit = 'ms';
  for (const name of STAT_FIELDS.slice(1)) payload[name] = response[name];
  payload.service = made.service || summarize(snap.service);
  payload.lag = made.lag || summarize(snap.lag);
  payload.hist = snapshot.encoded && typeof snapshot.encoded.response === 'string' ? snapshot.encoded.response : encodeHistogram(snap.response);
  return payload;
}

/**
 * @param {unknown} stats
 * @param {string} field
 * @param {boolean} withCount
 * @returns {object}
 */
function checkStats (stats, field, withCount) {
  plainObject(stats, field);
  const out = {};
  if (withCount) out.count = nonNegInt(stats.count, `${field}.count`);
  for (const name of STAT_FIELDS.slice(1)) {
    const value = stats[name];
    if (value !== null && (typeof value !== 'number' || !Number.isFinite(value) || value < 0)) {
      throw invalid(`${field}.${name}`, value, 'null or a finite number >= 0 (ms)');
    }
    out[name] = value;
  }
  return out;
}

/**
 * Checks a latency payload received by a subscriber and decodes its histogram.
 * @param {object|string|Uint8Array} input the parsed object, or its JSON text / UTF-8 bytes
 * @param {{maxChars?: number}} [options] cap for `hist`, passed to decodeHistogram
 * @returns {object} the payload's fields (clamped and invalid default to 0) plus `histogram`, the
 *   decoded response-time histogram in ns, ready for mergeInto
 * @throws {NinesError} NINES_ERR_INVALID_ARG for a bad field or bad JSON, NINES_ERR_BAD_HISTOGRAM
 *   for a bad `hist`
 */
function parseLatencyPayload (input, options = {}) {
  let obj = input;
  if (input instanceof Uint8Array) {
    // checked before decoding: a huge buffer must not become a huge string first
    if (input.byteLength > MAX_PAYLOAD_CHARS) throw invalid('payload', `${input.byteLength} bytes`, `at most ${MAX_PAYLOAD_CHARS} bytes of JSON`);
    obj = Buffer.from(input.buffer, input.byteOffset, input.byteLength).toString('utf8');
  }
  if (typeof obj === 'string') {
    if (obj.length > MAX_PAYLOAD_CHARS) throw invalid('payload', `${obj.length} chars`, `at most ${MAX_PAYLOAD_CHARS} chars of JSON`);
    try {
      obj = JSON.parse(obj);
    } catch (err) {
      throw invalid('payload', obj, `JSON (${err.message})`);
    }
  }
  plainObject(obj, 'payload');
  if (obj.v !== 1) throw invalid('payload.v', obj.v, '1');
  if (obj.unit !== 'ms') throw invalid('payload.unit', obj.unit, '"ms"');
  const out = {
    v: 1,
    gateway: nonEmptyString(obj.gateway, 'payload.gateway'),
    job: nonEmptyString(obj.job, 'payload.job'),
    target: nonEmptyString(obj.target, 'payload.target'),
    op: checkOp(obj.op, 'payload.op'),
    seq: nonNegInt(obj.seq, 'payload.seq'),
    start: finite(obj.start, 'payload.start'),
    end: finite(obj.end, 'payload.end'),
    policy: checkPolicy(obj.policy, 'payload.policy', true)
  };
  if (out.end < out.start) throw invalid('payload.end', out.end, `>= start (${out.start})`);
  for (const name of ['count', 'ok', 'errors', 'timeouts', 'skipped']) out[name] = nonNegInt(obj[name], `payload.${name}`);
  for (const name of ['clamped', 'invalid']) out[name] = obj[name] === undefined ? 0 : nonNegInt(obj[name], `payload.${name}`);
  const sum = out.ok + out.errors + out.timeouts + out.skipped;
  if (out.count !== sum) throw invalid('payload.count', out.count, `ok + errors + timeouts + skipped (${sum})`);
  if (obj.rate !== null && (typeof obj.rate !== 'number' || !Number.isFinite(obj.rate) || obj.rate < 0)) {
    throw invalid('payload.rate', obj.rate, 'null or a finite number >= 0 (requests/s)');
  }
  out.rate = obj.rate;
  out.unit = 'ms';
  Object.assign(out, checkStats(obj, 'payload', false));
  out.service = checkStats(obj.service, 'payload.service', true);
  out.lag = checkStats(obj.lag, 'payload.lag', true);
  for (const name of ['service', 'lag']) {
    if (out[name].count > out.count) throw invalid(`payload.${name}.count`, out[name].count, `at most count (${out.count})`);
  }
  out.hist = obj.hist;
  out.histogram = decodeHistogram(obj.hist, options);
  if (out.histogram.totalCount > out.count) {
    throw invalid('payload.hist', `${out.histogram.totalCount} samples`, `a histogram of at most count (${out.count}) samples`);
  }
  return out;
}

module.exports = { summarize, latencyPayload, parseLatencyPayload, STAT_FIELDS, MAX_PAYLOAD_CHARS };
