'use strict';

const { NinesError } = require('../base/errors');

/** Largest seed mulberry32 distinguishes: seeds are unsigned 32-bit integers. */
const SEED_MAX = 0xFFFFFFFF;

/**
 * mulberry32: a tiny, fast 32-bit PRNG. Not for cryptography; good enough to make fault draws
 * reproducible in tests and benches (`seed=42`).
 * @param {number} seed integer in [0, 2^32 - 1]
 * @returns {() => number} a function returning numbers in [0, 1), like Math.random
 */
function mulberry32 (seed) {
  if (!Number.isInteger(seed) || seed < 0 || seed > SEED_MAX) {
    throw new NinesError('NINES_ERR_INVALID_ARG',
      `seed must be an integer from 0 to ${SEED_MAX}; got ${JSON.stringify(seed)}`, { field: 'seed', value: seed });
  }
  let a = seed >>> 0;
  return function random () {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

module.exports = { mulberry32, SEED_MAX };
