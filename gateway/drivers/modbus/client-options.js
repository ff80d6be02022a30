'use strict';

/**
 * Options of a ModbusClient, checked once in the constructor: the shared ones in
 * ../connection-options.js, the Modbus ones (TCP keep-alive, RTU line timing, the serialport seam)
 * here. Every error names the option, the value and the rule (NINES_ERR_INVALID_ARG); unknown options
 * are errors too. Durations are numbers (of ms, or µs for silenceUs) or strings such as "500ms", as
 * for every driver (../connection-options.js).
 */

const C = require('../../base/constants');
const { normalizeConnectionOptions, durationIn, intIn, fail, MAX_TIMER_MS } = require('../connection-options');
const { checkTlsOptions } = require('../tls-options');

/** RTU broadcast (unit 0) writes get no reply; the bus is left quiet this long after one (Modbus over Serial Line §2.4.1 "turnaround delay") */
const RTU_TURNAROUND_MS = 100;
/** Requests one Modbus TCP connection may carry at once (as devices/spec.js allows a device) */
const MAX_INFLIGHT = 64;

/**
 * @typedef {object} ClientOptions
 * @property {number|string} [timeoutMs=1000] per-request timeout, from the request() call to the complete reply
 * @property {number|string} [connectTimeoutMs=5000] per connection attempt
 * @property {number} [queueMax=64] requests that may wait behind the one in flight; more are rejected (NINES_ERR_QUEUE_FULL)
 * @property {boolean} [reconnect=true] reconnect in the background after a failed connect or a drop
 * @property {{initialMs?: number|string, maxMs?: number|string}} [backoff] reconnect delays (capped exponential with jitter)
 * @property {() => number} [random=Math.random] jitter source, injectable for tests
 * @property {number|string} [interFrameDelayMs=0] line quirk: the line rests this long after each request ends before
 *   the next is written (0-60000, shorter than timeoutMs; 1 request in flight); see ../connection.js
 * @property {number|string} [delayAfterConnectMs=0] line quirk: nothing is written until this long after a connection
 *   opened, and it counts as connected only then (0-60000); see ../connection.js
 * @property {number|string} [keepAliveMs=10000] TCP keep-alive initial delay
 * @property {number} [maxInflight=1] Modbus TCP only: requests written on the connection before their replies
 *   come (1-64), matched by transaction id and unit in any order. It drops to 1 by itself, with a
 *   NINES_ERR_PIPELINE_UNSUPPORTED warning, when the device turns out to serve one at a time (pipeline-guard.js)
 * @property {number|string} [silenceUs] RTU inter-frame gap (t3.5) enforced between frames; default from the baud rate
 * @property {number|string} [quietMs] RTU: after a timeout, the next request waits until the line has been quiet this
 *   long (every byte received restarts it), so the timed-out request's late reply cannot be taken for the next
 *   one's; default: the timed-out request's own timeout. 0 leaves only t3.5 (see rtu-transport.js)
 * @property {number|string} [turnaroundMs=100] RTU: quiet time after a broadcast (unit 0) write
 * @property {{ca?: string|Buffer, cert?: string|Buffer, key?: string|Buffer, servername?: string}} [tls] modbus+tls only:
 *   PEM texts of the CA(s) that sign the device's certificate (default: Node's bundled root CAs), the client
 *   certificate and its key (both or neither), and the name the device's certificate must carry (default: the
 *   host dialled). Checked by ../tls-options.js; verification cannot be turned off
 * @property {() => Function} [loadSerialPort] RTU seam: returns the SerialPort class (default: require('serialport').SerialPort, loaded lazily)
 */

const MODBUS_DEFAULTS = Object.freeze({
  keepAliveMs: C.TCP_KEEPALIVE_MS,
  maxInflight: 1,
  silenceUs: undefined,
  quietMs: undefined,
  turnaroundMs: RTU_TURNAROUND_MS,
  tls: undefined,
  loadSerialPort: undefined
});

/**
 * Validates client options and fills in defaults.
 * @param {ClientOptions} [opts]
 * @param {{protocol: string}} [target] the parsed target: `tls` is checked (and required to be absent) by its scheme
 * @returns {Required<Omit<ClientOptions, 'backoff'|'silenceUs'|'quietMs'|'loadSerialPort'>> &
 *   {backoff: {initialMs: number, maxMs: number}, silenceUs?: number, quietMs?: number, loadSerialPort?: () => Function}}
 * @throws {NinesError} NINES_ERR_INVALID_ARG
 */
function normalizeOptions (opts, target) {
  const o = normalizeConnectionOptions(opts, 'Modbus client', MODBUS_DEFAULTS);
  if (target !== undefined && target.protocol === 'modbus+tls') o.tls = checkTlsOptions(o.tls);
  else if (o.tls !== undefined) fail('tls', '<object>', `applies to modbus+tls:// targets only${target ? `; the target is ${target.protocol}://` : ''}`);
  o.keepAliveMs = durationIn(o.keepAliveMs, 'keepAliveMs', 0, MAX_TIMER_MS);
  intIn(o.maxInflight, 'maxInflight', 1, MAX_INFLIGHT);
  // A device that needs a pause between a reply and the next request does not take overlapping ones
  if (o.interFrameDelayMs !== 0 && o.maxInflight !== 1) fail('interFrameDelayMs', o.interFrameDelayMs, `must be 0 with maxInflight ${o.maxInflight}: a device that needs a pause between a reply and the next request takes one request at a time`);
  if (o.quietMs !== undefined) o.quietMs = durationIn(o.quietMs, 'quietMs', 0, MAX_TIMER_MS);
  o.turnaroundMs = durationIn(o.turnaroundMs, 'turnaroundMs', 0, 60000);
  if (o.silenceUs !== undefined) o.silenceUs = durationIn(o.silenceUs, 'silenceUs', 0, 1e6, 1000);
  if (o.loadSerialPort !== undefined && typeof o.loadSerialPort !== 'function') fail('loadSerialPort', o.loadSerialPort, 'must be a function returning the SerialPort class');
  return o;
}

module.exports = { normalizeOptions, MAX_TIMER_MS, MAX_INFLIGHT, RTU_TURNAROUND_MS };
