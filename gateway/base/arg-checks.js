'use strict';

/**
 * The plainest field readers, shared by the edges that take options from code, flows and command
 * lines (a driver's options, a scan's, a duration anywhere): the refusal they build, and a bounded
 * integer. Each refusal is a NINES_ERR_INVALID_ARG whose details are {field, value, rule}, so an
 * edge can state the rule under its own field name.
 */

const { NinesError } = require('./errors');

/**
 * The refusal of one field.
 * @param {string} field e.g. "timeoutMs", "units[2].name"
 * @param {unknown} value as given
 * @param {string} rule what a valid value is
 * @returns {NinesError} NINES_ERR_INVALID_ARG "<field> <rule>; got <value>"
 */
function invalidArg (field, value, rule) {
  let shown;
  // never throws: BigInt and cycles are possible input
  try { shown = JSON.stringify(value) ?? String(value); } catch { shown = String(value); }
  return new NinesError('NINES_ERR_INVALID_ARG', `${field} ${rule}; got ${shown}`, { field, value, rule });
}

/**
 * An integer from lo to hi.
 * @param {unknown} v
 * @param {string} field
 * @param {number} lo
 * @param {number} hi
 * @param {(field: string, value: unknown, rule: string) => Error} [invalid] builds the refusal
 * @returns {number}
 * @throws {Error} from invalid: "must be an integer from <lo> to <hi>"
 */
function intIn (v, field, lo, hi, invalid = invalidArg) {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi) throw invalid(field, v, `must be an integer from ${lo} to ${hi}`);
  return v;
}

module.exports = { invalidArg, intIn };
