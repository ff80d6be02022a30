'use strict';

/**
 * What a simulated device answers to FC43/14 read device identification (Modbus Application Protocol
 * v1.1b3 §6.21): its objects, from a preset or given, and the reply to one request. A device with
 * more objects than one reply holds says "more follows" with the next object id, as real ones do.
 */

const { MEI_READ_DEVICE_ID, FC43_HEADER, MAX_PDU_LENGTH } = require('../../drivers/modbus/frame');
const { OBJECT_NAMES } = require('../../drivers/modbus/device-id');
const { invalid, objectOption } = require('./validate');

/** The last object id of each read code's stream: 1 basic, 2 regular, 3 extended (§6.21) */
const LAST_OF_CODE = Object.freeze({ 1: 0x02, 2: 0x7F, 3: 0xFF });
/** Longest object text: an object's length is one byte, and it must leave room in a PDU for the header */
const MAX_OBJECT_LENGTH = MAX_PDU_LENGTH - FC43_HEADER - 2;

/**
 * Presets: `nines` (the default) says it is this simulator; the others name the device the simulator
 * stands in for, and say too that it is simulated.
 */
const PRESETS = Object.freeze({
  nines: { vendorName: 'nines', productCode: 'NINES-SIM', revision: '1.0', vendorUrl: 'https://example.invalid/nines', productName: 'nines Modbus simulator', modelName: 'modbus-sim' },
  'ED-588': { vendorName: 'Brainboxes', productCode: 'ED-588', revision: '1.0', vendorUrl: 'https://www.brainboxes.com', productName: 'ED-588 (nines simulator)', modelName: 'ED-588' },
  'ED-560': { vendorName: 'Brainboxes', productCode: 'ED-560', revision: '1.0', vendorUrl: 'https://www.brainboxes.com', productName: 'ED-560 (nines simulator)', modelName: 'ED-560' }
});

/**
 * @typedef {object} Identity a device's identification objects, by id; object 6
 *   (UserApplicationName) is "unit <id>" unless given, so each unit of a line tells itself apart
 * @property {Map<number, Buffer>} objects
 * @property {boolean} unitName object 6 is the unit's ("unit <id>")
 */

/**
 * Checks the `identification` option: a preset name, or objects by name (vendorName … userApplicationName)
 * and `objects` by id (0x80-0xFF: extended), on top of the `nines` preset or the one `preset` names.
 * @param {unknown} raw
 * @returns {Identity}
 */
function buildIdentity (raw) {
  const given = typeof raw === 'string' ? { preset: raw } : objectOption(raw, 'identification');
  const presetName = given.preset === undefined ? 'nines' : given.preset;
  if (!Object.prototype.hasOwnProperty.call(PRESETS, presetName)) invalid('identification.preset', presetName, `one of ${Object.keys(PRESETS).join(', ')}`);
  const objects = new Map();
  const put = (id, text, field) => {
    if (typeof text !== 'string' || text.length === 0 || text.length > MAX_OBJECT_LENGTH || !/^[\x20-\x7E]*$/.test(text)) {
      invalid(field, text, `printable ASCII text of 1 to ${MAX_OBJECT_LENGTH} characters`);
    }
    objects.set(id, Buffer.from(text, 'latin1'));
  };
  const preset = PRESETS[presetName];
  OBJECT_NAMES.forEach((name, id) => { if (preset[name] !== undefined) put(id, preset[name], `identification.${name}`); });
  for (const key of Object.keys(given)) {
    if (key === 'preset' || key === 'objects') continue;
    const id = OBJECT_NAMES.indexOf(key);
    if (id < 0) invalid(`identification.${key}`, given[key], `absent: known are preset, objects, ${OBJECT_NAMES.join(', ')}`);
    put(id, given[key], `identification.${key}`);
  }
  const extra = objectOption(given.objects, 'identification.objects');
  for (const [key, text] of Object.entries(extra)) {
    const id = Number(key);
    if (!/^\d+$/.test(key) || id < 0x80 || id > 0xFF) invalid(`identification.objects.${key}`, key, 'an extended object id, 128 to 255');
    put(id, text, `identification.objects.${key}`);
  }
  return { objects, unitName: given.userApplicationName === undefined };
}

/**
 * The objects of a unit, sorted by id (object 6 named for the unit unless given).
 * @param {Identity} identity @param {number} unitId -1: unknown
 * @returns {Array<[number, Buffer]>}
 */
function objectsOf (identity, unitId) {
  const out = [...identity.objects.entries()];
  if (identity.unitName && unitId >= 0) out.push([6, Buffer.from(`unit ${unitId}`, 'latin1')]);
  return out.sort((a, b) => a[0] - b[0]);
}

/**
 * Answers an FC43 request PDU at buf[s, s + len).
 * @param {Identity} identity
 * @param {Buffer} buf @param {number} s @param {number} len
 * @param {number} unitId the unit asked (-1: unknown)
 * @param {(fc: number, code: number) => Buffer} exception builds an exception PDU
 * @returns {Buffer}
 */
function answerIdentification (identity, buf, s, len, unitId, exception) {
  const FC = 43;
  if (len < 2) return exception(FC, 3);
  // other MEI types (13, CANopen) are functions this device lacks
  if (buf[s + 1] !== MEI_READ_DEVICE_ID) return exception(FC, 1);
  if (len !== 4) return exception(FC, 3);
  const code = buf[s + 2];
  const first = buf[s + 3];
  const all = objectsOf(identity, unitId);
  const extended = all.some(([id]) => id >= 0x80);
  const conformity = extended ? 0x83 : 0x82;
  if (code === 4) {
    const one = all.find(([id]) => id === first);
    if (one === undefined) return exception(FC, 2);
    return reply(code, conformity, [one], false, 0);
  }
  if (code < 1 || code > 3) return exception(FC, 3);
  const last = LAST_OF_CODE[code];
  // an object id the stream does not hold restarts it at the beginning (§6.21)
  let list = all.filter(([id]) => id >= first && id <= last);
  if (list.length === 0 || list[0][0] !== first) list = all.filter(([id]) => id <= last);
  const fit = [];
  let room = MAX_PDU_LENGTH - FC43_HEADER;
  for (const o of list) {
    if (2 + o[1].length > room) break;
    fit.push(o);
    room -= 2 + o[1].length;
  }
  const more = fit.length < list.length;
  return reply(code, conformity, fit, more, more ? list[fit.length][0] : 0);
}

/** @returns {Buffer} an FC43/14 reply PDU */
function reply (code, conformity, objects, more, next) {
  const size = objects.reduce((n, [, b]) => n + 2 + b.length, FC43_HEADER);
  const out = Buffer.allocUnsafe(size);
  out[0] = 43;
  out[1] = MEI_READ_DEVICE_ID;
  out[2] = code;
  out[3] = conformity;
  out[4] = more ? 0xFF : 0x00;
  out[5] = next;
  out[6] = objects.length;
  let off = FC43_HEADER;
  for (const [id, b] of objects) {
    out[off] = id;
    out[off + 1] = b.length;
    b.copy(out, off + 2);
    off += 2 + b.length;
  }
  return out;
}

module.exports = { buildIdentity, answerIdentification, objectsOf, PRESETS };
