'use strict';

const C = require('../base/constants');
const { MAX_QUIRK_DELAY_MS } = require('../drivers/connection-options');

/**
 * The defaults and limits of a device, each with one home. The device-spec builder (spec.js) applies
 * them, and every edge that reads a device's settings states the same numbers: the gateway config's
 * schema and checks (runtime/config/), the Node-RED device config nodes (nodes/lib/device-config.js
 * and their dialogs), and the per-request timeout of Device#request. Units are in the names.
 */
module.exports = Object.freeze({
  TIMEOUT_MS: C.DEFAULT_TIMEOUT_MS,
  CONNECT_TIMEOUT_MS: C.DEFAULT_CONNECT_TIMEOUT_MS,
  /**
   * The one ceiling of a device's durations (request timeout, connect timeout, reconnect backoff),
   * wherever they enter: a config file, a Node-RED dialog, a flow's JSON, a request's own timeout.
   * An hour: a request that may wait longer is not a poll, and latency histograms end at an hour
   * (constants.js HIST_HIGHEST_NS), so a longer timeout could not be recorded. It was 1 h in YAML,
   * 60 s (timeout) and 10 min (the rest) in Node-RED, and setTimeout's 24.8 days in the builder.
   */
  MAX_DURATION_MS: 3600 * 1000,
  /** Requests waiting per user of a device (each job has its own queue); a bigger queue is a leak, not a buffer */
  QUEUE_MAX: C.DEFAULT_QUEUE_MAX,
  MAX_QUEUE: 100000,
  /** Most PLCs and I/O modules accept 1-8 TCP connections: one unless the user says otherwise */
  MAX_CONNECTIONS_DEFAULT: 1,
  MAX_CONNECTIONS: 64,
  /** Pipelining is opt-in: most devices serve one request per connection at a time */
  MAX_INFLIGHT_DEFAULT: 1,
  MAX_INFLIGHT: 64,
  MAX_NAME_LENGTH: 256,
  /** Reconnect delays of a device's connections (capped exponential, jittered) */
  BACKOFF_INITIAL_MS: C.BACKOFF_INITIAL_MS,
  BACKOFF_MAX_MS: C.BACKOFF_MAX_MS,
  /** Line quirk delays (drivers/connection.js): 0 is none; the ceiling is the driver's own */
  MAX_QUIRK_DELAY_MS,
  /** Registers or bits a coalesced tag read may skip between two tags (tags/plan.js) */
  MAX_GAP_DEFAULT: C.TAGS_MAX_GAP,
  MAX_GAP: C.MODBUS_MAX_READ_BITS,
  MAX_REGISTERS_PER_REQUEST: C.MODBUS_MAX_READ_REGISTERS,
  MAX_BITS_PER_REQUEST: C.MODBUS_MAX_READ_BITS,
  /**
   * The period of FC8 counter reads (devices/diagnostics.js), when asked for: at least a second, as
   * each round costs eight requests per unit, and at most a day
   */
  DIAGNOSTICS_MIN_MS: 1000,
  DIAGNOSTICS_MAX_MS: 24 * 3600 * 1000
});
