'use strict';

/**
 * Modbus operations: what to ask a device, validated once at the boundary (design.md "Operation").
 *
 * Object form (addresses are protocol addresses, 0-based, as on the wire: no 4xxxx offsets):
 *   { fc: 3, address: 0, quantity: 10, unitId?: 1 }             reads, FC 1-4
 *   { fc: 5, address: 3, value: true }                           FC5: boolean or 0/1
 *   { fc: 6, address: 10, value: 123 }                           FC6: 0..65535, or -32768..-1 as int16
 *   { fc: 15, address: 0, values: [true, 0, 1] }                 FC15: booleans or 0/1
 *   { fc: 16, address: 0, values: [1, -2, 3] }                   FC16: uint16 or int16 numbers, or a Buffer
 * `fc` may be a name: readCoils, readDiscreteInputs, readHoldingRegisters, readInputRegisters,
 * writeSingleCoil (writeCoil), writeSingleRegister (writeRegister), writeMultipleCoils (writeCoils),
 * writeMultipleRegisters (writeRegisters); case, '_' and '-' are ignored (READ_HOLDING_REGISTERS works).
 * For FC15/16 `quantity` is optional (= values.length) and `value` is accepted as an alias of `values`.
 *
 * String form (CLI, Node-RED fields), see parseOpString:
 *   fc:address[:quantity][=values][@unitId]
 *   "3:0:10"  "4:100" (quantity 1)  "6:10=123"  "6:10=-1"  "6:10=0x1F"  "16:0=1,2,3"  "16:0:3=1,2,3"
 *   "5:3=on"  "5:3=off"  "15:0=1,0,1,1"  "3:0:10@2" (unit 2)  "readHoldingRegisters:0:10"
 *
 * A normalized op is frozen and branded, so a client skips re-validation and reuses its encoded PDU.
 */

const { NinesError } = require('../../base/errors');
const C = require('../../base/constants');
const { FC } = require('./frame');

/** Brand on ops that came out of validateOp (non-enumerable, so deepEqual ignores it) */
const kValid = Symbol('nines.modbus.validOp');
/** Per-op cache box {pdu: Buffer|null} of a normalized op (non-enumerable; the op itself is frozen) */
const kPdu = Symbol('nines.modbus.pdu');

/** Name → function code. Keys are lower-case without separators (see fcKey). */
const FC_NAMES = Object.freeze({
  readcoils: 1,
  readdiscreteinputs: 2,
  readinputstatus: 2,
  readholdingregisters: 3,
  readinputregisters: 4,
  writesinglecoil: 5,
  writecoil: 5,
  writesingleregister: 6,
  writeregister: 6,
  writemultiplecoils: 15,
  writecoils: 15,
  forcemultiplecoils: 15,
  writemultipleregisters: 16,
  writeregisters: 16
});

/** Per function code: quantity limit and which fields it takes. Data, not nested ifs. */
const RULES = Object.freeze({
  1: { kind: 'readBits', max: C.MODBUS_MAX_READ_BITS },
  2: { kind: 'readBits', max: C.MODBUS_MAX_READ_BITS },
  3: { kind: 'readRegs', max: C.MODBUS_MAX_READ_REGISTERS },
  4: { kind: 'readRegs', max: C.MODBUS_MAX_READ_REGISTERS },
  5: { kind: 'writeBit', max: 1 },
  6: { kind: 'writeReg', max: 1 },
  15: { kind: 'writeBits', max: C.MODBUS_MAX_WRITE_BITS },
  16: { kind: 'writeRegs', max: C.MODBUS_MAX_WRITE_REGISTERS }
});

const KNOWN_FIELDS = ['fc', 'address', 'quantity', 'value', 'values', 'unitId'];

/**
 * @param {string} field
 * @param {unknown} value
 * @param {string} rule what the field must be
 * @returns {never}
 */
function fail (field, value, rule) {
  const name = field === 'op' ? 'op' : `op.${field}`;
  throw new NinesError('NINES_ERR_INVALID_OP', `${name} ${rule}; got ${show(value)}`, { field, value: jsonable(value), rule });
}

