'use strict';

/**
 * FC43/14 read device identification, whole: a device answers with as many objects as fit one PDU and
 * says "more follows" with the next object id; this asks again from there until it has them all
 * (Modbus Application Protocol v1.1b3 §6.21). The objects 0-6 have names; the rest (0x80-0xFF,
 * extended, vendor-defined) are kept by id.
 */

const { NinesError } = require('../../base/errors');
const { validateOp } = require('./op');

/** Object id → the name nines gives its text (§6.21, table of objects) */
const OBJECT_NAMES = Object.freeze(['vendorName', 'productCode', 'revision', 'vendorUrl', 'productName', 'modelName', 'userApplicationName']);
/** Requests one identification may take: 256 objects at one per reply at worst */
const MAX_REQUESTS = 256;

/**
 * @typedef {object} DeviceIdentification
 * @property {string} [vendorName] object 0 (basic)
 * @property {string} [productCode] object 1 (basic)
 * @property {string} [revision] object 2, MajorMinorRevision (basic)
 * @property {string} [vendorUrl] object 3 (regular)
 * @property {string} [productName] object 4 (regular)
 * @property {string} [modelName] object 5 (regular)
 * @property {string} [userApplicationName] object 6 (regular)
 * @property {Record<number, string>} objects every object read, by id
 * @property {number} conformityLevel as the device states it: 0x01-0x03 stream access up to basic,
 *   regular or extended, 0x81-0x83 the same plus one-object access
 * @property {number} requests FC43 requests it took
 */

/**
 * Reads a device's identification, all pieces of it.
 * @param {{request: (op: object, opts?: object) => Promise<any>}} client a ModbusClient
 * @param {{readCode?: number, objectId?: number, unitId?: number, timeoutMs?: number}} [opts] readCode 1
 *   basic, 2 regular (default), 3 extended, 4 the one object objectId
 * @returns {Promise<DeviceIdentification>}
 * @throws {NinesError} what request() rejects with (NINES_ERR_FC_UNSUPPORTED when the device lacks
 *   FC43), NINES_ERR_INVALID_OP for a bad read code or object id, NINES_ERR_BAD_REPLY when the device's
 *   "next object id" does not move forward
 */
async function readDeviceIdentification (client, opts = {}) {
  const readCode = opts.readCode === undefined ? 2 : opts.readCode;
  let objectId = opts.objectId === undefined ? 0 : opts.objectId;
  const reqOpts = opts.timeoutMs === undefined ? undefined : { timeoutMs: opts.timeoutMs };
  /** @type {DeviceIdentification} */
  const out = { objects: {}, conformityLevel: 0, requests: 0 };
  for (;;) {
    const op = validateOp(opts.unitId === undefined ? { fc: 43, readCode, objectId } : { fc: 43, readCode, objectId, unitId: opts.unitId });
    const reply = await client.request(op, reqOpts);
    out.requests++;
    const d = reply.data;
    out.conformityLevel = d.conformityLevel;
    for (const [id, text] of d.objects) {
      out.objects[id] = text;
      if (id < OBJECT_NAMES.length) out[OBJECT_NAMES[id]] = text;
    }
    if (!d.moreFollows || readCode === 4) return out;
    // a device whose next object id does not move on would be asked forever
    if (d.nextObjectId <= objectId || out.requests >= MAX_REQUESTS) {
      throw new NinesError('NINES_ERR_BAD_REPLY', `device identification of unit ${reply.unitId}: "more follows" with next object ${d.nextObjectId} after a request from object ${objectId}`,
        { unitId: reply.unitId, objectId, nextObjectId: d.nextObjectId, requests: out.requests });
    }
    objectId = d.nextObjectId;
  }
}

module.exports = { readDeviceIdentification, OBJECT_NAMES };
