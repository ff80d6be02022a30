'use strict';

/**
 * Status dots shared by every nines node. Texts are core catalog keys (translated by the editor)
 * or the short status text of a nines error code; all stay under 20 characters.
 */

const { statusText } = require('./errors');

const CONNECTING = Object.freeze({ fill: 'yellow', shape: 'ring', text: 'node-red:common.status.connecting' });
const CONNECTED = Object.freeze({ fill: 'green', shape: 'dot', text: 'node-red:common.status.connected' });
const DISCONNECTED = Object.freeze({ fill: 'grey', shape: 'ring', text: 'node-red:common.status.disconnected' });

/**
 * @param {{code?: string}} err
 * @returns {{fill: string, shape: string, text: string}} a red ring naming the error code
 */
function errorStatus (err) {
  return { fill: 'red', shape: 'ring', text: statusText(err && err.code) };
}

/**
 * The status for a client state, showing the last error while the client retries.
 * @param {string} state idle|connecting|connected|reconnecting|closed
 * @param {{code?: string}|null} lastError
 * @returns {object}
 */
function fromState (state, lastError) {
  if (state === 'connected') return CONNECTED;
  if (state === 'connecting' || state === 'reconnecting') return lastError ? errorStatus(lastError) : CONNECTING;
  if (lastError) return errorStatus(lastError);
  return DISCONNECTED;
}

module.exports = { CONNECTING, CONNECTED, DISCONNECTED, errorStatus, fromState };
