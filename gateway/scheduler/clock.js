'use strict';

/**
 * The scheduler's clock: a Number of nanoseconds on the process.hrtime clock, read without
 * allocating (nowNs), and conversions to and from the drivers' bigint stamps. A lane keeps its
 * times in plain fields instead of a new bigint per reading (issue 11: the bigints a waiting lane
 * held were promoted to the old generation and collected by full mark-compacts).
 */

/**
 * What nowNs() reads as this module loads (ns): past the largest small integer V8 keeps untagged
 * (2^31 - 1 on 64-bit Node), so every time on this scale is a heap number from the first reading.
 * Counted from 0, the scale crossed 2^31 2.15 s after the thread started, in the middle of a
 * probe's warm-up or measured run: the code V8 had compiled for small integers was thrown away
 * there ("not a Smi", --trace-deopt) and compiled again while measured, a few ms of a helper
 * thread each (on one core, taken from the requests); the objects holding times changed shape too
 */
const ORIGIN_NS = 2 ** 32;

/** When nowNs() was ORIGIN_NS: process.hrtime()'s seconds and nanoseconds then, and the instant it reads 0 as a Number and a bigint */
const [BASE_S, BASE_SUBNS] = process.hrtime();
const ZERO_NUM = BASE_S * 1e9 + BASE_SUBNS - ORIGIN_NS;
const ZERO = BigInt(ZERO_NUM);

/**
 * ns on the process.hrtime clock, ORIGIN_NS as this module loads. Read as process.hrtime()'s [seconds, ns] pair, not
 * process.hrtime.bigint(): once this is compiled, V8 sees the pair read and dropped and allocates
 * nothing, where every bigint reading is a new object. Measured (Node 20, 22 and 24, 4 million
 * readings, a 1 MB young generation): 2-3 scavenges against 214-218, 40 ns a reading against 57.
 * At a fixed 32,000/s on one core the bigint readings (the spin's, the driver's) were about 60 %
 * of what the probe's thread allocated, a scavenge every 175 ms (a heap sampling profile).
 * @returns {number}
 */
function nowNs () {
  const t = process.hrtime();
  return (t[0] - BASE_S) * 1e9 + (t[1] - BASE_SUBNS) + ORIGIN_NS;
}

/**
 * A driver's bigint stamp on the nowNs() scale. Converted before subtracting: a bigint difference
 * is one more object per stamp. Exact while the clock reads below 2^53 ns (104 days after boot on
 * Linux); past that, stamps round to 2 ns (4 ns past 208 days), so a difference may be off by that
 * much, still a whole number of ns.
 * @param {bigint} t a process.hrtime.bigint() reading
 * @returns {number} the same instant as nowNs() counts it
 */
function fromHrtime (t) {
  return Number(t) - ZERO_NUM;
}

/**
 * @param {number} ns as nowNs() counts
 * @returns {bigint} the same instant on process.hrtime.bigint()
 */
function toHrtime (ns) {
  return ZERO + BigInt(Math.round(ns));
}

/**
 * @param {number} ns as nowNs() counts
 * @returns {number} the same instant on process.hrtime's clock, ns as a Number (alarm.js's deadline)
 */
function toHrtimeNumber (ns) {
  return ns + ZERO_NUM;
}

module.exports = { nowNs, fromHrtime, toHrtime, toHrtimeNumber, ORIGIN_NS };
