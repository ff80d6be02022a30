'use strict';

/**
 * Who a unit is: FC43/14 device identification, the basic objects first (vendor, product code,
 * revision, which every device with FC43 has), then the regular ones (URL, product and model name,
 * application name) and the extended ones where the unit's conformity level says it has them.
 */

const { readDeviceIdentification } = require('../drivers/modbus/device-id');

/** Conformity level (without its 0x80 "one object" bit) → the highest read code the unit serves */
const LEVEL_MASK = 0x7F;

/**
 * @typedef {object} Identity
 * @property {boolean} supported false: the unit lacks FC43 (or refused it)
 * @property {string} [vendorName] @property {string} [productCode] @property {string} [revision]
 * @property {string} [vendorUrl] @property {string} [productName] @property {string} [modelName]
 * @property {string} [userApplicationName]
 * @property {Record<number, string>} [objects]
 * @property {number} [conformityLevel]
 * @property {string} [error] why not, when not supported: the error code
 * @property {number} requests
 */

/**
 * @param {{request: (op: object, opts?: object) => Promise<any>}} client a ModbusClient, or one that asks again after a timeout
 * @param {number} unitId
 * @param {number} timeoutMs
 * @returns {Promise<Identity>}
 * @throws {NinesError} a failure of the line itself (not connected, closed)
 */
async function identify (client, unitId, timeoutMs) {
  let requests = 0;
  try {
    const basic = await readDeviceIdentification(client, { readCode: 1, unitId, timeoutMs });
    requests += basic.requests;
    let id = basic;
    const level = basic.conformityLevel & LEVEL_MASK;
    for (const readCode of [2, 3]) {
      if (level < readCode) break;
      const more = await readDeviceIdentification(client, { readCode, unitId, timeoutMs });
      requests += more.requests;
      id = { ...id, ...more, objects: { ...id.objects, ...more.objects } };
    }
    return { supported: true, ...id, requests };
  } catch (err) {
    requests += 1;
    if (['NINES_ERR_FC_UNSUPPORTED', 'NINES_ERR_MODBUS_EXCEPTION', 'NINES_ERR_REPLY_TIMEOUT', 'NINES_ERR_BAD_REPLY', 'NINES_ERR_BAD_CHECKSUM'].includes(err.code)) {
      return { supported: false, error: err.code, requests };
    }
    throw err;
  }
}

module.exports = { identify };
