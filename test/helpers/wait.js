'use strict';

/**
 * Waiting in tests: for a condition, not for a fixed time. A test that sleeps "long enough" is slow
 * on a quiet machine and flaky on a loaded one; a test that polls a condition goes on the moment it
 * holds, and its bound only decides how long a failure takes to be reported.
 */

/** How long a wait may last before it fails, when the caller names no bound: a hang guard for a loaded 2-core machine, not a timing assertion */
const DEFAULT_TIMEOUT_MS = 10000;
/**
 * How often a condition is checked: often enough that a test goes on within a few ms of the event
 * (some tests act while a simulator's delayed reply is still due), cheap for a condition that reads
 * memory. A condition that asks a server (an HTTP query) passes a longer everyMs.
 */
const DEFAULT_EVERY_MS = 5;

/** @param {number} ms @returns {Promise<void>} */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Resolves with cond()'s value as soon as it is truthy; checks it every `everyMs`. A condition
 * that throws (or rejects) fails the wait at once with that error.
 * @template T
 * @param {() => T | Promise<T>} cond sync or async
 * @param {string} [what] what is awaited, for the failure message; the condition's source when omitted
 * @param {number} [timeoutMs] the bound; the failure names it
 * @param {{everyMs?: number}} [opts]
 * @returns {Promise<T>}
 */
async function until (cond, what, timeoutMs = DEFAULT_TIMEOUT_MS, { everyMs = DEFAULT_EVERY_MS } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await cond();
    if (got) return got;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what || String(cond)}`);
    await sleep(everyMs);
  }
}

module.exports = { until, sleep, DEFAULT_TIMEOUT_MS };
