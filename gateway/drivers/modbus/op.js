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
 *   { fc: 22, address: 7, andMask: 0xFFF7, orMask: 0x0008 }     FC22 mask write: (current AND andMask) OR (orMask AND NOT andMask)
 *   { fc: 23, address: 0, quantity: 4, writeAddress: 10, values: [1, 2] }  FC23: writes values at writeAddress, then
 *                                                                reads quantity registers at address (the spec's order)
 *   { fc: 8, subFunction: 11, data?: 0 }                         FC8 diagnostics (sub-functions in DIAGNOSTICS)
 *   { fc: 43, readCode: 1, objectId?: 0 }                        FC43/14 read device identification (read code 1-4)
 * `fc` may be a name: readCoils, readDiscreteInputs, readHoldingRegisters, readInputRegisters,
 * writeSingleCoil (writeCoil), writeSingleRegister (writeRegister), writeMultipleCoils (writeCoils),
 * writeMultipleRegisters (writeRegisters), maskWriteRegister, readWriteMultipleRegisters (readWriteRegisters),
 * diagnostics, readDeviceIdentification; case, '_' and '-' are ignored (READ_HOLDING_REGISTERS works).
 * For FC15/16 `quantity` is optional (= values.length) and `value` is accepted as an alias of `values`.
 *
 * String form (CLI, Node-RED fields), see parseOpString:
 *   fc:address[:quantity][=values][@unitId]
 *   "3:0:10"  "4:100" (quantity 1)  "6:10=123"  "6:10=-1"  "6:10=0x1F"  "16:0=1,2,3"  "16:0:3=1,2,3"
 *   "5:3=on"  "5:3=off"  "15:0=1,0,1,1"  "3:0:10@2" (unit 2)  "readHoldingRegisters:0:10"
 *   "22:7=0xFFF7,0x0008" (andMask, orMask)  "23:0:4=10:1,2" (read 4 at 0, write 1,2 at 10)
 *   "8:11" (sub-function 11)  "8:0=0x1234" (sub-function 0, data 0x1234)  "43:1" (read code 1)  "43:4:129" (object 129)
 *
 * A normalized op is frozen and branded, so a client skips re-validation and reuses its encoded PDU.
 */

const { NinesError } = require('../../base/errors');
const { FC, hex4 } = require('./frame');
const { FCS, LIST, traitsOf } = require('./function-codes');

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
  writeregisters: 16,
  diagnostics: 8,
  maskwriteregister: 22,
  readwritemultipleregisters: 23,
  readwriteregisters: 23,
  readdeviceidentification: 43
});

/**
 * FC8 sub-functions nines sends, and the data word each takes (Modbus over Serial Line v1.02 §6.1 and
 * the Application Protocol §6.8): `data` lists the values allowed (null: any 16-bit word); `changes`:
 * it changes the device's counters (restart, clear), as a write changes what a device holds.
 */
const DIAGNOSTICS = Object.freeze({
  0: { name: 'returnQueryData', data: null },
  1: { name: 'restartCommunications', data: [0x0000, 0xFF00], changes: true },
  10: { name: 'clearCounters', data: [0], changes: true },
  11: { name: 'busMessageCount', data: [0] },
  12: { name: 'busCommunicationErrorCount', data: [0] },
  13: { name: 'busExceptionErrorCount', data: [0] },
  14: { name: 'serverMessageCount', data: [0] },
  15: { name: 'serverNoResponseCount', data: [0] },
  16: { name: 'serverNakCount', data: [0] },
  17: { name: 'serverBusyCount', data: [0] },
  18: { name: 'busCharacterOverrunCount', data: [0] }
});

/** FC43/14 read codes: 1 basic, 2 regular, 3 extended (stream access), 4 one object (§6.21) */
const READ_CODES = Object.freeze({ basic: 1, regular: 2, extended: 3, one: 4 });

const KNOWN_FIELDS = Object.freeze(['fc', 'address', 'quantity', 'value', 'values', 'unitId', 'andMask', 'orMask', 'writeAddress', 'subFunction', 'data', 'readCode', 'objectId']);
const KNOWN_LIST = KNOWN_FIELDS.join(', ');
/** The fields only FC8, FC22, FC23 and FC43 take */
const NEW_FIELDS = ['andMask', 'orMask', 'writeAddress', 'subFunction', 'data', 'readCode', 'objectId'];
/** The op kinds of FC1-6, 15 and 16: they say themselves what they do not take, in their own words (validateOp) */
const OLD_KINDS = ['readBits', 'readRegs', 'writeBit', 'writeReg', 'writeBits', 'writeRegs'];
/**
 * Per function code, the known fields refused at once as not taken (in KNOWN_FIELDS order, so the
 * first one given is named) and the rule that names what it takes: worked out here once, not per op.
 */
