'use strict';

/**
 * Which addresses of one table a unit answers, with few requests: runs of readable addresses are
 * read in requests as large as the function allows, the end of a run is found by halving the
 * request that an exception refused, and a hole is crossed by single-address probes on growing
 * steps (1, 2, 5, 10, 20, 50, 100: defaults.js SCAN_STEPS), the start of the next run found by
 * halving back from the probe that answered. Exceptions 1, 2 and 3 mean "not readable here" (some
 * devices answer 1 for an address they lack); any other failure ends the table.
 *
 * What it finds, exactly: every run of readable addresses that holds a multiple of the last step
 * (so every run that long), and shorter ones within the finer steps after another run. Between two
 * probes that found nothing, a hole is taken for whole. `steps: [1]` probes every address.
 * Bounded by a request budget; a table cut short says where.
 */

/**
 * @typedef {object} TableMap
 * @property {Array<[number, number]>} ranges readable runs, [first, last] inclusive
 * @property {boolean} complete false when the budget or an error ended it early
 * @property {number} [stoppedAt] the address it had reached when cut short
 * @property {string} [error] the code of the failure that ended it
 * @property {number} requests
 * @property {Record<number, number>} exceptions exception code → how many
 */

/**
 * @param {(address: number, quantity: number) => Promise<void>} read resolves when the unit answers
 *   the read; rejects with its error (NINES_ERR_MODBUS_EXCEPTION with details.exceptionCode for an exception)
 * @param {{first: number, last: number, maxPerRequest: number, steps: readonly number[], budget: number}} o
 * @returns {Promise<TableMap>}
 */
async function mapTable (read, o) {
  const { first, last, maxPerRequest, steps } = o;
  /** @type {TableMap} */
  const out = { ranges: [], complete: true, requests: 0, exceptions: {} };
  class Stop extends Error {}
  /** @returns {Promise<boolean>} whether [address, address + quantity) is readable */
  const ok = async (address, quantity) => {
    if (out.requests >= o.budget) throw new Stop('budget');
    out.requests++;
    try {
      await read(address, quantity);
      return true;
    } catch (err) {
      const code = err.details && err.details.exceptionCode;
      if (err.code === 'NINES_ERR_MODBUS_EXCEPTION' && code >= 1 && code <= 3) {
        out.exceptions[code] = (out.exceptions[code] || 0) + 1;
        return false;
      }
      out.error = err.code || String(err);
      throw new Stop('error');
    }
  };
  let at = first; // the lowest address not yet known
  try {
    // hole: `known` is the last address known unreadable (first - 1 at the start)
    let known = first - 1;
    let step = 0;
    while (known < last) {
      const s = steps[step];
      const p = Math.min((Math.floor(known / s) + 1) * s, last);
      at = known + 1;
      if (!(await ok(p, 1))) {
        known = p;
        if (step < steps.length - 1) step++;
        continue;
      }
      // the run starts somewhere in (known, p]: halve back, single addresses
      let lo = known;
      let hi = p;
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (await ok(mid, 1)) hi = mid; else lo = mid;
      }
      const start = hi;
      // run: [start, end] is readable; read on from end + 1 in the largest requests
      let end = start;
      at = start;
      while (end < last) {
        const n = Math.min(maxPerRequest, last - end);
        if (await ok(end + 1, n)) { end += n; continue; }
        // the largest k < n with [end + 1, end + k] readable: then end + k + 1 is not
        let good = 0;
        let bad = n;
        while (bad - good > 1) {
          const mid = Math.floor((good + bad) / 2);
          if (await ok(end + 1, mid)) good = mid; else bad = mid;
        }
        end += good;
        break;
      }
      out.ranges.push([start, end]);
      known = end + 1;
      step = 0;
    }
  } catch (err) {
    if (!(err instanceof Stop)) throw err;
    out.complete = false;
    out.stoppedAt = at;
  }
  return out;
}

module.exports = { mapTable };
