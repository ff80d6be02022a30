'use strict';

/**
 * The defaults and limits of `nines scan`, each in one place (docs/commissioning.md explains them).
 */

module.exports = Object.freeze({
  /** Unit ids asked by default: every address a Modbus serial line may use (Modbus over Serial Line §2.2) */
  SCAN_FIRST_UNIT: 1,
  SCAN_LAST_UNIT: 247,
  /** Highest unit id a scan may ask: 248-255 are reserved on a serial line */
  SCAN_MAX_UNIT: 247,
  /** Wait for a unit's answer (ms): a unit that is there answers a one-register read within a few ms */
  SCAN_TIMEOUT_MS: 50,
  /**
   * Longest wait for an answer, and longest quiet period after a timeout (ms): a unit slower than a
   * minute is not found by a scan, and 247 silent unit ids at that would hold the line for hours
   */
  SCAN_MAX_TIMEOUT_MS: 60 * 1000,
  /**
   * Margin per unit id (ms), in the printed and enforced bound: t3.5 before the probe, the timer's
   * and the event loop's lateness (a silent unit id takes about 4 ms more than its timeout and quiet
   * period on loopback, more on a loaded host)
   */
  SCAN_SLACK_MS: 10,
  /** A unit whose probe was not written (the line was still held quiet) is asked again, at most this often */
  SCAN_PROBE_ATTEMPTS: 3,
  /** A unit found is asked again after a timeout while it is identified and mapped, at most this often in all */
  SCAN_ATTEMPTS: 3,
  /** Addresses mapped per table by default: 0 to this */
  SCAN_LAST_ADDRESS: 9999,
  /**
   * Steps between single-address probes across a hole, growing 1-2-5 up to the last: every run of
   * addresses that starts at a multiple of the last step, or is at least that long, is found; runs
   * shortly after another run are found on the finer steps
   */
  SCAN_STEPS: Object.freeze([1, 2, 5, 10, 20, 50, 100]),
  /** Requests the map of one unit may take, all tables together; at most the limit (every address of the four tables, probed one by one, fits in it) */
  SCAN_REQUESTS_PER_UNIT: 1000,
  SCAN_MAX_REQUESTS_PER_UNIT: 1e6,
  /** Hard cap on a whole scan (ms): discovery, identification and maps; the cap may be raised up to a day */
  SCAN_MAX_DURATION_MS: 10 * 60 * 1000,
  SCAN_MAX_DURATION_LIMIT_MS: 24 * 3600 * 1000,
  /** Tags written per unit into its starter tag sheet; the rest of its readable addresses are named in a comment */
  SCAN_MAX_TAGS_PER_UNIT: 1000,
  /** Exceptions of a Modbus TCP gateway that say the unit behind it did not answer: no unit there */
  GATEWAY_EXCEPTIONS: Object.freeze([10, 11])
});
