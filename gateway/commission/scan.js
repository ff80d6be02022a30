'use strict';

/**
 * `nines scan`'s work, without the command line: find the units on a line (discover.js), identify
 * each (identify.js) and map what each answers per table (map-probe.js). One client, one request at a
 * time, so a serial line's discipline holds; nothing is written (only FC1-4 reads and FC43).
 *
 * Checked at the edge: the unit ids, the timeout, the address range, the steps and the budgets, each
 * a NINES_ERR_INVALID_ARG naming its field.
 */

const D = require('./defaults');
const { NinesError } = require('../base/errors');
const { invalidArg, intIn } = require('../base/arg-checks');
const { readDuration } = require('../base/duration-field');
const C = require('../base/constants');
const { parseTarget, isMbap } = require('../drivers/target');
const { discover, discoveryBoundMs } = require('./discover');
const { identify } = require('./identify');
const { mapTable } = require('./map-probe');
const { validateOp } = require('../drivers/modbus/op');

/** The four tables, in the order they are mapped: name, read function code, largest read */
const TABLES = Object.freeze([
  { table: 'coil', fc: 1, max: C.MODBUS_MAX_READ_BITS },
  { table: 'discrete', fc: 2, max: C.MODBUS_MAX_READ_BITS },
  { table: 'input', fc: 4, max: C.MODBUS_MAX_READ_REGISTERS },
  { table: 'holding', fc: 3, max: C.MODBUS_MAX_READ_REGISTERS }
]);

/**
 * Unit ids from "1-247", "3,17,200" or "1-10,20".
 * @param {string} text
 * @param {string} [field='units']
 * @returns {number[]} ascending, without repeats
 * @throws {NinesError} NINES_ERR_INVALID_ARG for a malformed list or an id outside 0-247
 */
function parseUnitRange (text, field = 'units') {
  const ids = new Set();
  const rule = `must be unit ids from 0 to ${D.SCAN_MAX_UNIT}, one, a range or a list such as 1-247 or 3,17,200`;
  if (typeof text !== 'string' || text.trim() === '') throw invalidArg(field, text, rule);
  for (const part of text.split(',').map((p) => p.trim())) {
    const m = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(part);
    if (!m) throw invalidArg(field, text, rule);
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (lo > D.SCAN_MAX_UNIT || hi > D.SCAN_MAX_UNIT || hi < lo) throw invalidArg(field, text, `${rule} (${part} is not)`);
    for (let id = lo; id <= hi; id++) ids.add(id);
  }
  return [...ids].sort((a, b) => a - b);
}

/**
 * @typedef {object} ScanOptions
 * @property {number[]} [units] unit ids to ask (default 1-247)
 * @property {number|string} [timeoutMs=50] per request: ms, or a duration such as "50ms" (up to defaults.js SCAN_MAX_TIMEOUT_MS)
 * @property {number|string} [quietMs] RTU: the line's quiet period after a timeout (default: timeoutMs)
 * @property {[number, number]} [addresses=[0, 9999]] per table
 * @property {readonly number[]} [steps] probe steps across holes (defaults.js SCAN_STEPS)
 * @property {number} [requestsPerUnit=1000] the map budget of one unit
 * @property {number|string} [maxDurationMs=600000] hard cap on the whole scan
 * @property {boolean} [map=true] false: find and identify only
 * @property {object} [clientOptions] more options for the client (tests: silenceUs)
 * @property {(event: {kind: string, [k: string]: any}) => void} [onProgress]
 */

/**
 * Checks scan options once, at the edge.
 * @param {ScanOptions} [opts]
 * @returns {Required<Omit<ScanOptions, 'onProgress'|'clientOptions'|'quietMs'>> & {quietMs: number, onProgress: Function, clientOptions: object}}
 */