/** @param {unknown} v @returns {string} a short printable form of a bad value */
function show (v) {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v);
  if (Array.isArray(v)) return v.length > 8 ? `an array of ${v.length}` : JSON.stringify(v.map(jsonable));
  if (Buffer.isBuffer(v)) return `a Buffer of ${v.length} bytes`;
  if (typeof v === 'bigint') return `${v}n`;
  if (v === undefined || typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  return typeof v;
}

/** @param {unknown} v @returns {unknown} a value that survives JSON and postMessage */
function jsonable (v) {
  if (typeof v === 'bigint') return String(v);
  if (Buffer.isBuffer(v)) return v.toString('hex');
  if (typeof v === 'function' || typeof v === 'symbol') return String(v);
  if (Array.isArray(v)) return v.length > 8 ? `array(${v.length})` : v.map(jsonable);
  if (v !== null && typeof v === 'object') return '[object]';
  return v;
}

/** @param {string} name @returns {string} */
function fcKey (name) {
  return name.toLowerCase().replace(/[\s_-]/g, '');
}

/**
 * Resolves a function code given as a number, a decimal string or a name.
 * @param {unknown} fc
 * @returns {number} one of 1-6, 15, 16
 */
function resolveFc (fc) {
  let n = fc;
  if (typeof fc === 'string') {
    const t = fc.trim();
    n = /^\d+$/.test(t) ? Number(t) : FC_NAMES[fcKey(t)];
    if (n === undefined) fail('fc', fc, `must be 1-6, 15 or 16, or a name such as readHoldingRegisters (known: ${Object.keys(FC).join(', ')})`);
  }
  if (typeof n !== 'number' || !RULES[n]) fail('fc', fc, 'must be one of 1, 2, 3, 4, 5, 6, 15, 16 (or a name such as readHoldingRegisters)');
  return n;
}

/** @param {unknown} v @param {string} field @param {number} lo @param {number} hi @returns {number} */
function intIn (v, field, lo, hi) {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi) fail(field, v, `must be an integer from ${lo} to ${hi}`);
  return v;
}

/** @param {unknown} v @param {string} field @returns {boolean} */
function toBit (v, field) {
  if (v === true || v === 1) return true;
  if (v === false || v === 0) return false;
  return fail(field, v, 'must be a boolean or 0/1');
}

/** @param {unknown} v @param {string} field @returns {number} uint16 */
function toRegister (v, field) {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < -32768 || v > 65535) {
    fail(field, v, 'must be an integer from 0 to 65535 (or -32768 to -1 as int16)');
  }
  return v & 0xFFFF;
}

/**
 * Validates and normalizes a Modbus operation.
 * @param {object} op see the file header for the accepted forms
 * @returns {Readonly<{fc: number, address: number, quantity: number, value?: boolean|number,
 *   values?: ReadonlyArray<boolean>|ReadonlyArray<number>, unitId?: number}>} frozen; `value` of FC6 and
 *   `values` of FC16 hold uint16 (int16 input converted); `unitId` only when given
 * @throws {NinesError} NINES_ERR_INVALID_OP with details {field, value, rule}
 */
