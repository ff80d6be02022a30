'use strict';

/**
 * Option checks for the Modbus simulators. Each failure is a NinesError NINES_ERR_INVALID_ARG whose message names
 * the field, the value and the rule, so a bad `nines sim` flag or config never crashes later inside a socket handler.
 */

const { NinesError } = require('../../base/errors');

/**
 * @param {string} field
 * @param {unknown} value
 * @param {string} rule what the value must be, e.g. "an integer from 0 to 65535"
 * @returns {never}
 */
function invalid (field, value, rule) {
  let shown;
  try {
    shown = typeof value === 'string' ? JSON.stringify(value) : String(value);
  } catch {
    shown = typeof value;
  }
  throw new NinesError('NINES_ERR_INVALID_ARG', `${field} must be ${rule}; got ${shown}`, { field, value: shown });
}

/**
 * An integer in [lo, hi], or the default when undefined.
 * @param {unknown} value
 * @param {string} field
 * @param {number} lo
 * @param {number} hi
 * @param {number} [dflt]
 * @returns {number}
 */
function intOption (value, field, lo, hi, dflt) {
  if (value === undefined && dflt !== undefined) return dflt;
  if (!Number.isInteger(value) || value < lo || value > hi) invalid(field, value, `an integer from ${lo} to ${hi}`);
  return /** @type {number} */ (value);
}

/**
 * One of a fixed set of values, or the default when undefined.
 * @template T
 * @param {unknown} value
 * @param {string} field
 * @param {readonly T[]} allowed
 * @param {T} [dflt]
 * @returns {T}
 */
function oneOf (value, field, allowed, dflt) {
  if (value === undefined && dflt !== undefined) return dflt;
  if (!allowed.includes(/** @type {T} */ (value))) invalid(field, value, `one of ${allowed.join(', ')}`);
  return /** @type {T} */ (value);
}

/**
 * A non-empty string, or the default when undefined.
 * @param {unknown} value
 * @param {string} field
 * @param {string} [dflt]
 * @returns {string}
 */
function stringOption (value, field, dflt) {
  if (value === undefined && dflt !== undefined) return dflt;
  if (typeof value !== 'string' || value.length === 0) invalid(field, value, 'a non-empty string');
  return /** @type {string} */ (value);
}

/**
 * A plain options object (undefined → {}).
 * @param {unknown} value
 * @param {string} field
 * @returns {Record<string, any>}
 */
function objectOption (value, field) {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) invalid(field, value, 'an object');
  return /** @type {Record<string, any>} */ (value);
}

/**
 * Rejects keys an options object does not know, so a typo ("maxConnection") is an error, not a silent default.
 * @param {Record<string, any>} opts
 * @param {string} field name of the options object
 * @param {readonly string[]} known
 */
function noUnknownKeys (opts, field, known) {
  for (const key of Object.keys(opts)) {
    if (!known.includes(key)) invalid(`${field}.${key}`, opts[key], `absent: known options are ${known.join(', ')}`);
  }
}

module.exports = { invalid, intOption, oneOf, stringOption, objectOption, noUnknownKeys };
