'use strict';

const { NinesError } = require('../../base/errors');

/**
 * A builder's refusal (devices/spec.js, jobs/spec.js) as a config problem: the builders are the one
 * place a device or job is defaulted and checked, and they name the field of the spec they refused
 * (details.field) with the rule (details.rule); the config names the field as it is written.
 */

/**
 * Adds the problem a builder's error states, at the config path of its field.
 * @param {import('./problems').Problems} problems
 * @param {Error} err what the builder threw
 * @param {(field: string) => Array<string|number>|null} pathOf the config path of a spec field (null: unknown)
 * @param {Array<string|number>} fallback where a refusal of an unknown field is reported (the device or job)
 * @param {(rule: string) => string} [ruleOf] the rule in the config's words (field names inside it)
 * @throws {Error} what is not a NinesError (a bug, not a refusal)
 */
function specProblem (problems, err, pathOf, fallback, ruleOf = (rule) => rule) {
  if (!(err instanceof NinesError)) throw err;
  const d = err.details || {};
  const segs = typeof d.field === 'string' ? pathOf(d.field) : null;
  if (segs !== null && typeof d.rule === 'string') problems.add(segs, d.value, ruleOf(d.rule));
  else problems.add(segs || fallback, segs ? d.value : undefined, err.message);
}

module.exports = { specProblem };
