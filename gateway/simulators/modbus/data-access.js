'use strict';

/**
 * The data-access function codes of a simulated device (Modbus Application Protocol v1.1b3 §6):
 * FC1-4 reads, FC5/6 single writes, FC15/16 multiple writes, FC22 mask write and FC23 read/write,
 * answered on a model's banks (model.js) as the state diagrams of each function code say:
 * quantities and byte counts first (exception 3), then the address range (exception 2), then the
 * operation. Pure, like the model: no I/O, no timers.
 *
 * Hot path: an answer allocates only its response buffer (or a 2-byte exception), so a server can
 * answer synchronously inside its 'data' handler at full speed.
 */

const C = require('../../base/constants');
const { FC } = require('../../drivers/modbus/frame');

/** Exception codes the simulators answer with (Modbus Application Protocol §7) */
const EXC_ILLEGAL_FUNCTION = 1;
const EXC_ILLEGAL_DATA_ADDRESS = 2;
const EXC_ILLEGAL_DATA_VALUE = 3;

/** FC5 accepts only these two values (§6.5) */
const COIL_ON = 0xFF00;
const COIL_OFF = 0x0000;

/** Length of a read or single-write request PDU: function code, address, quantity or value */
const FIXED_PDU_LENGTH = 5;
/** Bytes before the values of a multiple-write request PDU: function code, address, quantity, byte count */
const MULTI_WRITE_HEADER = 6;
/** FC22's request and response: function code, address, AND mask, OR mask */
const MASK_WRITE_LENGTH = 7;
/** Bytes before the values of an FC23 request: function code, read address and quantity, write address and quantity, byte count */
const READ_WRITE_HEADER = 10;

/** Read function code → the bank it reads */
const READ_BANK = Object.freeze({
  [FC.READ_COILS]: 'coils',
  [FC.READ_DISCRETE_INPUTS]: 'discreteInputs',
  [FC.READ_HOLDING_REGISTERS]: 'holdingRegisters',
  [FC.READ_INPUT_REGISTERS]: 'inputRegisters'
});

/**
 * What the function codes ask of a model (model.js ModbusModel).
 * @typedef {object} Tables
 * @property {Record<string, Uint8Array|Uint16Array>} banks bits hold 0 or 1
 * @property {(bank: Uint8Array|Uint16Array, addr: number, qty: number) => boolean} inHole
 * @property {(bank: Uint8Array|Uint16Array, addr: number, unitId: number) => number} valueAt
 * @property {(name: string, addr: number, n: number) => void} wrote
 */

/**
 * Builds an exception response PDU.
 * @param {number} fc the request's function code
 * @param {number} code exception code 1-3
 * @returns {Buffer}
 */
function exception (fc, code) {
  const out = Buffer.allocUnsafe(2);
  out[0] = (fc | 0x80) & 0xFF;
  out[1] = code;
  return out;
}

/**
 * The response of a write that echoes its request's first n bytes.
 * @param {Buffer} buf @param {number} s offset of the function code @param {number} n
 * @returns {Buffer}
 */
function echo (buf, s, n) {
  const out = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) out[i] = buf[s + i];
  return out;
}

/** @param {Buffer} b @param {number} i @returns {number} big-endian 16-bit value at i */
function u16 (b, i) {
  return (b[i] << 8) | b[i + 1];
}

/**
 * The exception a request for qty items of a bank from addr gets, quantity first (§6).
 * @param {Tables} model @param {Uint8Array|Uint16Array} bank @param {number} addr @param {number} qty
 * @param {number} maxQty the function code's limit
 * @returns {number} 0 (none), 2 or 3
 */
function rangeFault (model, bank, addr, qty, maxQty) {
  if (qty < 1 || qty > maxQty) return EXC_ILLEGAL_DATA_VALUE;
  if (addr + qty > bank.length || model.inHole(bank, addr, qty)) return EXC_ILLEGAL_DATA_ADDRESS;
  return 0;
}

/**
 * Answers a data-access request PDU at buf[s, s + len), len ≥ 1.
 * @param {Tables} model
 * @param {number} fc buf[s]
 * @param {Buffer} buf @param {number} s @param {number} len
 * @param {number} unitId the unit addressed (-1: unknown), where the values depend on it
 * @returns {Buffer} the response PDU; exception 1 for a function code that is not data access
 */