function validateOp (op) {
  if (op !== null && typeof op === 'object' && op[kValid] === true) return op;
  if (op === null || typeof op !== 'object' || Array.isArray(op) || Buffer.isBuffer(op)) {
    fail('op', op, 'must be an object such as {fc: 3, address: 0, quantity: 10} or a string such as "3:0:10"');
  }
  for (const key of Object.keys(op)) {
    if (!KNOWN_FIELDS.includes(key) && op[key] !== undefined) fail(key, op[key], `is not a Modbus op field (known: ${KNOWN_FIELDS.join(', ')})`);
  }
  if (op.fc === undefined) fail('fc', undefined, 'is required (1-6, 15, 16 or a name such as readHoldingRegisters)');
  const fc = resolveFc(op.fc);
  const rule = RULES[fc];
  if (op.address === undefined) fail('address', undefined, 'is required (an integer from 0 to 65535)');
  const address = intIn(op.address, 'address', 0, 65535);
  /** @type {any} */
  const out = { fc, address, quantity: 0 };

  switch (rule.kind) {
    case 'readBits':
    case 'readRegs':
      if (op.value !== undefined) fail('value', op.value, `is not taken by read FC${fc}`);
      if (op.values !== undefined) fail('values', op.values, `is not taken by read FC${fc}`);
      if (op.quantity === undefined) fail('quantity', undefined, `is required for FC${fc} (1 to ${rule.max})`);
      out.quantity = intIn(op.quantity, 'quantity', 1, rule.max);
      break;
    case 'writeBit':
    case 'writeReg':
      if (op.values !== undefined) fail('values', op.values, `is not taken by FC${fc} (write one ${rule.kind === 'writeBit' ? 'coil' : 'register'} with value)`);
      if (op.quantity !== undefined && op.quantity !== 1) fail('quantity', op.quantity, `must be 1 or absent for FC${fc}`);
      if (op.value === undefined) fail('value', undefined, `is required for FC${fc}`);
      out.quantity = 1;
      out.value = rule.kind === 'writeBit' ? toBit(op.value, 'value') : toRegister(op.value, 'value');
      break;
    default: {
      let field = 'values';
      let list = op.values;
      if (list === undefined && op.value !== undefined) { field = 'value'; list = op.value; }
      else if (op.value !== undefined) fail('value', op.value, `must not be given together with values for FC${fc}`);
      out.values = rule.kind === 'writeBits' ? bitList(list, field, fc, rule.max) : registerList(list, field, fc, rule.max);
      out.quantity = out.values.length;
      if (op.quantity !== undefined && op.quantity !== out.quantity) {
        fail('quantity', op.quantity, `must equal the number of values (${out.quantity}) for FC${fc}`);
      }
    }
  }
  if (address + out.quantity > 65536) fail('quantity', out.quantity, `must keep address + quantity within 65536 (address ${address})`);
  if (op.unitId !== undefined) out.unitId = intIn(op.unitId, 'unitId', 0, 255);
  if (out.values) Object.freeze(out.values);
  Object.defineProperty(out, kValid, { value: true });
  Object.defineProperty(out, kPdu, { value: { pdu: null } });
  return Object.freeze(out);
}

/** @returns {boolean[]} */
function bitList (list, field, fc, max) {
  if (!Array.isArray(list)) fail(field, list, `must be an array of 1 to ${max} booleans or 0/1 for FC${fc}`);
  if (list.length < 1 || list.length > max) fail(field, list, `must hold 1 to ${max} values for FC${fc}`);
  const out = new Array(list.length);
  for (let i = 0; i < list.length; i++) out[i] = toBit(list[i], `${field}[${i}]`);
  return out;
}