const REFUSED = Object.freeze(FCS.map((t) => t === null ? null : Object.freeze({
  fields: Object.freeze(KNOWN_FIELDS.filter((k) => k !== 'fc' && k !== 'unitId' && !t.takes.includes(k) && (!OLD_KINDS.includes(t.kind) || NEW_FIELDS.includes(k)))),
  rule: `is not taken by FC${t.fc} (it takes ${t.takes.join(', ')})`
})));
const FC_LIST = LIST.map((t) => t.fc).join(', ');
/** Property descriptors of a normalized op's brand and PDU box; the box's is filled per op (finish) */
const VALID_DESCRIPTOR = Object.freeze({ value: true });
const PDU_DESCRIPTOR = { value: null };

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
 * @returns {number} a function code nines speaks (function-codes.js)
 */
function resolveFc (fc) {
  let n = fc;
  if (typeof fc === 'string') {
    const t = fc.trim();
    n = /^\d+$/.test(t) ? Number(t) : FC_NAMES[fcKey(t)];
    if (n === undefined) fail('fc', fc, `must be one of ${FC_LIST}, or a name such as readHoldingRegisters (known: ${Object.keys(FC).join(', ')})`);
  }
  if (traitsOf(n) === null) fail('fc', fc, `must be one of ${FC_LIST} (or a name such as readHoldingRegisters)`);
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
  // an op already normalized (every request of a job or probe) returns here: kept apart from the
  // checks below, this is small enough for V8 to inline where it is called per request. Whole, the
  // function was not inlined, and at 10,000/s V8 compiled it on its own 1-2 s into a measured run
  // (--trace-opt): 0.8 ms of a helper thread that, on one core, took the CPU from the requests
  return op !== null && typeof op === 'object' && op[kValid] === true ? op : normalizeOp(op);
}

/**
 * validateOp() for an op not normalized yet.
 * @param {any} op
 * @returns {object} the normalized op
 */