function answerDataAccess (model, fc, buf, s, len, unitId) {
  switch (fc) {
    case FC.READ_COILS:
    case FC.READ_DISCRETE_INPUTS:
    case FC.READ_HOLDING_REGISTERS:
    case FC.READ_INPUT_REGISTERS: return read(model, fc, buf, s, len, unitId);
    case FC.WRITE_SINGLE_COIL:
    case FC.WRITE_SINGLE_REGISTER: return writeSingle(model, fc, buf, s, len);
    case FC.WRITE_MULTIPLE_COILS:
    case FC.WRITE_MULTIPLE_REGISTERS: return writeMultiple(model, fc, buf, s, len);
    case FC.MASK_WRITE_REGISTER: return maskWrite(model, buf, s, len);
    case FC.READ_WRITE_MULTIPLE_REGISTERS: return readWrite(model, buf, s, len, unitId);
    default: return exception(fc, EXC_ILLEGAL_FUNCTION);
  }
}

/** FC1, FC2: quantity 1-2000, bits packed LSB first; FC3, FC4: quantity 1-125 (§6.1-6.4) */
function read (model, fc, buf, s, len, unitId) {
  if (len !== FIXED_PDU_LENGTH) return exception(fc, EXC_ILLEGAL_DATA_VALUE);
  const addr = u16(buf, s + 1);
  const qty = u16(buf, s + 3);
  const bits = fc === FC.READ_COILS || fc === FC.READ_DISCRETE_INPUTS;
  const bank = model.banks[READ_BANK[fc]];
  const fault = rangeFault(model, bank, addr, qty, bits ? C.MODBUS_MAX_READ_BITS : C.MODBUS_MAX_READ_REGISTERS);
  if (fault !== 0) return exception(fc, fault);
  return bits ? bitsReply(model, fc, bank, addr, qty, unitId) : registersReply(model, fc, bank, addr, qty, unitId);
}

/** @returns {Buffer} fc, byte count, then bank[addr, addr + qty) packed LSB first */
function bitsReply (model, fc, bank, addr, qty, unitId) {
  const byteCount = (qty + 7) >> 3;
  const out = Buffer.allocUnsafe(2 + byteCount);
  out[0] = fc;
  out[1] = byteCount;
  for (let byte = 0, i = 0; byte < byteCount; byte++) {
    let v = 0;
    for (let bit = 0; bit < 8 && i < qty; bit++, i++) v |= model.valueAt(bank, addr + i, unitId) << bit;
    out[2 + byte] = v;
  }
  return out;
}

/** @returns {Buffer} fc, byte count, then bank[addr, addr + qty) big-endian (FC3, FC4, FC23) */
function registersReply (model, fc, bank, addr, qty, unitId) {
  const out = Buffer.allocUnsafe(2 + 2 * qty);
  out[0] = fc;
  out[1] = 2 * qty;
  for (let i = 0, o = 2; i < qty; i++, o += 2) {
    const v = model.valueAt(bank, addr + i, unitId);
    out[o] = v >>> 8;
    out[o + 1] = v & 0xFF;
  }
  return out;
}

/** FC5: value 0x0000 or 0xFF00 only (§6.5); FC6: any 16-bit value (§6.6); the response echoes the request */
function writeSingle (model, fc, buf, s, len) {
  if (len !== FIXED_PDU_LENGTH) return exception(fc, EXC_ILLEGAL_DATA_VALUE);
  const coil = fc === FC.WRITE_SINGLE_COIL;
  const value = u16(buf, s + 3);
  if (coil && value !== COIL_ON && value !== COIL_OFF) return exception(fc, EXC_ILLEGAL_DATA_VALUE);
  const addr = u16(buf, s + 1);
  const name = coil ? 'coils' : 'holdingRegisters';
  const fault = rangeFault(model, model.banks[name], addr, 1, 1);
  if (fault !== 0) return exception(fc, fault);
  model.banks[name][addr] = coil ? (value === COIL_ON ? 1 : 0) : value;
  model.wrote(name, addr, 1);
  return echo(buf, s, FIXED_PDU_LENGTH);
}

