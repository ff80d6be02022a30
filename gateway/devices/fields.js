'use strict';

/**
 * Readers of one field of a device spec, shared by the device (spec.js) and the units of a line
 * (line.js). Each checks against the limits of limits.js and throws NINES_ERR_INVALID_ARG with
 * details {field, value, rule}: an edge (YAML, Node-RED) names its own field from `field` and states
 * `rule` as it is, so every edge refuses a value with the same rule and limit.
 */

const { NinesError } = require('../base/errors');
const { readDuration } = require('../base/duration-field');
const { intIn: checkInt } = require('../base/arg-checks');
const L = require('./limits');
const C = require('../base/constants');
const { tlsAsText } = require('../drivers/tls-options');

const ORDERS = Object.freeze(['ABCD', 'CDAB', 'BADC', 'DCBA']);
const BACKOFF_KEYS = Object.freeze(['initialMs', 'maxMs']);

/** A device's durations (timeouts, backoff): whole ms from 1 ms to the one ceiling of limits.js */
const DURATION_BOUNDS = Object.freeze({ lo: 1, hi: L.MAX_DURATION_MS });

/**
 * A duration: a whole number of ms, or a string such as "500ms", from lo to hi ms, read by the one
 * duration reader (base/duration-field.js) as the drivers read theirs.
 * @param {unknown} v @param {string} field @param {number|undefined} dflt when v is undefined
 * @param {number} [lo=DURATION_BOUNDS.lo] @param {number} [hi=DURATION_BOUNDS.hi]
 * @returns {number} ms
 */
function ms (v, field, dflt, lo = DURATION_BOUNDS.lo, hi = DURATION_BOUNDS.hi) {
  if (v === undefined) return dflt;
  return readDuration(v, field, { lo, hi }, invalid);
}

/** An integer in [lo, hi] (base/arg-checks.js), else dflt when undefined. */
function intIn (v, field, lo, hi, dflt) {
  return v === undefined ? dflt : checkInt(v, field, lo, hi, invalid);
}

/**
 * Reconnect (or re-probe) delays, capped exponential: the one check that max is at least min.
 * @param {unknown} raw {initialMs?, maxMs?} (durations as ms() reads them)
 * @param {string} field where it sits ('backoff', 'units[2].backoff')
 * @param {{initialMs: number, maxMs: number}} dflt
 * @returns {{initialMs: number, maxMs: number}}
 */
function backoff (raw, field, dflt) {
  if (raw === undefined) return { initialMs: dflt.initialMs, maxMs: dflt.maxMs };
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw invalid(field, raw, 'must be an object {initialMs, maxMs}');
  for (const key of Object.keys(raw)) {
    if (!BACKOFF_KEYS.includes(key) && raw[key] !== undefined) throw invalid(`${field}.${key}`, raw[key], 'is not a backoff option (known: initialMs, maxMs)');
  }
  const initialMs = ms(raw.initialMs, `${field}.initialMs`, dflt.initialMs);
  // only initialMs given and above the default cap: the cap follows it rather than failing
  const maxMs = ms(raw.maxMs, `${field}.maxMs`, Math.max(initialMs, dflt.maxMs));
  if (maxMs < initialMs) throw invalid(`${field}.maxMs`, raw.maxMs, `must be at least ${field}.initialMs (${initialMs} ms)`, { bound: `${field}.initialMs` });
  return { initialMs, maxMs };
}

/** A line quirk delay: whole ms from 0 to L.MAX_QUIRK_DELAY_MS (or a duration such as "5ms"). */
function delay (v, field) {
  return ms(v, field, 0, 0, L.MAX_QUIRK_DELAY_MS);
}

/** @returns {0|1} */
function addressBase (v, field, dflt) {
  if (v === undefined) return dflt;
  if (v !== 0 && v !== 1) throw invalid(field, v, 'must be 0 (protocol addresses) or 1 (data sheets that count registers from 1)');
  return v;
}

