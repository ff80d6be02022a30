'use strict';

const { NinesError } = require('../../base/errors');

/**
 * The Sparkplug B protobuf payload, through Eclipse Tahu's `sparkplug-payload` (the reference
 * JavaScript encoding, generated from Tahu's sparkplug_b.proto). Loaded on first use, so a
 * gateway without Sparkplug never loads protobufjs.
 *
 * Decoding is for commands only (NCMD, DCMD): untrusted bytes from any client of the broker. The
 * size is capped before protobufjs sees them, and any failure becomes NINES_ERR_SPARKPLUG.
 */

/** A command carries a few metrics; anything larger is refused before decoding */
const MAX_COMMAND_BYTES = 64 * 1024;

let tahu = null;
function lib () {
  if (tahu === null) tahu = require('sparkplug-payload').get('spBv1.0');
  return tahu;
}

/**
 * @param {{timestamp?: number, seq?: number, metrics?: object[]}} payload
 * @returns {Buffer}
 */
function encodePayload (payload) {
  const bytes = lib().encodePayload(payload);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Decodes a payload (tests, and commands through decodeCommand).
 * @param {Uint8Array} bytes
 * @returns {{timestamp?: unknown, seq?: unknown, metrics?: Array<{name?: string, type: string, value: unknown}>}}
 */
function decodePayload (bytes) {
  return lib().decodePayload(bytes);
}

/**
 * Decodes an NCMD or DCMD payload, refusing what cannot be a command.
 * @param {Buffer} bytes
 * @param {string} topic for the error
 * @returns {Array<{name?: string, alias?: unknown, type: string, value: unknown}>} its metrics, at least
 *   one, each with a name or an alias (a Long or a number, as decoded)
 * @throws {NinesError} NINES_ERR_SPARKPLUG
 */
function decodeCommand (bytes, topic) {
  const refuse = (why, details = {}) => new NinesError('NINES_ERR_SPARKPLUG', `command on ${topic} refused: ${why}; nothing was changed`, { topic, ...details });
  if (!Buffer.isBuffer(bytes) && !(bytes instanceof Uint8Array)) throw refuse('the payload is not bytes');
  if (bytes.length > MAX_COMMAND_BYTES) throw refuse(`the payload is ${bytes.length} bytes, more than ${MAX_COMMAND_BYTES}`, { bytes: bytes.length });
  let payload;
  try {
    payload = decodePayload(bytes);
  } catch (err) {
    throw refuse(`the payload is not a Sparkplug B protobuf payload (${err.message})`, { bytes: bytes.length, head: Buffer.from(bytes.subarray(0, 16)).toString('hex') });
  }
  const metrics = Array.isArray(payload.metrics) ? payload.metrics : [];
  if (metrics.length === 0) throw refuse('the payload has no metric');
  for (const [i, m] of metrics.entries()) {
    const named = typeof m.name === 'string' && m.name !== '';
    if (!named && (m.alias === undefined || m.alias === null)) throw refuse(`metric ${i} has neither a name nor an alias`, { metric: i });
  }
  return metrics;
}

module.exports = { encodePayload, decodePayload, decodeCommand, MAX_COMMAND_BYTES };
