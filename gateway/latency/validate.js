'use strict';

/**
 * Boundary checks shared by the latency modules. Every failure is a NinesError whose message names
 * the field, the value and the rule ("seq must be an integer >= 0; got -1").
 */

const { NinesError } = require('../base/errors');

/**
 * Shows a value in an error message without dumping a whole object or a 256 KB string.
 * @param {unknown} value
 * @returns {string}
 */
function show (value) {
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'string') {
    return value.length > 60 ? `${JSON.stringify(value.slice(0, 60))}… (${value.length} chars)` : JSON.stringify(value);
  }
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value);
  if (value === null || value === undefined || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'function') return 'a function';
  return 'an object';
}

/**
 * Builds the error for a field that broke its rule.
 * @param {string} field dotted path of the field, e.g. "meta.gateway"
 * @param {unknown} value the value received
 * @param {string} rule what the value must be, e.g. "an integer >= 0"
 * @param {string} [code] defaults to NINES_ERR_INVALID_ARG
 * @returns {NinesError}
 */
function invalid (field, value, rule, code = 'NINES_ERR_INVALID_ARG') {
  const details = { field };
  if (value === null || ['number', 'boolean'].includes(typeof value)) details.value = value;
  else if (typeof value === 'string') details.value = value.slice(0, 200);
  else if (typeof value === 'bigint') details.value = String(value);
  return new NinesError(code, `${field} must be ${rule}; got ${show(value)}`, details);
}

/**
 * @param {unknown} value
 * @param {string} field
 * @returns {number} the value, an integer >= 0 and <= 2^53 - 1
 */
function nonNegInt (value, field) {
  if (!Number.isSafeInteger(value) || value < 0) throw invalid(field, value, 'an integer >= 0');
  return value;
}

/**
 * @param {unknown} value
 * @param {string} field
 * @returns {number} the value, finite and > 0
 */
function positive (value, field) {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw invalid(field, value, 'a finite number > 0');
  }
  return value;
}

/**
 * @param {unknown} value
 * @param {string} field
 * @returns {number} the value, a finite number (epoch milliseconds and the like)
 */
function finite (value, field) {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(field, value, 'a finite number');
  return value;
}

/**
 * @param {unknown} value
 * @param {string} field
 * @returns {string} the value, a non-empty string
 */
function nonEmptyString (value, field) {
  if (typeof value !== 'string' || value.length === 0) throw invalid(field, value, 'a non-empty string');
  return value;
}

/**
 * @param {unknown} value
 * @param {string} field
 * @returns {object} the value, a plain (non-array, non-null) object
 */
function plainObject (value, field) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalid(field, value, 'an object');
  return /** @type {object} */ (value);
}

module.exports = { show, invalid, nonNegInt, positive, finite, nonEmptyString, plainObject };