/** FC15: quantity 1-1968, byte count = ceil(quantity / 8); FC16: quantity 1-123, byte count = 2 × quantity (§6.11, §6.12) */
function writeMultiple (model, fc, buf, s, len) {
  if (len < MULTI_WRITE_HEADER) return exception(fc, EXC_ILLEGAL_DATA_VALUE);
  const coils = fc === FC.WRITE_MULTIPLE_COILS;
  const addr = u16(buf, s + 1);
  const qty = u16(buf, s + 3);
  const byteCount = buf[s + 5];
  if (byteCount !== (coils ? (qty + 7) >> 3 : 2 * qty) || len !== MULTI_WRITE_HEADER + byteCount) return exception(fc, EXC_ILLEGAL_DATA_VALUE);
  const name = coils ? 'coils' : 'holdingRegisters';
  const bank = model.banks[name];
  const fault = rangeFault(model, bank, addr, qty, coils ? C.MODBUS_MAX_WRITE_BITS : C.MODBUS_MAX_WRITE_REGISTERS);
  if (fault !== 0) return exception(fc, fault);
  const at = s + MULTI_WRITE_HEADER;
  if (coils) for (let i = 0; i < qty; i++) bank[addr + i] = (buf[at + (i >> 3)] >> (i & 7)) & 1;
  else for (let i = 0; i < qty; i++) bank[addr + i] = u16(buf, at + 2 * i);
  model.wrote(name, addr, qty);
  return echo(buf, s, FIXED_PDU_LENGTH);
}

/** FC22: (current AND andMask) OR (orMask AND NOT andMask); the response echoes the request (§6.16) */
function maskWrite (model, buf, s, len) {
  const fc = FC.MASK_WRITE_REGISTER;
  if (len !== MASK_WRITE_LENGTH) return exception(fc, EXC_ILLEGAL_DATA_VALUE);
  const addr = u16(buf, s + 1);
  const bank = model.banks.holdingRegisters;
  const fault = rangeFault(model, bank, addr, 1, 1);
  if (fault !== 0) return exception(fc, fault);
  const and = u16(buf, s + 3);
  const or = u16(buf, s + 5);
  // the register as a read would show it (under the 'signature' preset, its derived value until written)
  const current = model.valueAt(bank, addr, -1);
  bank[addr] = ((current & and) | (or & ~and)) & 0xFFFF;
  model.wrote('holdingRegisters', addr, 1);
  return echo(buf, s, MASK_WRITE_LENGTH);
}

/** FC23: read quantity 1-125, write quantity 1-121, byte count = 2 × write quantity; the write goes first (§6.17) */
function readWrite (model, buf, s, len, unitId) {
  const fc = FC.READ_WRITE_MULTIPLE_REGISTERS;
  if (len < READ_WRITE_HEADER) return exception(fc, EXC_ILLEGAL_DATA_VALUE);
  const readAddr = u16(buf, s + 1);
  const readQty = u16(buf, s + 3);
  const writeAddr = u16(buf, s + 5);
  const writeQty = u16(buf, s + 7);
  const byteCount = buf[s + 9];
  if (byteCount !== 2 * writeQty || len !== READ_WRITE_HEADER + byteCount) return exception(fc, EXC_ILLEGAL_DATA_VALUE);
  const bank = model.banks.holdingRegisters;
  // Both quantities before either address: exception 3 (a quantity) outranks 2 (an address)
  const fault = Math.max(rangeFault(model, bank, readAddr, readQty, C.MODBUS_MAX_READ_WRITE_READ_REGISTERS),
    rangeFault(model, bank, writeAddr, writeQty, C.MODBUS_MAX_READ_WRITE_WRITE_REGISTERS));
  if (fault !== 0) return exception(fc, fault);
  for (let i = 0; i < writeQty; i++) bank[writeAddr + i] = u16(buf, s + READ_WRITE_HEADER + 2 * i);
  model.wrote('holdingRegisters', writeAddr, writeQty);
  return registersReply(model, fc, bank, readAddr, readQty, unitId);
}

module.exports = { answerDataAccess, exception, EXC_ILLEGAL_FUNCTION };
