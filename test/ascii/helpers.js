'use strict';

/** Shared bits of the AsciiClient tests. */

const assert = require('node:assert/strict');
const { NinesError } = require('../../gateway/base/errors');

/**
 * Polls until predicate() is true; bounded in time.
 * @param {() => boolean} predicate
 * @param {number} [timeoutMs=5000]
 */
async function waitFor (predicate, timeoutMs = 5000) {
  const until = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > until) throw new Error('waitFor: condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Awaits a promise that must reject with a NinesError of the given code.
 * @param {Promise<unknown>} p
 * @param {string} code
 * @returns {Promise<NinesError>}
 */
async function rejectsWith (p, code) {
  let err;
  await assert.rejects(p, (e) => { err = e; return true; });
  assert.ok(err instanceof NinesError, `expected a NinesError, got ${err}`);
  assert.equal(err.code, code, err.message);
  return err;
}

module.exports = { waitFor, rejectsWith };
