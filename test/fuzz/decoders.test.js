'use strict';

const { PROPERTIES, check } = require('./properties');

/**
 * A short fuzz run of every decoder of untrusted input (test/fuzz/properties.js); the 1,000,000
 * case run is test/long/fuzz.test.js. A failure prints fast-check's seed and path: replay it
 * with check(name, 1, { seed, path }) and keep the case in test/fuzz/regressions.test.js.
 */
const RUNS = 1000;
/** A fixed seed in the default run, so npm test judges the code and not the draw; the long run
 * (and NINES_FUZZ_SEED=random) explores new cases */
const SEED = process.env.NINES_FUZZ_SEED === 'random' ? undefined : Number(process.env.NINES_FUZZ_SEED || 20261123);

describe('fuzz: decoders of untrusted input', () => {
  for (const name of Object.keys(PROPERTIES)) {
    it(name, () => check(name, RUNS, SEED === undefined ? {} : { seed: SEED }));
  }
});