function normalizeScanOptions (opts = {}) {
  const o = { ...opts };
  // durations by the one reader (a number of ms, or "50ms"), each limit in defaults.js
  const duration = (field, v, lo, hi, dflt) => (v === undefined ? dflt : readDuration(v, field, { lo, hi }));
  const units = o.units === undefined ? range(D.SCAN_FIRST_UNIT, D.SCAN_LAST_UNIT) : o.units;
  if (!Array.isArray(units) || units.length === 0 || !units.every((u) => Number.isInteger(u) && u >= 0 && u <= D.SCAN_MAX_UNIT)) {
    throw invalidArg('units', units, `must be unit ids from 0 to ${D.SCAN_MAX_UNIT}`);
  }
  const timeoutMs = duration('timeout', o.timeoutMs, 1, D.SCAN_MAX_TIMEOUT_MS, D.SCAN_TIMEOUT_MS);
  const quietMs = duration('quiet', o.quietMs, 0, D.SCAN_MAX_TIMEOUT_MS, timeoutMs);
  const addresses = o.addresses === undefined ? [0, D.SCAN_LAST_ADDRESS] : o.addresses;
  if (!Array.isArray(addresses) || addresses.length !== 2 || !addresses.every((a) => Number.isInteger(a) && a >= 0 && a <= 65535) || addresses[0] > addresses[1]) {
    throw invalidArg('addresses', addresses, 'must be a range first-last of addresses from 0 to 65535');
  }
  const steps = o.steps === undefined ? D.SCAN_STEPS : o.steps;
  if (!Array.isArray(steps) || steps.length === 0 || steps[0] !== 1 || !steps.every((s, i) => Number.isInteger(s) && s >= 1 && (i === 0 || s > steps[i - 1]))) {
    throw invalidArg('steps', steps, 'must be rising whole numbers starting at 1, such as 1,2,5,10,20,50,100');
  }
  return {
    units: [...new Set(units)].sort((a, b) => a - b),
    timeoutMs,
    quietMs,
    addresses: /** @type {[number, number]} */ (addresses),
    steps,
    requestsPerUnit: o.requestsPerUnit === undefined ? D.SCAN_REQUESTS_PER_UNIT : intIn(o.requestsPerUnit, 'budget', 1, D.SCAN_MAX_REQUESTS_PER_UNIT),
    maxDurationMs: duration('maxDuration', o.maxDurationMs, 1, D.SCAN_MAX_DURATION_LIMIT_MS, D.SCAN_MAX_DURATION_MS),
    map: o.map !== false,
    clientOptions: o.clientOptions || {},
    onProgress: o.onProgress || (() => {})
  };
}

/**
 * A target's URL without its unit id: a scan is of the line, and its units carry their own ids.
 * @param {string} url @returns {string}
 */
function lineUrl (url) {
  return url.replace(/([?&])unitId=\d+(&|$)/, (m, before, after) => (after === '&' ? before : '')).replace(/\?$/, '');
}

/** @returns {number[]} lo..hi */
function range (lo, hi) {
  return Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);
}

/**
 * @typedef {object} UnitReport
 * @property {number} unitId
 * @property {number} [probeException] the exception it answered the probe with, if any
 * @property {import('./identify').Identity} identity
 * @property {Record<string, import('./map-probe').TableMap>} [map] table → what it answers
 * @property {number} requests map requests
 */

/**
 * @typedef {object} ScanReport
 * @property {string} target
 * @property {UnitReport[]} units
 * @property {import('./discover').Discovery} discovery
 * @property {number} elapsedMs
 * @property {number} requests every request the scan sent
 * @property {boolean} cutShort the hard cap (maxDurationMs) ended it
 */

/**
 * Scans a line.
 * @param {string|object} target modbus+tcp://, modbus+rtu:// or modbus+rtutcp://
 * @param {ScanOptions} [opts]
 * @returns {Promise<ScanReport>}
 * @throws {NinesError} NINES_ERR_INVALID_ARG / NINES_ERR_INVALID_TARGET for bad input; the client's
 *   errors when the line itself fails (NINES_ERR_CONNECT_FAILED, NINES_ERR_NOT_CONNECTED…)
 */
