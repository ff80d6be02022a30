'use strict';

/**
 * Payloads the publisher builds itself: the gateway status and the error digests. Latency and
 * value payloads are built by the runtime; the publisher only carries them.
 */

/**
 * @typedef {object} StatusInfo
 * @property {string} gateway
 * @property {string} version package version
 * @property {string} started ISO time the publisher started
 * @property {string[]} jobs job names
 * @property {number} reconnects successful connections after the first
 * @property {{total: number, jobs: Record<string, number>}} dropped latency messages dropped so far
 * @property {{total: number, jobs: Record<string, number>}} [droppedValues] value messages dropped so far
 * @property {object} [spool] the disk spool's state (records and bytes waiting, write errors)
 */

/**
 * `<prefix>/<gateway>/status`, retained. Online carries the dropped counts, so a subscriber that
 * sees a gap in a job's `seq` can tell that the buffer overflowed during an outage.
 * @param {'online'|'offline'} state
 * @param {StatusInfo} info
 * @param {object} [extra] e.g. {connected: iso} or {reason: 'stopped', stopped: iso}
 * @returns {Buffer} JSON, UTF-8
 */
function statusPayload (state, info, extra = {}) {
  return Buffer.from(JSON.stringify({
    state,
    gateway: info.gateway,
    version: info.version,
    started: info.started,
    jobs: info.jobs,
    ...(info.devices ? { devices: info.devices } : {}),
    ...extra,
    reconnects: info.reconnects,
    dropped: info.dropped,
    ...(info.droppedValues ? { droppedValues: info.droppedValues } : {}),
    ...(info.writes ? { writes: info.writes } : {}),
    ...(info.spool ? { spool: info.spool } : {})
  }));
}

/**
 * @typedef {object} ErrorDigest
 * @property {{code: string|null, message: string, details?: object}} latest the newest error
 * @property {number} count errors this digest stands for
 * @property {Record<string, number>} codes count per code
 * @property {number} firstAt epoch ms of the oldest error in the digest
 * @property {number} lastAt epoch ms of the newest
 */

/**
 * One error as a digest of one.
 * @param {*} err an Error (NinesError or other), or a {code, message} object, or a string
 * @param {number} [atMs=Date.now()]
 * @returns {ErrorDigest}
 */
function errorDigest (err, atMs = Date.now()) {
  const e = /** @type {any} */ (err);
  const code = e && typeof e.code === 'string' ? e.code : null;
  const latest = { code, message: e && typeof e.message === 'string' ? e.message : String(err) };
  if (e && e.details !== undefined) latest.details = e.details;
  // a job's report at the end of its interval stands for `repeated` errors of one code (jobs/job.js
  // flushErrors): count them all (issue 21: `count` said 1 where 152 requests had failed)
  const n = e && e.details && Number.isInteger(e.details.repeated) && e.details.repeated > 0 ? e.details.repeated : 1;
  return { latest, count: n, codes: { [code || 'unknown']: n }, firstAt: atMs, lastAt: atMs };
}

/**
 * Folds digest b (newer) into a (older).
 * @param {ErrorDigest} a
 * @param {ErrorDigest} b
 * @returns {ErrorDigest}
 */
function mergeDigests (a, b) {
  const codes = { ...a.codes };
  for (const [k, n] of Object.entries(b.codes)) codes[k] = (codes[k] || 0) + n;
  return {
    latest: b.lastAt >= a.lastAt ? b.latest : a.latest,
    count: a.count + b.count,
    codes,
    firstAt: Math.min(a.firstAt, b.firstAt),
    lastAt: Math.max(a.lastAt, b.lastAt)
  };
}

/**
 * `<prefix>/<gateway>/<job>/error`: the newest error, plus how many it stands for.
 *   {"v":1,"gateway","job","time","code","message","details"?,"count","suppressed","codes","since"}
 * `count` errors happened since the previous error message of this job (this one included);
 * `suppressed` = count - 1 were not published on their own; `codes` counts them by code.
 * @param {string} gateway
 * @param {string} job
 * @param {ErrorDigest} d
 * @returns {Buffer}
 */
function errorPayload (gateway, job, d) {
  return Buffer.from(JSON.stringify({
    v: 1,
    gateway,
    job,
    time: new Date(d.lastAt).toISOString(),
    ...d.latest,
    count: d.count,
    suppressed: d.count - 1,
    codes: d.codes,
    since: new Date(d.firstAt).toISOString()
  }));
}

/**
 * Encodes a payload handed over by the runtime: objects as JSON, strings as UTF-8. A 64-bit tag
 * value beyond ±2^53 (a BigInt) goes as its decimal text: a JSON number that large would reach
 * most readers (JavaScript among them) with its last digits changed.
 * @param {object|string|Buffer} payload
 * @returns {Buffer}
 */
function encode (payload) {
  if (Buffer.isBuffer(payload)) return payload;
  if (typeof payload === 'string') return Buffer.from(payload);
  return Buffer.from(JSON.stringify(payload, bigintAsText));
}

function bigintAsText (key, value) {
  return typeof value === 'bigint' ? value.toString() : value;
}

module.exports = { statusPayload, errorDigest, mergeDigests, errorPayload, encode };
