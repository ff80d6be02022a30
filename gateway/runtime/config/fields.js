'use strict';

const { parseRate } = require('../../base/quantities');
const { readDuration } = require('../../base/duration-field');
const C = require('../../base/constants');

/**
 * Field readers for the semantic checks: each parses one value, reports a problem at its path
 * when it is wrong, and returns the default so checking can go on and report everything at once.
 * A value of the wrong type was already reported by the schema; the readers skip it quietly.
 */

/**
 * @param {*} v
 * @returns {boolean} whether v is a plain mapping (not null, not a list)
 */
function isMap (v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * A map key that would be lost as a name (C.RESERVED_NAME) is a problem at its path.
 * @param {import('./problems').Problems} problems
 * @param {Array<string|number>} segs the key's path
 * @param {string} key
 * @returns {boolean} true when refused
 */
function reservedKey (problems, segs, key) {
  if (key !== C.RESERVED_NAME) return false;
  problems.add(segs, key, `is not allowed as a name: ${C.RESERVED_NAME} is JavaScript's prototype key, and an object keyed by it loses it`);
  return true;
}

/**
 * Reads a duration field, by the one duration reader (base/duration-field.js) with its rules; a
 * config's durations need not be whole ms unless the reader of the value says so.
 * @param {import('./problems').Problems} problems
 * @param {Array<string|number>} segs field path
 * @param {*} value as written (undefined when omitted)
 * @param {object} opts
 * @param {number|null} opts.def default in ms, used when omitted or wrong
 * @param {number} [opts.minMs=0] smallest allowed value, ms
 * @param {number} [opts.maxMs=Infinity] largest allowed value, ms
 * @param {boolean} [opts.zeroOk=false] whether 0 is allowed even when below minMs (0 = off)
 * @returns {number|null} milliseconds
 */
function durationField (problems, segs, value, { def, minMs = 0, maxMs = Infinity, zeroOk = false }) {
  if (value === undefined) return def;
  if (typeof value !== 'string' && typeof value !== 'number') return def;
  try {
    return readDuration(value, segs.join('.'), { lo: minMs, hi: maxMs, whole: false, zeroOk });
  } catch (err) {
    problems.add(segs, value, err.details.rule);
    return def;
  }
}

/**
 * Reads a rate field.
 * @param {import('./problems').Problems} problems
 * @param {Array<string|number>} segs
 * @param {*} value
 * @param {object} opts
 * @param {number|null} opts.def default, per second
 * @param {boolean} [opts.allowMax=true] whether "max" (closed loop) is allowed
 * @param {string} [opts.maxRule] the rule when "max" is not allowed
 * @returns {number|null} per second, Infinity for "max"
 */
function rateField (problems, segs, value, { def, allowMax = true, maxRule = 'must be a finite rate such as "10/s"' }) {
  if (value === undefined) return def;
  if (typeof value !== 'string' && typeof value !== 'number') return def;
  let perSec;
  try {
    perSec = parseRate(value);
  } catch (err) {
    // parseRate's rule when out of range; not a rate at all: with this field's hint when "max" is not for it
    const { rule, outOfRange } = err.details;
    problems.add(segs, value, allowMax || outOfRange ? rule : 'is not a rate; use e.g. "10/s" or "1/min"');
    return def;
  }
  if (perSec === Infinity && !allowMax) {
    problems.add(segs, value, maxRule);
    return def;
  }
  return perSec;
}

module.exports = { isMap, durationField, rateField, reservedKey };
