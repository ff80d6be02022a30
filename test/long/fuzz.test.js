'use strict';

const { PROPERTIES, check } = require('../fuzz/properties');

/**
 * The long fuzz run: 1,000,000 cases per decoder (NINES_FUZZ_RUNS to change it), a few minutes
 * in all. `npm run test:long` runs it; `npm test` runs the short one (test/fuzz/).
 */
const RUNS = Number(process.env.NINES_FUZZ_RUNS) || 1000000;

describe(`fuzz (long): decoders of untrusted input, ${RUNS} cases each`, function () {
  this.timeout(0);
  for (const name of Object.keys(PROPERTIES)) {
    it(name, () => check(name, RUNS));
  }
});
