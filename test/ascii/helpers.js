'use strict';

/** Shared bits of the AsciiClient tests. */

const assert = require('node:assert/strict');
const { NinesError } = require('../../gateway/base/errors');

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

module.exports = { rejectsWith };
