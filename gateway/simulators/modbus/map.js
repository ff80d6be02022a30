'use strict';

/**
 * Where a simulated device's map has holes: from the `map` option (the only ranges it has, per bank;
 * a bank not named has none) and the `holes` option (ranges it lacks), as one mask per bank that
 * model.js consults on every read and write (exception 2 where it is 1).
 */

const { invalid, objectOption, noUnknownKeys } = require('./validate');

/** @typedef {'coils'|'discreteInputs'|'holdingRegisters'|'inputRegisters'} BankName */
const BANKS = Object.freeze(['coils', 'discreteInputs', 'holdingRegisters', 'inputRegisters']);

/**
 * @param {unknown} raw the holes option
 * @param {Record<BankName, number>} sizes
 * @param {unknown} [map] the map option: per bank, the [first, last] ranges the device has; a bank it
 *   does not name it has none of (every address a hole)
 * @returns {Record<BankName, Uint8Array|null>} a mask per bank, 1 where the device has no address
 */
function buildHoles (raw, sizes, map) {
  const out = { coils: null, discreteInputs: null, holdingRegisters: null, inputRegisters: null };
  if (map !== undefined) {
    const m = objectOption(map, 'map');
    noUnknownKeys(m, 'map', BANKS);
    for (const bank of BANKS) {
      const mask = new Uint8Array(sizes[bank]).fill(1);
      for (const [first, last] of rangeList(m[bank] === undefined ? [] : m[bank], `map.${bank}`, sizes[bank])) mask.fill(0, first, last + 1);
      out[bank] = mask;
    }
  }
  if (raw === undefined) return out;
  const h = objectOption(raw, 'holes');
  noUnknownKeys(h, 'holes', BANKS);
  for (const [bank, ranges] of Object.entries(h)) {
    const mask = out[bank] || new Uint8Array(sizes[bank]);
    for (const [first, last] of rangeList(ranges, `holes.${bank}`, sizes[bank])) mask.fill(1, first, last + 1);
    out[bank] = mask;
  }
  return out;
}

/**
 * @param {unknown} ranges @param {string} field @param {number} size the bank's
 * @returns {Array<[number, number]>} checked [first, last] pairs
 */
function rangeList (ranges, field, size) {
  if (!Array.isArray(ranges)) invalid(field, JSON.stringify(ranges), 'a list of [first, last] address pairs');
  ranges.forEach((r, i) => {
    if (!Array.isArray(r) || r.length !== 2 || !r.every((a) => Number.isInteger(a) && a >= 0 && a < size) || r[0] > r[1]) {
      invalid(`${field}[${i}]`, JSON.stringify(r), `a pair [first, last] of addresses within 0-${size - 1}, first ≤ last`);
    }
  });
  return /** @type {Array<[number, number]>} */ (ranges);
}

module.exports = { buildHoles };
