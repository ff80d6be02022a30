'use strict';

/**
 * Which unit ids answer on a line: one cheap read per unit id (FC3, address 0, one register), one at
 * a time through the client, so the line's discipline is the driver's (t3.5 before each write, the
 * quiet period after a timeout on RTU). Any answer means a unit is there, an exception too (it may
 * have no register 0); only silence means none. Two exceptions are not a unit's: a Modbus TCP
 * gateway's 10 and 11 say the unit behind it did not answer.
 *
 * Bounded: each unit id costs at most the timeout plus the quiet period plus a slack, so the whole
 * discovery has a bound known before it starts (discoveryBoundMs), and it is enforced: a unit id
 * whose wait no longer fits is not asked, and is reported as not probed.
 */

const D = require('./defaults');
const { validateOp } = require('../drivers/modbus/op');

/** @param {number} ms @returns {Promise<void>} */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The worst time one unit id may take (ms).
 * @param {{timeoutMs: number, quietMs: number}} o
 * @returns {number}
 */
function perUnitMs ({ timeoutMs, quietMs }) {
  return timeoutMs + quietMs + D.SCAN_SLACK_MS;
}

/**
 * The bound of a discovery over `count` unit ids (ms).
 * @param {number} count @param {{timeoutMs: number, quietMs: number}} o
 * @returns {number}
 */
function discoveryBoundMs (count, o) {
  return count * perUnitMs(o);
}

/**
 * @typedef {object} Discovery
 * @property {number[]} found unit ids that answered
 * @property {Record<number, number>} exceptions unit id → the exception it answered the probe with
 * @property {number[]} garbled unit ids whose answer did not parse (noise, or two units on one id)
 * @property {number[]} notProbed unit ids left out: the bound ran out
 * @property {number} requests
 * @property {number} boundMs the enforced bound
 * @property {number} elapsedMs
 */

/**
 * Asks each unit id in turn.
 * @param {import('../drivers/modbus/client').ModbusClient} client
 * @param {number[]} unitIds
 * @param {{timeoutMs: number, quietMs: number, serial: boolean, onUnit?: (id: number, answered: boolean) => void}} o
 *   serial: RTU framing (a serial line or RTU over TCP), where a timeout holds the line quiet
 * @returns {Promise<Discovery>}
 * @throws {NinesError} a failure of the line itself (not connected, closed)
 */
async function discover (client, unitIds, o) {
  const t0 = performance.now();
  const boundMs = discoveryBoundMs(unitIds.length, o);
  // a unit id is asked while its wait (timeout, then the quiet period) and half its slack still fit: the
  // other half covers t3.5 and the event loop after the start
  const need = o.timeoutMs + o.quietMs + D.SCAN_SLACK_MS / 2;
  /** @type {Discovery} */
  const out = { found: [], exceptions: {}, garbled: [], notProbed: [], requests: 0, boundMs, elapsedMs: 0 };
  for (let i = 0; i < unitIds.length; i++) {
    const id = unitIds[i];
    if (performance.now() - t0 + need > boundMs) {
      out.notProbed = unitIds.slice(i);
      break;
    }
    const answer = await probe(client, id, o, out);
    if (answer === 'unit') out.found.push(id);
    else if (answer === 'garbled') out.garbled.push(id);
    if (o.onUnit) o.onUnit(id, answer === 'unit');
  }
  out.elapsedMs = performance.now() - t0;
  return out;
}

/**
 * One unit id: 'unit', 'none' or 'garbled'.
 * @returns {Promise<'unit'|'none'|'garbled'>}
 */
async function probe (client, id, o, out) {
  const op = validateOp({ fc: 3, address: 0, quantity: 1, unitId: id });
  for (let attempt = 1; ; attempt++) {
    try {
      out.requests++;
      await client.request(op, { timeoutMs: o.timeoutMs });
      return 'unit';
    } catch (err) {
      const d = err.details || {};
      if (err.code === 'NINES_ERR_MODBUS_EXCEPTION') {
        if (D.GATEWAY_EXCEPTIONS.includes(d.exceptionCode)) return 'none';
        out.exceptions[id] = d.exceptionCode;
        return 'unit';
      }
      if (err.code === 'NINES_ERR_REPLY_TIMEOUT') {
        if (d.queued) {
          // never written (the line was still quiet after the last timeout): the unit was not asked
          out.requests--;
          if (attempt < D.SCAN_PROBE_ATTEMPTS) continue;
          return 'none';
        }
        // the driver holds a serial line quiet after a timeout; wait it out rather than queue behind it
        if (o.serial && o.quietMs > 0) await sleep(o.quietMs);
        return 'none';
      }
      if (err.code === 'NINES_ERR_BAD_REPLY' || err.code === 'NINES_ERR_BAD_CHECKSUM') return 'garbled';
      throw err;
    }
  }
}

module.exports = { discover, discoveryBoundMs };