/** @returns {number[]} uint16 */
function registerList (list, field, fc, max) {
  if (Buffer.isBuffer(list)) {
    // A Buffer carries register bytes big-endian, as typed encoders (float32, int32…) produce them
    if (list.length < 2 || list.length > 2 * max || list.length % 2) fail(field, list, `as a Buffer must hold an even number of bytes, 2 to ${2 * max}, for FC${fc}`);
    const out = new Array(list.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = list.readUInt16BE(2 * i);
    return out;
  }
  if (!Array.isArray(list)) fail(field, list, `must be an array of 1 to ${max} integers (0 to 65535 or -32768 to -1) for FC${fc}`);
  if (list.length < 1 || list.length > max) fail(field, list, `must hold 1 to ${max} values for FC${fc}`);
  const out = new Array(list.length);
  for (let i = 0; i < list.length; i++) out[i] = toRegister(list[i], `${field}[${i}]`);
  return out;
}

const OP_STRING = /^([A-Za-z_-][A-Za-z_-]*|\d+):(\d+)(?::(\d+))?(?:=([^@]*))?(?:@(\d+))?$/;

/**
 * Parses the string form `fc:address[:quantity][=values][@unitId]` (see the file header) and validates it.
 * Numbers are decimal; register values may also be hex (0x1F) or negative int16; coil values are
 * on/off/true/false/1/0. A read without a quantity reads 1.
 * @param {string} text
 * @returns {ReturnType<typeof validateOp>}
 * @throws {NinesError} NINES_ERR_INVALID_OP (field "op" for a malformed string, else the offending field)
 */
function parseOpString (text) {
  if (typeof text !== 'string') fail('op', text, 'must be a string such as "3:0:10" or "6:10=123"');
  const m = OP_STRING.exec(text.replace(/\s+/g, ''));
  if (!m) fail('op', text, 'must look like fc:address[:quantity][=values][@unitId], e.g. "3:0:10", "6:10=123", "16:0=1,2,3", "5:3=on"');
  const fc = resolveFc(m[1]);
  const kind = RULES[fc].kind;
  /** @type {any} */
  const op = { fc, address: Number(m[2]) };
  if (m[3] !== undefined) op.quantity = Number(m[3]);
  if (m[5] !== undefined) op.unitId = Number(m[5]);
  const isWrite = fc >= 5;
  if (!isWrite) {
    if (m[4] !== undefined) fail('op', text, `must not carry "=values" for read FC${fc}`);
    if (op.quantity === undefined) op.quantity = 1;
  } else {
    if (m[4] === undefined || m[4] === '') fail('op', text, `must carry "=value" for write FC${fc}, e.g. "${fc}:${m[2]}=${kind.endsWith('Bits') || kind === 'writeBit' ? '1' : '123'}"`);
    const parts = m[4].split(',');
    const parse = kind === 'writeBit' || kind === 'writeBits' ? parseBitWord : parseRegisterWord;
    const vals = parts.map((p, i) => parse(p, text, i));
    if (fc === 5 || fc === 6) {
      if (vals.length !== 1) fail('op', text, `must carry exactly one value for FC${fc}`);
      op.value = vals[0];
    } else {
      op.values = vals;
    }
  }
  return validateOp(op);
}

/** @returns {boolean|unknown} */
function parseBitWord (word, text, i) {
  const w = word.toLowerCase();
  if (w === 'on' || w === 'true' || w === '1') return true;
  if (w === 'off' || w === 'false' || w === '0') return false;
  return fail('op', text, `value ${i} ("${word}") must be on, off, true, false, 1 or 0`);
}

/** @returns {number} */
function parseRegisterWord (word, text, i) {
  if (/^-?\d+$/.test(word)) return Number(word);
  if (/^0x[0-9a-f]{1,4}$/i.test(word)) return parseInt(word.slice(2), 16);
  return fail('op', text, `value ${i} ("${word}") must be a decimal integer or 0x hex`);
}

/**
 * Accepts either form.
 * @param {object|string} op
 * @returns {ReturnType<typeof validateOp>}
 */
function toOp (op) {
  return typeof op === 'string' ? parseOpString(op) : validateOp(op);
}

/**
 * A human description used in error messages: "unit 1 FC3 address 40000 quantity 10".
 * @param {{fc: number, address: number, quantity: number, value?: unknown}} op a normalized op
 * @param {number} [unitId] the effective unit id (defaults to op.unitId)
 * @returns {string}
 */
function describeOp (op, unitId = op.unitId) {
  const unit = unitId === undefined ? '' : `unit ${unitId} `;
  if (op.fc === 5 || op.fc === 6) return `${unit}FC${op.fc} address ${op.address} value ${op.value}`;
  return `${unit}FC${op.fc} address ${op.address} quantity ${op.quantity}`;
}

/**
 * Writes an op back in its string form (parseOpString(formatOp(op)) gives the same op).
 * @param {ReturnType<typeof validateOp>} op
 * @returns {string}
 */
function formatOp (op) {
  let s = `${op.fc}:${op.address}`;
  if (op.fc <= 4) s += `:${op.quantity}`;
  else if (op.fc === 5) s += `=${op.value ? 1 : 0}`;
  else if (op.fc === 6) s += `=${op.value}`;
  else s += `=${op.values.map(Number).join(',')}`;
  if (op.unitId !== undefined) s += `@${op.unitId}`;
  return s;
}

module.exports = { validateOp, parseOpString, toOp, describeOp, formatOp, resolveFc, FC_NAMES, kValid, kPdu };