async function scanLine (target, opts) {
  const o = normalizeScanOptions(opts);
  const t = parseTarget(target);
  if (!t.protocol.startsWith('modbus')) throw new NinesError('NINES_ERR_INVALID_TARGET', `nines scan takes a modbus+tcp://, modbus+rtu:// or modbus+rtutcp:// target; got ${t.protocol}://`, { target: t.url });
  const serial = !isMbap(t);
  if (serial && o.units.includes(0)) throw invalidArg('units', 0, 'must not hold 0 on a serial line, where unit 0 is broadcast (no unit answers it)');
  const { createClient } = require('../drivers/modbus');
  const client = createClient(t, { timeoutMs: o.timeoutMs, quietMs: o.quietMs, ...o.clientOptions });
  const t0 = performance.now();
  const deadline = t0 + o.maxDurationMs;
  /** @type {ScanReport} */
  const report = { target: lineUrl(t.url), units: [], discovery: /** @type {any} */ (null), elapsedMs: 0, requests: 0, cutShort: false };
  try {
    await client.connect();
    o.onProgress({ kind: 'start', units: o.units.length, boundMs: discoveryBoundMs(o.units.length, o), timeoutMs: o.timeoutMs, quietMs: o.quietMs, serial });
    report.discovery = await discover(client, o.units, { timeoutMs: o.timeoutMs, quietMs: o.quietMs, serial, onUnit: (id, found) => { if (found) o.onProgress({ kind: 'unit', unitId: id }); } });
    report.requests += report.discovery.requests;
    for (const unitId of report.discovery.found) {
      if (performance.now() > deadline) { report.cutShort = true; break; }
      const identity = await identify({ request: (op, ro) => again(() => client.request(op, ro)) }, unitId, o.timeoutMs);
      report.requests += identity.requests;
      /** @type {UnitReport} */
      const u = { unitId, identity, requests: 0 };
      if (report.discovery.exceptions[unitId] !== undefined) u.probeException = report.discovery.exceptions[unitId];
      if (o.map) {
        u.map = await mapUnit(client, unitId, o, deadline);
        u.requests = Object.values(u.map).reduce((n, m) => n + m.requests, 0);
        report.requests += u.requests;
        if (Object.values(u.map).some((m) => m.error === 'deadline')) report.cutShort = true;
      }
      report.units.push(u);
      o.onProgress({ kind: 'mapped', unit: u });
    }
  } finally {
    await client.close();
  }
  report.elapsedMs = performance.now() - t0;
  return report;
}

/**
 * A request to a unit known to be there, asked again after a timeout (a busy unit, a loaded host)
 * or when the line was still held quiet: at most D.SCAN_ATTEMPTS in all.
 * @template T
 * @param {() => Promise<T>} ask
 * @returns {Promise<T>}
 */
async function again (ask) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await ask();
    } catch (err) {
      if (err.code !== 'NINES_ERR_REPLY_TIMEOUT' || attempt >= D.SCAN_ATTEMPTS) throw err;
    }
  }
}

/**
 * The map of one unit, table by table, within its budget and the scan's deadline.
 * @returns {Promise<Record<string, import('./map-probe').TableMap>>}
 */
async function mapUnit (client, unitId, o, deadline) {
  const out = {};
  let left = o.requestsPerUnit;
  for (const { table, fc, max } of TABLES) {
    const read = (address, quantity) => {
      if (performance.now() > deadline) return Promise.reject(Object.assign(new Error('the scan reached its hard cap'), { code: 'deadline' }));
      return again(() => client.request(validateOp({ fc, address, quantity, unitId }), { timeoutMs: o.timeoutMs }));
    };
    const m = await mapTable(read, { first: o.addresses[0], last: o.addresses[1], maxPerRequest: max, steps: o.steps, budget: left });
    left -= m.requests;
    out[table] = m;
    // a unit that stopped answering, or a scan out of time: the other tables would fare no better
    if (m.error === 'NINES_ERR_REPLY_TIMEOUT' || m.error === 'deadline') break;
  }
  return out;
}

module.exports = { scanLine, normalizeScanOptions, parseUnitRange, lineUrl, TABLES };
