'use strict';

const { NAMESPACE } = require('./topics');

/**
 * A primary host application's STATE (Sparkplug 3.0, 7.5 and 8.1.1): the host publishes, retained,
 * on `spBv1.0/STATE/<host_id>`, and the edge node that waits for it births only while it is online.
 * Pure functions, tested alone.
 *
 * Two forms are in use: Sparkplug 3.0's JSON `{"online": true, "timestamp": 1690000000000}`, and
 * Sparkplug 2.2's bare text `ONLINE` / `OFFLINE` on `STATE/<host_id>` (Ignition 8.1 before its
 * 3.0 mode, older Tahu hosts). We read both on both topics.
 */

/** A STATE payload is a short JSON object; anything longer is not one */
const MAX_STATE_BYTES = 1024;

/**
 * @param {string} hostId
 * @returns {{v3: string, v22: string}} the 3.0 topic, and the 2.2 one
 */
function stateTopics (hostId) {
  return { v3: `${NAMESPACE}/STATE/${hostId}`, v22: `STATE/${hostId}` };
}

/**
 * Reads a STATE payload.
 * @param {Buffer|Uint8Array|string} bytes
 * @returns {{online: boolean, timestamp: number|null}|null} null when it is neither form
 */
function parseState (bytes) {
  if (bytes === null || bytes === undefined || bytes.length > MAX_STATE_BYTES) return null;
  const text = Buffer.from(bytes).toString('utf8').trim();
  if (text === 'ONLINE') return { online: true, timestamp: null };
  if (text === 'OFFLINE') return { online: false, timestamp: null };
  let json;
  try { json = JSON.parse(text); } catch { return null; }
  if (json === null || typeof json !== 'object' || typeof json.online !== 'boolean') return null;
  return { online: json.online, timestamp: Number.isFinite(json.timestamp) ? json.timestamp : null };
}

/**
 * Follows one host's STATE. A 3.0 message older than the last one taken is stale (a retained
 * message from before the host's restart, a death certificate delivered late) and is ignored, as
 * 3.0 asks (8.1.1: compare the timestamps).
 */
class PrimaryHostState {
  constructor () {
    /** @type {boolean} */
    this.online = false;
    /** @type {number|null} the timestamp of the STATE taken last */
    this.timestamp = null;
    this.ignored = 0;
  }

  /**
   * @param {{online: boolean, timestamp: number|null}} state parsed
   * @returns {boolean} whether `online` changed
   */
  take (state) {
    if (state.timestamp !== null && this.timestamp !== null && state.timestamp < this.timestamp) {
      this.ignored++;
      return false;
    }
    if (state.timestamp !== null) this.timestamp = state.timestamp;
    const changed = state.online !== this.online;
    this.online = state.online;
    return changed;
  }
}

module.exports = { stateTopics, parseState, PrimaryHostState };
