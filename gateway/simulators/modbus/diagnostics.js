'use strict';

/**
 * FC8 diagnostics of a simulated device (Modbus over Serial Line v1.02 §6.1; Application Protocol
 * v1.1b3 §6.8): the counters a serial slave keeps, fed by the simulator's real traffic, and the
 * answer to one request. Sub-functions: 0 return query data (echo), 1 restart communications (clears
 * the counters), 10 clear counters, 11-18 the counters.
 */

/** Sub-function → counter it returns */
const COUNTER_OF = Object.freeze({
  11: 'busMessages',
  12: 'busCommunicationErrors',
  13: 'busExceptionErrors',
  14: 'serverMessages',
  15: 'serverNoResponses',
  16: 'serverNaks',
  17: 'serverBusy',
  18: 'busCharacterOverruns'
});

/** A fresh set of counters, all 0 @returns {Record<string, number>} */
function newCounters () {
  const c = {};
  for (const name of Object.values(COUNTER_OF)) c[name] = 0;
  return c;
}

/**
 * Answers an FC8 request PDU at buf[s, s + len): sub-function and one data word.
 * @param {Record<string, number>} counters the device's, cleared in place by sub-functions 1 and 10
 * @param {Buffer} buf @param {number} s @param {number} len
 * @param {(fc: number, code: number) => Buffer} exception builds an exception PDU
 * @returns {Buffer}
 */
function answerDiagnostics (counters, buf, s, len, exception) {
  if (len !== 5) return exception(8, 3);
  const sub = (buf[s + 1] << 8) | buf[s + 2];
  const data = (buf[s + 3] << 8) | buf[s + 4];
  const out = Buffer.allocUnsafe(5);
  for (let i = 0; i < 5; i++) out[i] = buf[s + i];
  if (sub === 0) return out;
  if (sub === 1 || sub === 10) {
    if (sub === 1 ? data !== 0 && data !== 0xFF00 : data !== 0) return exception(8, 3);
    for (const k of Object.keys(counters)) counters[k] = 0;
    return out;
  }
  const name = COUNTER_OF[sub];
  if (name === undefined) return exception(8, 1);
  if (data !== 0) return exception(8, 3);
  out.writeUInt16BE(counters[name] & 0xFFFF, 3);
  return out;
}

module.exports = { answerDiagnostics, newCounters, COUNTER_OF };
