'use strict';

/**
 * Reply → msg fields, shared by the request nodes.
 */

/** Reply fields that describe the exchange rather than the device's answer */
const META = new Set(['ok', 'command', 'op', 'kind', 'lead', 'raw', 'sentNs', 'doneNs', 'bits']);
/** Replies whose answer is one scalar: msg.payload is that value */
const SCALARS = ['value', 'count', 'name', 'firmware', 'text'];

/**
 * The typed answer of an ASCII reply for msg.payload: a number (`value`, `count`), a string
 * (`name`, `firmware`, `text`), `true` for an acknowledged write, or an object when the reply has
 * several fields; `@AA` gives `{outputs, inputs, value}` with the lines as booleans.
 * @param {object} reply an AsciiClient reply
 * @returns {unknown}
 */
function asciiPayload (reply) {
  const keys = Object.keys(reply).filter((k) => !META.has(k) && reply[k] !== undefined);
  if (keys.length === 1 && SCALARS.includes(keys[0])) return reply[keys[0]];
  if (keys.length === 1 && keys[0] === 'ack') return true;
  if (keys.length === 0) return reply.raw;
  const out = {};
  for (const k of keys) if (k !== 'ack') out[k] = reply[k];
  // bits repeat outputs/inputs; keep them only when the reply has no named lines
  if (!('outputs' in out) && Array.isArray(reply.bits)) out.bits = reply.bits;
  return out;
}

/**
 * Round trip of one request in milliseconds, from the client's send and completion stamps.
 * @param {{sentNs?: bigint, doneNs?: bigint}} reply
 * @returns {number|undefined} ms with µs resolution
 */
function latencyMs (reply) {
  if (typeof reply.sentNs !== 'bigint' || typeof reply.doneNs !== 'bigint') return undefined;
  return Math.round(Number(reply.doneNs - reply.sentNs) / 1e3) / 1e3;
}

module.exports = { asciiPayload, latencyMs };