function normalizeOp (op) {
  if (op === null || typeof op !== 'object' || Array.isArray(op) || Buffer.isBuffer(op)) {
    fail('op', op, 'must be an object such as {fc: 3, address: 0, quantity: 10} or a string such as "3:0:10"');
  }
  // for…in over own keys, not Object.keys: no array per op (this runs per request given as a plain object)
  for (const key in op) {
    if (!Object.prototype.hasOwnProperty.call(op, key)) continue;
    if (!KNOWN_FIELDS.includes(key) && op[key] !== undefined) fail(key, op[key], `is not a Modbus op field (known: ${KNOWN_LIST})`);
  }
  if (op.fc === undefined) fail('fc', undefined, `is required (${FC_LIST} or a name such as readHoldingRegisters)`);
  const fc = resolveFc(op.fc);
  const rule = FCS[fc];
  const refused = REFUSED[fc];
  for (let i = 0; i < refused.fields.length; i++) {
    const key = refused.fields[i];
    if (op[key] !== undefined) fail(key, op[key], refused.rule);
  }
  if (rule.kind === 'diagnostics') return finish(diagnosticsOp(op), op);
  if (rule.kind === 'deviceId') return finish(deviceIdOp(op), op);
  if (op.address === undefined) fail('address', undefined, 'is required (an integer from 0 to 65535)');
  const address = intIn(op.address, 'address', 0, 65535);
  /** @type {any} */
  const out = { fc, address, quantity: 0 };

  switch (rule.kind) {
    case 'maskWrite':
      if (op.andMask === undefined) fail('andMask', undefined, 'is required for FC22 (an integer from 0 to 65535)');
      if (op.orMask === undefined) fail('orMask', undefined, 'is required for FC22 (an integer from 0 to 65535)');
      // a normalized FC22 op carries quantity 1 (one register), so it validates again as it is
      if (op.quantity !== undefined && op.quantity !== 1) fail('quantity', op.quantity, 'must be 1 or absent for FC22');
      out.quantity = 1;
      out.andMask = intIn(op.andMask, 'andMask', 0, 65535);
      out.orMask = intIn(op.orMask, 'orMask', 0, 65535);
      break;
    case 'readWrite':
      if (op.quantity === undefined) fail('quantity', undefined, `is required for FC23: registers to read (1 to ${rule.max})`);
      out.quantity = intIn(op.quantity, 'quantity', 1, rule.max);
      if (op.writeAddress === undefined) fail('writeAddress', undefined, 'is required for FC23 (an integer from 0 to 65535)');
      out.writeAddress = intIn(op.writeAddress, 'writeAddress', 0, 65535);
      out.values = registerList(op.values, 'values', fc, rule.maxWrite);
      if (out.writeAddress + out.values.length > 65536) fail('values', op.values, `must keep writeAddress + values within 65536 (writeAddress ${out.writeAddress})`);
      break;
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
  return finish(out, op);
}

/**
 * Adds the unit id, then freezes and brands a normalized op.
 * @param {any} out @param {any} op the op given @returns {any}
 */
function finish (out, op) {
  if (op.unitId !== undefined) out.unitId = intIn(op.unitId, 'unitId', 0, 255);
  if (out.values) Object.freeze(out.values);
  Object.defineProperty(out, kValid, VALID_DESCRIPTOR);
  PDU_DESCRIPTOR.value = { pdu: null };
  Object.defineProperty(out, kPdu, PDU_DESCRIPTOR);
  PDU_DESCRIPTOR.value = null;
  return Object.freeze(out);
}

/** FC8: a known sub-function and the data word it takes (default 0). @returns {any} */
function diagnosticsOp (op) {
  if (op.subFunction === undefined) fail('subFunction', undefined, `is required for FC8 (one of ${Object.keys(DIAGNOSTICS).join(', ')})`);
  const sub = op.subFunction;
  const known = Number.isInteger(sub) ? DIAGNOSTICS[/** @type {number} */ (sub)] : undefined;
  if (known === undefined) fail('subFunction', sub, `must be a sub-function nines knows: ${Object.entries(DIAGNOSTICS).map(([k, d]) => `${k} ${d.name}`).join(', ')}`);
  const data = op.data === undefined ? 0 : intIn(op.data, 'data', 0, 65535);
  if (known.data !== null && !known.data.includes(data)) fail('data', op.data, `must be ${known.data.map((d) => `0x${hex4(d)}`).join(' or ')} for sub-function ${sub} (${known.name})`);
  return { fc: 8, subFunction: sub, data };
}

/** FC43/14: read code 1-4 and the object to start at (default 0). @returns {any} */
function deviceIdOp (op) {
  if (op.readCode === undefined) fail('readCode', undefined, 'is required for FC43 (1 basic, 2 regular, 3 extended, 4 one object)');
  const readCode = intIn(op.readCode, 'readCode', 1, 4);
  const objectId = op.objectId === undefined ? 0 : intIn(op.objectId, 'objectId', 0, 255);
  return { fc: 43, readCode, objectId };
}

/**
 * Whether an op changes what the device holds (a write; FC8 restart and clear-counters too).
 * @param {{fc: number, subFunction?: number}} op a normalized op
 * @returns {boolean}
 */
function changesDevice (op) {
  const t = FCS[op.fc];
  if (t.writes) return true;
  const sub = t.kind === 'diagnostics' ? DIAGNOSTICS[/** @type {number} */ (op.subFunction)] : undefined;
  return sub !== undefined && sub.changes === true;
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
  const t = FCS[fc];
  const kind = t.kind;
  if (!OLD_KINDS.includes(kind)) return validateOp(parseNewForm(fc, kind, m, text));
  /** @type {any} */
  const op = { fc, address: Number(m[2]) };
  if (m[3] !== undefined) op.quantity = Number(m[3]);
  if (m[5] !== undefined) op.unitId = Number(m[5]);
  if (t.reads !== null) {
    if (m[4] !== undefined) fail('op', text, `must not carry "=values" for read FC${fc}`);
    if (op.quantity === undefined) op.quantity = 1;
  } else {
    if (m[4] === undefined || m[4] === '') fail('op', text, `must carry "=value" for write FC${fc}, e.g. "${fc}:${m[2]}=${kind.endsWith('Bits') || kind === 'writeBit' ? '1' : '123'}"`);
    const parts = m[4].split(',');
    const parse = kind === 'writeBit' || kind === 'writeBits' ? parseBitWord : parseRegisterWord;
    const vals = parts.map((p, i) => parse(p, text, i));
    if (kind === 'writeBit' || kind === 'writeReg') {
      if (vals.length !== 1) fail('op', text, `must carry exactly one value for FC${fc}`);
      op.value = vals[0];
    } else {
      op.values = vals;
    }
  }
  return validateOp(op);
}

/**
 * The string forms of FC8, FC22, FC23 and FC43 (see the file header).
 * @param {number} fc @param {string} kind @param {RegExpExecArray} m @param {string} text
 * @returns {object} an op to validate
 */
function parseNewForm (fc, kind, m, text) {
  const [, , first, second, rest, unit] = m;
  /** @type {any} */
  const op = { fc };
  if (unit !== undefined) op.unitId = Number(unit);
  const words = rest === undefined || rest === '' ? [] : rest.split(',');
  if (kind === 'diagnostics') {
    if (second !== undefined) fail('op', text, 'must look like 8:subFunction[=data] for FC8, e.g. "8:11" or "8:0=0x1234"');
    op.subFunction = Number(first);
    if (words.length > 1) fail('op', text, 'must carry at most one data word for FC8');
    if (words.length === 1) op.data = parseRegisterWord(words[0], text, 0);
  } else if (kind === 'deviceId') {
    if (rest !== undefined) fail('op', text, 'must look like 43:readCode[:objectId] for FC43, e.g. "43:1" or "43:4:129"');
    op.readCode = Number(first);
    if (second !== undefined) op.objectId = Number(second);
  } else if (kind === 'maskWrite') {
    if (second !== undefined || words.length !== 2) fail('op', text, 'must look like 22:address=andMask,orMask for FC22, e.g. "22:7=0xFFF7,0x0008"');
    op.address = Number(first);
    op.andMask = parseRegisterWord(words[0], text, 0);
    op.orMask = parseRegisterWord(words[1], text, 1);
  } else {
    const w = /^(\d+):(.+)$/.exec(rest || '');
    if (second === undefined || w === null) fail('op', text, 'must look like 23:address:quantity=writeAddress:values for FC23, e.g. "23:0:4=10:1,2"');
    op.address = Number(first);
    op.quantity = Number(second);
    op.writeAddress = Number(w[1]);
    op.values = w[2].split(',').map((p, i) => parseRegisterWord(p, text, i));
  }
  return op;
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
  switch (FCS[op.fc].kind) {
    case 'writeBit':
    case 'writeReg': return `${unit}FC${op.fc} address ${op.address} value ${op.value}`;
    case 'diagnostics': return `${unit}FC8 sub-function ${op.subFunction}`;
    case 'deviceId': return `${unit}FC43/14 read code ${op.readCode} object ${op.objectId}`;
    case 'maskWrite': return `${unit}FC22 address ${op.address}`;
    case 'readWrite': return `${unit}FC23 address ${op.address} quantity ${op.quantity} write address ${op.writeAddress} quantity ${op.values.length}`;
  }
  return `${unit}FC${op.fc} address ${op.address} quantity ${op.quantity}`;
}

/**
 * Writes an op back in its string form (parseOpString(formatOp(op)) gives the same op).
 * @param {ReturnType<typeof validateOp>} op
 * @returns {string}
 */
function formatOp (op) {
  let s = `${op.fc}:${op.address}`;
  switch (FCS[op.fc].kind) {
    case 'diagnostics': s = `8:${op.subFunction}=${op.data}`; break;
    case 'deviceId': s = `43:${op.readCode}:${op.objectId}`; break;
    case 'maskWrite': s += `=${op.andMask},${op.orMask}`; break;
    case 'readWrite': s += `:${op.quantity}=${op.writeAddress}:${op.values.join(',')}`; break;
    case 'readBits':
    case 'readRegs': s += `:${op.quantity}`; break;
    case 'writeBit': s += `=${op.value ? 1 : 0}`; break;
    case 'writeReg': s += `=${op.value}`; break;
    default: s += `=${op.values.map(Number).join(',')}`;
  }
  if (op.unitId !== undefined) s += `@${op.unitId}`;
  return s;
}

module.exports = { validateOp, parseOpString, toOp, describeOp, formatOp, resolveFc, changesDevice, FC_NAMES, DIAGNOSTICS, READ_CODES, kValid, kPdu };
