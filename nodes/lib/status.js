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
 * The status every node of a device shows for the device's health (gateway/devices Device#health):
 * connecting → yellow ring; up → green dot, or a yellow dot with the short text of a warning's code
 * when the device works but not as configured (NINES_ERR_PIPELINE_UNSUPPORTED: "one in flight");
 * down → red ring with the short text of the last error's code; closed → grey ring. The same health
 * gives the same object, so all nodes agree.
 * @param {{state: string, lastError: {code: string}|null, warning?: {code: string}|null}|null} health
 *   null before the first report
 * @returns {object}
 */
function fromHealth (health) {
  if (!health || health.state === 'connecting') return CONNECTING;
  if (health.state === 'up') return health.warning ? warningStatus(health.warning) : CONNECTED;
  if (health.state === 'down') return errorStatus(health.lastError || { code: 'NINES_ERR_NOT_CONNECTED' });
  return DISCONNECTED;
}

/**
 * The health of one unit of a line (devices/unit-health.js) as it is in the device's health, found by id.
 * @param {object|null} health
 * @param {number|undefined} unitId
 * @returns {{name: string, unitId: number, state: string, since: number}|null} null: no such unit
 *   (the device is not a line, or the id is not on it)
 */
function unitHealth (health, unitId) {
  if (!health || !health.units || unitId === undefined) return null;
  for (const name of Object.keys(health.units)) {
    const u = health.units[name];
    if (u.unitId === unitId) return { name, unitId, state: u.state, since: u.since };
  }
  return null;
}

/**
 * The status of a node that talks to one unit of a line: its device's (fromHealth) while the device
 * is not up; while it is, a red ring "unit 3 down" when its unit stopped answering and is left alone
 * (NINES_ERR_UNIT_DOWN), so the nodes of one silent unit turn red and their neighbours' stay green.
 * @param {object|null} health
 * @param {number|undefined} unitId the node's unit
 * @returns {object}
 */
function fromUnitHealth (health, unitId) {
  if (health && health.state === 'up') {
    const u = unitHealth(health, unitId);
    if (u !== null && u.state === 'down') return unitDownStatus(unitId);
  }
  return fromHealth(health);
}

/** @param {number} unitId @returns {{fill: string, shape: string, text: string}} a red ring "unit 3 down" */
function unitDownStatus (unitId) {
  return { fill: 'red', shape: 'ring', text: `unit ${unitId} down` };
}

/**
 * The status of a node that watches a whole line (nines-device-status): its device's while the device
 * is not up; while it is, a red ring naming the unit that is down ("unit 3 down"), or how many are
 * ("3 units down").
 * @param {object|null} health
 * @returns {object}
 */
function fromLineHealth (health) {
  if (health && health.state === 'up' && health.units) {
    const down = Object.values(health.units).filter((u) => u.state === 'down');
    if (down.length === 1) return unitDownStatus(down[0].unitId);
    if (down.length > 1) return { fill: 'red', shape: 'ring', text: `${down.length} units down` };
  }
  return fromHealth(health);
}

/**
 * The status of a node whose last msg was refused before anything was sent (a value its tag cannot
 * hold, a read-only tag, a bad msg property): a yellow ring, where the device's own health uses dots
 * and red rings, so a refused msg is not taken for a device problem, nor hidden behind a green dot.
 * @param {{code?: string}} err the refusal (a msg error: errors.js isMsgError)
 * @returns {{fill: string, shape: string, text: string}} "refused: bad value"
 */
function refusedStatus (err) {
  return { fill: 'yellow', shape: 'ring', text: `refused: ${statusText(err && err.code)}` };
}

/** @param {{code: string}} warning @returns {{fill: string, shape: string, text: string}} a yellow dot naming the warning */
function warningStatus (warning) {
  return { fill: 'yellow', shape: 'dot', text: statusText(warning.code) };
}

/** The last status each node was given through showStatus, as "fill|shape|text" */
const shown = new WeakMap();

/**
 * Sets a node's status only when it differs from the one it shows: a request node answering 10 msgs
 * a second would otherwise send the editor 10 identical status messages a second. Every status a
 * nines node sets goes through here (its own and its device's), so the last one is always known.
 * @param {{status: (s: object) => void}} node
 * @param {{fill?: string, shape?: string, text?: string}} s
 * @returns {boolean} true when the status was sent, false when the node already showed it
 */
function showStatus (node, s) {
  const key = `${s.fill}|${s.shape}|${s.text}`;
  if (shown.get(node) === key) return false;
  shown.set(node, key);
  node.status(s);
  return true;
}

/** Codes that say the connection is gone: the device's health reports them, the same on every node */
const CONNECTION_CODES = new Set(['NINES_ERR_CONNECT_TIMEOUT', 'NINES_ERR_CONNECT_FAILED', 'NINES_ERR_CONNECTION_CLOSED',
  'NINES_ERR_NOT_CONNECTED', 'NINES_ERR_CLOSED',
  // a refused TLS handshake is a connection that cannot be made (Modbus/TCP Security)
  'NINES_ERR_TLS_UNKNOWN_CA', 'NINES_ERR_TLS_CERT_EXPIRED', 'NINES_ERR_TLS_HOSTNAME_MISMATCH', 'NINES_ERR_TLS_CLIENT_CERT_REQUIRED',
  'NINES_ERR_TLS_CLIENT_CERT_REJECTED', 'NINES_ERR_TLS_HANDSHAKE_FAILED']);

/**
 * @param {{code?: string}} err
 * @returns {boolean} true when the error is about the connection (shown through the device's health),
 *   false when it is this request's own (a timeout, an exception, a "?" reply)
 */
function isConnectionError (err) {
  return !!err && CONNECTION_CODES.has(err.code);
}

module.exports = {
  CONNECTING, CONNECTED, DISCONNECTED, errorStatus, refusedStatus, fromHealth, fromUnitHealth, fromLineHealth, unitHealth, unitDownStatus, isConnectionError, showStatus
};
