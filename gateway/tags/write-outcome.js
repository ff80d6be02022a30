'use strict';

/**
 * What a failed write request tells about the device (issue 18): a write is "not written" only when
 * it provably never reached the wire, or the device answered that it did not take it. Anything
 * else (a timeout after it was sent, a connection that dropped with it in flight, a device removed
 * by a reload while it was out, a reply that could not be read) leaves its outcome unknown: the
 * device may have executed it, and saying "not written" then would be false.
 */

const { NinesError } = require('../base/errors');

/** Refused before anything was sent: by definition these never reach the wire */
const NOT_SENT = new Set([
  'NINES_ERR_INVALID_ARG', 'NINES_ERR_INVALID_OP', 'NINES_ERR_INVALID_COMMAND', 'NINES_ERR_INVALID_VALUE',
  'NINES_ERR_INVALID_TARGET', 'NINES_ERR_QUEUE_FULL', 'NINES_ERR_NOT_CONNECTED', 'NINES_ERR_UNIT_DOWN',
  'NINES_ERR_SERIAL_UNAVAILABLE', 'NINES_ERR_WRITE_EXPIRED', 'NINES_ERR_WRITE_BACKLOG'
]);
/**
 * The device answered, saying it did not take the write: "?" and "!" (ED series), and exception 1
 * to FC22, which the driver reports as the function the device lacks
 */
const REFUSED_BY_DEVICE = new Set(['NINES_ERR_DEVICE_INVALID', 'NINES_ERR_DEVICE_IGNORED', 'NINES_ERR_FC_UNSUPPORTED']);
/**
 * Modbus exceptions that refuse the request before it is carried out: illegal function, address or
 * value, and busy (6: "retry later"). 4 (server device failure) may come part way through an
 * action and 5 (acknowledge) means it was accepted and is under way: both are unknown.
 */
const REFUSING_EXCEPTIONS = new Set([1, 2, 3, 6]);

/**
 * @param {{code?: string, details?: object}} err a failed write request's error
 * @returns {boolean} true when the request provably did not change the device
 */
function notWritten (err) {
  const d = err.details || {};
  if (d.queued === true) return true; // failed in a queue, never handed to the wire
  if (NOT_SENT.has(err.code) || REFUSED_BY_DEVICE.has(err.code)) return true;
  return err.code === 'NINES_ERR_MODBUS_EXCEPTION' && REFUSING_EXCEPTIONS.has(d.exceptionCode);
}

/**
 * The error a write's unknown outcome is reported with: NINES_ERR_WRITE_UNKNOWN, the cause kept.
 * @param {NinesError} cause
 * @returns {NinesError}
 */
function unknownError (cause) {
  return new NinesError('NINES_ERR_WRITE_UNKNOWN', `sent, outcome unknown (the device may have executed it): ${cause.code}: ${cause.message}`,
    { cause: { code: cause.code, message: cause.message } });
}

module.exports = { notWritten, unknownError };
