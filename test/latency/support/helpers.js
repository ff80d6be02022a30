'use strict';

/** Shared helpers for the latency tests: a seeded PRNG and crafted V2 encodings. */

const assert = require('node:assert/strict');
const zlib = require('node:zlib');

/**
 * Deterministic PRNG (mulberry32), so every run sees the same data.
 * @param {number} seed
 * @returns {() => number} uniform in [0, 1)
 */
function prng (seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Integer ns values around a median, lognormal-ish, with rare slow outliers.
 * @param {number} n
 * @param {number} seed
 * @param {number} [medianNs]
 * @returns {number[]}
 */
function latencies (n, seed, medianNs = 2e6) {
  const rnd = prng(seed);
  const out = [];
  for (let i = 0; i < n; i++) {
    let v = medianNs * Math.exp((rnd() - 0.5) * 2.4);
    if (rnd() < 0.005) v *= 40;
    out.push(Math.floor(v));
  }
  return out;
}

/**
 * Asserts that fn throws a NinesError with the code, and returns the error.
 * @param {() => unknown} fn
 * @param {string} code
 * @param {RegExp} [message]
 * @returns {Error}
 */
function throwsCode (fn, code, message) {
  let caught;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught, `expected ${code}, nothing was thrown`);
  assert.equal(caught.name, 'NinesError', `expected a NinesError, got ${caught && caught.stack}`);
  assert.equal(caught.code, code, caught.message);
  if (message) assert.match(caught.message, message);
  return caught;
}

/**
 * ZigZag LEB128 varint as in the V2 format (positive: a count; negative -n: n zero counts).
 * @param {number} value
 * @returns {number[]}
 */
function zigzag (value) {
  let v = value >= 0 ? value * 2 : -value * 2 - 1;
  const out = [];
  for (let i = 0; i < 8; i++) {
    if (v < 128) {
      out.push(v);
      return out;
    }
    out.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}

/**
 * Builds a V2 inner (uncompressed) form with any header values.
 * @param {object} f
 * @returns {Buffer}
 */
function innerForm ({ cookie = 0x1c849313, offset = 1, digits = 3, lowest = 1n, highest = 3600000000000n, ratio = 1n, counts = [], payloadLength }) {
  const payload = Buffer.from(counts.flatMap(zigzag));
  const head = Buffer.alloc(40);
  head.writeUInt32BE(cookie, 0);
  head.writeUInt32BE(payloadLength === undefined ? payload.length : payloadLength, 4);
  head.writeInt32BE(offset, 8);
  head.writeInt32BE(digits, 12);
  head.writeBigInt64BE(BigInt(lowest), 16);
  head.writeBigInt64BE(BigInt(highest), 24);
  head.writeBigUInt64BE(BigInt(ratio), 32);
  return Buffer.concat([head, payload]);
}

/**
 * Wraps an inner form as V2 compressed base64.
 * @param {Buffer} inner
 * @param {{cookie?: number, lengthDelta?: number}} [opts]
 * @returns {string}
 */
function compressed (inner, { cookie = 0x1c849314, lengthDelta = 0 } = {}) {
  const body = zlib.deflateSync(inner);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(cookie, 0);
  head.writeUInt32BE(body.length + lengthDelta, 4);
  return Buffer.concat([head, body]).toString('base64');
}

/**
 * Unwraps V2 compressed base64 to its inner form.
 * @param {string} b64
 * @returns {Buffer}
 */
function inflateEncoding (b64) {
  return zlib.inflateSync(Buffer.from(b64, 'base64').subarray(8));
}

module.exports = { prng, latencies, throwsCode, zigzag, innerForm, compressed, inflateEncoding };
