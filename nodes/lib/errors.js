'use strict';

/**
 * The Node-RED edge of nines errors: what a node passes to `done(err)` and shows in its status.
 * Node-RED copies an error's own `code` into `msg.error.code` for Catch nodes and logs
 * `err.toString()`, so the error we hand over is named by its code: the log and the debug
 * sidebar read "NINES_ERR_REPLY_TIMEOUT: no reply to @01 within 1000 ms".
 */

const { NinesError, CODES, toNinesError } = require('../../gateway/base/errors');

/**
 * Wraps anything thrown into a NinesError fit for `done(err)`.
 * @param {unknown} err
 * @param {string} [fallbackCode] code for an error that is not a NinesError
 * @returns {NinesError}
 */
function nodeError (err, fallbackCode = 'NINES_ERR_BAD_REPLY') {
  const e = toNinesError(err, fallbackCode);
  const out = new NinesError(e.code, e.message, e.details);
  out.name = e.code;
  out.stack = `${e.code}: ${e.message}`;
  return out;
}

/**
 * A NINES_ERR_INVALID_ARG for a bad msg property or node setting.
 * @param {string} field the property, e.g. "msg.address"
 * @param {string} message states the value and the rule
 * @param {object} [details]
 * @returns {NinesError}
 */
function invalidArg (field, message, details) {
  return nodeError(new NinesError('NINES_ERR_INVALID_ARG', message, Object.assign({ field }, details)));
}

/**
 * The short status text for a code (under 20 characters, from the CODES table).
 * @param {string} code
 * @returns {string}
 */
function statusText (code) {
  return CODES[code] ? CODES[code].status : 'error';
}

/**
 * Codes a bad msg or setting produces: the node stays healthy, so its status does not turn red. A
 * value its tag or type cannot hold (NINES_ERR_INVALID_VALUE) is refused before anything is sent.
 */
const MSG_CODES = new Set(['NINES_ERR_INVALID_ARG', 'NINES_ERR_INVALID_COMMAND', 'NINES_ERR_INVALID_OP', 'NINES_ERR_INVALID_TARGET', 'NINES_ERR_INVALID_VALUE']);

/**
 * @param {{code?: string}} err
 * @returns {boolean} true when the error is the msg's fault rather than the device's
 */
function isMsgError (err) {
  return !!err && MSG_CODES.has(err.code);
}

module.exports = { nodeError, invalidArg, statusText, isMsgError };
