'use strict';

const assert = require('node:assert/strict');
const { validateConfig } = require('../../gateway/runtime/config');

/**
 * The config tests' way to break one rule at a time: each file has its own valid base config, and
 * a case changes one thing in a fresh copy of it and expects NINES_ERR_CONFIG.
 */

/**
 * Validates a config that must fail.
 * @param {object} obj
 * @param {object} [env] environment variables the config may take values from
 * @returns {{err: Error, errors: Array<{path: string, rule: string}>}} the error and its problems
 */
function problemsOf (obj, env = {}) {
  try {
    validateConfig(obj, { env });
  } catch (err) {
    assert.equal(err.code, 'NINES_ERR_CONFIG', err.message);
    return { err, errors: err.details.errors };
  }
  return assert.fail('expected NINES_ERR_CONFIG');
}

/**
 * Cases over one base config.
 * @param {() => object} base builds a fresh valid config
 * @returns {{problems: (change: (o: object) => void, env?: object) => {err: Error, errors: object[]},
 *   expectOne: (change: (o: object) => void, pathText: string, rule: RegExp, env?: object) => object}}
 *   problems: the change applied to a fresh base, validated; expectOne: exactly one problem, at this
 *   path, its rule matching, and the message naming the path (returns the problem)
 */
function configCases (base) {
  const problems = (change, env) => {
    const obj = base();
    change(obj);
    return problemsOf(obj, env);
  };
  const expectOne = (change, pathText, rule, env) => {
    const { err, errors } = problems(change, env);
    assert.deepEqual(errors.map((e) => e.path), [pathText], err.message);
    assert.match(errors[0].rule, rule, err.message);
    // the message carries "path: value rule" for every problem
    assert.ok(err.message.includes(`${pathText}: `), err.message);
    return errors[0];
  };
  return { problems, expectOne };
}

module.exports = { problemsOf, configCases };
