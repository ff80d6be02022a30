'use strict';

/**
 * The Modbus request of one msg: the node's settings, overridden by msg.fc, msg.address,
 * msg.quantity and msg.unitId when the msg carries them. Plus the typed decoding options the
 * read and write nodes share. Checked here with NINES_ERR_INVALID_ARG naming the msg property (a
 * value to write that its type cannot hold: NINES_ERR_INVALID_VALUE, never rounded or clamped);
 * the driver's validateOp checks the op again (NINES_ERR_INVALID_OP).
 */

const { normalizeOptions, encodeValues, toBit } = require('../../gateway/values/registers');
const { NinesError } = require('../../gateway/base/errors');
const { invalidArg, nodeError } = require('./errors');

/** An integer from the msg or the config; Node-RED fields and inject nodes often give strings. */
function intField (value, field, lo, hi) {
  const n = typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < lo || n > hi) {
    throw invalidArg(field, `${field} must be an integer from ${lo} to ${hi}; got ${JSON.stringify(value)}`, { value });
  }
  return n;
}

function present (v) {
  return v !== undefined && v !== null && v !== '';
}

/**
 * @param {object} msg
 * @param {object} config the node's settings ({fc, address, quantity, unitId})
 * @param {number[]} fcs the function codes this node accepts
 * @param {boolean} withQuantity reads take a quantity, writes derive it from the values
 * @returns {{fc: number, address: number, quantity?: number, unitId?: number}}
 */
function requestFields (msg, config, fcs, withQuantity) {
  const from = (name) => present(msg[name]) ? [msg[name], `msg.${name}`] : [config[name], name];
  const [fcValue, fcField] = from('fc');
  const fc = intField(fcValue, fcField, 1, 16);
  if (!fcs.includes(fc)) throw invalidArg(fcField, `${fcField} ${fc} is not one this node sends; it takes FC ${fcs.join(', ')}`, { value: fc });
  const out = { fc, address: intField(...from('address'), 0, 65535) };
  if (withQuantity) out.quantity = intField(...from('quantity'), 1, fc <= 2 ? 2000 : 125);
  const [unitValue, unitField] = from('unitId');
  if (present(unitValue)) out.unitId = intField(unitValue, unitField, 0, 255);
  return out;
}

/**
 * The unit a read or write node is set to talk to, for its status on a line of units (its requests
 * check the field themselves, in requestFields).
 * @param {object} config the node's settings
 * @returns {number|undefined} undefined: none set (the device's), or not a unit id
 */
function configuredUnit (config) {
  const v = config.unitId;
  return present(v) && /^\s*\d{1,3}\s*$/.test(String(v)) ? Number(v) : undefined;
}

/**
 * Decoding options from a node's settings, checked once at deploy.
 * @param {object} config {dataType, wordOrder, byteOrder, scale, offset}; `dataType`, because a
 *   node's `type` property is its node type
 * @returns {object} normalized decode options
 */
function typeOptions (config) {
  return normalizeOptions({
    type: config.dataType || 'uint16',
    wordOrder: config.wordOrder || 'big',
    byteOrder: config.byteOrder || 'big',
    scale: config.scale,
    offset: config.offset
  });
}

/**
 * A coil's value (and an ASCII module's output, lib/ascii-outputs.js): true/false, 1/0 or "on"/"off",
 * and "1"/"0", "true"/"false" as inject nodes send them. Anything else is a value the coil cannot
 * hold, refused as registers.js refuses one for a register.
 * @param {unknown} v
 * @param {string} field the msg property, for the error: "msg.payload[2]"
 * @param {string} [what] what the value is for, in the error: " for FC 15"
 * @returns {boolean}
 * @throws {NinesError} NINES_ERR_INVALID_VALUE naming the field
 */
function onOff (v, field, what = '') {
  if (v === true || v === 1 || v === 'on' || v === '1' || v === 'true') return true;
  if (v === false || v === 0 || v === 'off' || v === '0' || v === 'false') return false;
  const got = v === undefined ? 'nothing' : JSON.stringify(v);
  throw nodeError(new NinesError('NINES_ERR_INVALID_VALUE', `${field} must be true/false, 1/0 or "on"/"off"${what}; got ${got}`, { field, value: v, type: 'bool' }));
}

/**
 * The op for a write, values taken from msg.payload.
 * @param {object} fields {fc, address, unitId}
 * @param {unknown} payload
 * @param {object} typeOpts decode options
 * @returns {object} an op for validateOp
 */
function writeOp (fields, payload, typeOpts) {
  const op = Object.assign({}, fields);
  if (payload === undefined || payload === null) throw invalidArg('msg.payload', `msg.payload must hold the value(s) to write for FC ${fields.fc}; got ${payload}`);
  if (fields.fc === 5 || fields.fc === 15) {
    // the one rule for a bit to write, as for a coil tag (values/registers.js toBit): no text
    const bit = (v, i) => {
      try { return toBit(v, `msg.payload${i === undefined ? '' : `[${i}]`}`); } catch (err) { throw nodeError(err); }
    };
    if (fields.fc === 5) {
      if (Array.isArray(payload)) throw invalidArg('msg.payload', 'FC 5 writes one coil: msg.payload must be one value, not an array (use FC 15 for several)');
      op.value = bit(payload);
    } else {
      op.values = (Array.isArray(payload) ? payload : [payload]).map(bit);
    }
    return op;
  }
  if (typeof payload === 'object' && !Array.isArray(payload) && !Buffer.isBuffer(payload)) {
    throw invalidArg('msg.payload', `msg.payload must be a number, an array of numbers${typeOpts.type === 'string' ? ' or a string' : ''} for FC ${fields.fc}; got an object`);
  }
  const words = Buffer.isBuffer(payload) ? payload : encodeValues(payload, typeOpts);
  if (fields.fc === 6) {
    const n = Buffer.isBuffer(words) ? words.length / 2 : words.length;
    if (n !== 1) throw invalidArg('msg.payload', `FC 6 writes one register, but the value(s) take ${n} as ${typeOpts.type}; use FC 16`);
    op.value = Buffer.isBuffer(words) ? words.readUInt16BE(0) : words[0];
  } else {
    op.values = words;
  }
  return op;
}

module.exports = { requestFields, typeOptions, intField, writeOp, configuredUnit, onOff };
