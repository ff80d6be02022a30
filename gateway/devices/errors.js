'use strict';

/**
 * The errors a Device raises itself (the drivers' errors pass through unchanged). Each names the
 * device, and the user where one is involved, so a Node-RED node or a job log says whose request
 * failed and why.
 */

const { NinesError } = require('../base/errors');

/**
 * The device has no connection and its last attempt failed: the request is not queued.
 * @param {{name: string, spec: {target: {url: string}}}} d the device
 * @param {number} since epoch ms the device went down
 * @param {{code: string, message: string}|null} cause the last connection error
 * @param {boolean} queued true for a request that was waiting when the device went down
 * @returns {NinesError} NINES_ERR_NOT_CONNECTED
 */
function downError (d, since, cause, queued) {
  const why = cause === null ? 'no connection' : `${cause.code}: ${cause.message}`;
  return new NinesError('NINES_ERR_NOT_CONNECTED', `request not sent: device "${d.label}" is down since ${new Date(since).toISOString()} (${why})`,
    { device: d.name, state: 'down', since, cause: cause === null ? undefined : cause.code, target: d.spec.target.url, queued });
}

/**
 * @param {{name: string}} d the device
 * @param {string} what the call refused ("open", "request")
 * @param {{name: string}|null} user set when the user (not the whole device) is closed
 * @param {boolean} queued true for a request that was waiting
 * @returns {NinesError} NINES_ERR_CLOSED
 */
function closedError (d, what, user, queued) {
  const who = user ? `user "${user.name}" of ` : '';
  return new NinesError('NINES_ERR_CLOSED', `${what}: ${who}device "${d.label}" is closed`,
    { device: d.name, user: user ? user.name : undefined, queued });
}

/**
 * A request's deadline passed before a connection was free for it: it was never sent.
 * @returns {NinesError} NINES_ERR_REPLY_TIMEOUT with details.queued = true
 */
function queuedTimeout (d, user, timeoutMs) {
  return new NinesError('NINES_ERR_REPLY_TIMEOUT',
    `request of user "${user.name}" waited ${timeoutMs} ms for a free connection to device "${d.label}" and was not sent`,
    { device: d.name, user: user.name, timeoutMs, queued: true, target: d.spec.target.url });
}

/**
 * A request that had to start by a time (opts.notAfter: a write command's maximum age) and could not:
 * it was never sent.
 * @param {number} lateMs how far past its latest start it is now
 * @returns {NinesError} NINES_ERR_WRITE_EXPIRED with details.queued = true
 */
function expiredError (d, user, lateMs) {
  return new NinesError('NINES_ERR_WRITE_EXPIRED',
    `request of user "${user.name}" not sent: device "${d.name}" could not start it by its latest start time (${Math.round(lateMs)} ms ago)`,
    { device: d.name, user: user.name, lateMs: Math.round(lateMs), queued: true });
}

/** @returns {NinesError} NINES_ERR_QUEUE_FULL */
function queueFull (d, user) {
  return new NinesError('NINES_ERR_QUEUE_FULL',
    `request not queued: ${user.queueMax} requests of user "${user.name}" already wait for device "${d.label}"`,
    { device: d.name, user: user.name, queueMax: user.queueMax });
}

module.exports = {
  downError,
  closedError,
  queuedTimeout,
  expiredError,
  queueFull,
  /** NINES_ERR_INVALID_ARG naming the field, the value and the rule, as every edge builds it */
  invalidArg: require('../base/arg-checks').invalidArg
};