/** @returns {string} a word and byte order */
function order (v, field, dflt) {
  if (v === undefined) return dflt;
  if (!ORDERS.includes(v)) throw invalid(field, v, `must be one of ${ORDERS.join(', ')}`);
  return v;
}

/** @returns {number[]} the write function codes a device lacks, sorted; FC5 and FC15 (or FC6 and FC16) not both */
function functionCodes (raw, field) {
  if (raw === undefined) return [];
  if (!Array.isArray(raw) || raw.some((fc) => !C.MODBUS_LACKABLE_WRITE_FCS.includes(fc))) {
    throw invalid(field, raw, `must be a list of the write function codes the device lacks: ${C.MODBUS_LACKABLE_WRITE_FCS.join(', ')}`);
  }
  const list = [...new Set(raw)].sort((a, b) => a - b);
  // each write needs one of a pair: FC5 or FC15 for coils, FC6 or FC16 for registers
  if (list.includes(5) && list.includes(15)) throw invalid(field, raw, 'cannot hold both 5 and 15: coils could not be written at all');
  if (list.includes(6) && list.includes(16)) throw invalid(field, raw, 'cannot hold both 6 and 16: registers could not be written at all');
  return list;
}

/**
 * The TLS material of a modbus+tls device (Modbus/TCP Security): PEM texts, checked by the driver's own
 * checker (drivers/tls-options.js: PEM, cert and key together and matching, no switch to skip
 * verification), kept as strings: a spec crosses to worker threads, a secure context cannot.
 * @param {unknown} v {ca?, cert?, key?, servername?} (strings or Buffers of PEM) or undefined
 * @param {string} field
 * @param {{protocol: string}} target the device's, parsed
 * @returns {{ca?: string, cert?: string, key?: string, servername?: string}|null} null: none given
 */
function tls (v, field, target) {
  if (v === undefined || v === null) return null;
  if (target.protocol !== 'modbus+tls') throw invalid(field, '<tls>', `applies to modbus+tls:// devices only (Modbus/TCP Security); the target is ${target.protocol}://`);
  try {
    return tlsAsText(v, field);
  } catch (err) {
    const d = /** @type {any} */ (err).details;
    throw invalid(d.field, d.value, d.rule);
  }
}

/**
 * The refusal of a field of the device spec: "device <field> <rule>; got <value>".
 * @param {string} field the spec's field ('timeoutMs', 'units[2].unitId')
 * @param {unknown} value
 * @param {string} rule what a valid value is
 * @param {object} [extra] more details
 * @returns {NinesError} NINES_ERR_INVALID_ARG
 */
function invalid (field, value, rule, extra) {
  return refusal(`device ${field}`, field, value, rule, extra);
}

/**
 * The refusal of a field that names a part of the device from outside its spec (a job's `unit`):
 * worded as invalid() is, without "device", for the field is not the device's.
 * @param {string} field @param {unknown} value @param {string} rule
 * @returns {NinesError} NINES_ERR_INVALID_ARG
 */
function invalidRef (field, value, rule) {
  return refusal(field, field, value, rule);
}

/** @returns {NinesError} NINES_ERR_INVALID_ARG "<subject> <rule>; got <value>" with details {field, value, rule} */
function refusal (subject, field, value, rule, extra) {
  return new NinesError('NINES_ERR_INVALID_ARG', `${subject} ${rule}; got ${show(value)}`, { field, value, rule, ...extra });
}

/** @returns {string} the value as the message shows it (never throws: BigInt and cycles are possible input) */
function show (value) {
  if (value === undefined) return 'nothing';
  try { return JSON.stringify(value) ?? String(value); } catch { return String(value); }
}

module.exports = { ms, intIn, DURATION_BOUNDS, backoff, delay, addressBase, order, functionCodes, tls, invalid, invalidRef, ORDERS };
