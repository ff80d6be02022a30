'use strict';

const { parseTarget } = require('../target');

/**
 * Maps a target's scheme to its driver, as MQTT.js maps URL schemes to stream builders; each driver
 * is loaded only when a target needs it (the RTU path pulls in serialport).
 * @param {string|import('../target').Target} target URL or parsed target
 * @param {object} [opts] client options (timeoutMs, connectTimeoutMs, queueMax, reconnect, backoff)
 * @returns {import('node:events').EventEmitter & {request: Function, connect: Function, close: Function, state: string, stats: object}}
 */
function createClient (target, opts = {}) {
  const t = parseTarget(target);
  if (t.protocol === 'ascii') {
    const { AsciiClient } = require('./ascii');
    return new AsciiClient(t, opts);
  }
  return require('./modbus').createClient(t, opts);
}

module.exports = { createClient };
