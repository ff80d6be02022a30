'use strict';

/**
 * Random sparse maps for the scan's tests, from a seeded generator so a failing map can be made again:
 * runs of readable addresses that the scan promises to find exactly (each holds a multiple of the last
 * probe step, gateway/commission/defaults.js SCAN_STEPS), with a hole between any two.
 */

const D = require('../../gateway/commission/defaults');

/**
 * mulberry32: a small seeded PRNG.
 * @param {number} seed
 * @returns {() => number} uniform in [0, 1)
 */
function prng (seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * @param {() => number} random
 * @param {number} last highest address
 * @param {number} [most=4] runs at most
 * @returns {Array<[number, number]>} [first, last] runs, ascending, apart
 */
function randomRuns (random, last, most = 4) {
  const grid = D.SCAN_STEPS[D.SCAN_STEPS.length - 1];
  const marks = new Set();
  const n = Math.floor(random() * (most + 1));
  for (let i = 0; i < n; i++) marks.add(grid * Math.floor(random() * (Math.floor(last / grid) + 1)));
  const runs = [];
  for (const m of [...marks].sort((a, b) => a - b)) {
    const start = Math.max(0, m - Math.floor(random() * 40));
    const end = Math.min(last, m + Math.floor(random() * 160));
    const prev = runs[runs.length - 1];
    if (prev && start <= prev[1] + 1) prev[1] = Math.max(prev[1], end);
    else runs.push([start, end]);
  }
  return runs;
}

module.exports = { prng, randomRuns };
