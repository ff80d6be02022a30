'use strict';

/**
 * The data model behind the Modbus simulators: four banks (coils, discrete inputs, holding and input registers)
 * in typed arrays, and `handle(unitId, pdu)`, which answers a request PDU as the Modbus Application Protocol
 * v1.1b3 says. Pure: no I/O and no timers; the optional animation is computed from the clock when the
 * animated values are read.
 *
 * The answers live beside it, one file per kind: the data-access function codes FC1-6, 15, 16, 22 and 23
 * (data-access.js), FC8 diagnostics (diagnostics.js, counters fed by the traffic) and FC43/14 device
 * identification (identity.js). This file keeps the state they act on and its rules: which units answer,
 * holes in the map, the 'signature' preset, the animation. A device can be made to lack function codes
 * (`lacks`: exception 1, as a device without them answers) and to have a sparse map (`map`: only the
 * ranges listed answer; `holes`: ranges that do not).
 */

const C = require('../../base/constants');
const { FC } = require('../../drivers/modbus/frame');
const { invalid, intOption, objectOption, noUnknownKeys } = require('./validate');
const { applyPreset } = require('./preset');
const { buildIdentity, answerIdentification } = require('./identity');
const { answerDiagnostics, newCounters } = require('./diagnostics');
const { buildHoles } = require('./map');
const { answerDataAccess, exception, EXC_ILLEGAL_FUNCTION } = require('./data-access');
const { ServedUnits } = require('./served-units');

/** @typedef {'coils'|'discreteInputs'|'holdingRegisters'|'inputRegisters'} BankName */

const BIT_BANKS = Object.freeze(['coils', 'discreteInputs']);
const REGISTER_BANKS = Object.freeze(['holdingRegisters', 'inputRegisters']);
const BANKS = Object.freeze([...BIT_BANKS, ...REGISTER_BANKS]);
const OPTIONS = Object.freeze([...BANKS, 'unitIds', 'animate', 'preset', 'now', 'holes', 'map', 'identification', 'lacks']);
/** Function codes the model answers; `lacks` may take any of them away */
const ANSWERED_FCS = Object.freeze([1, 2, 3, 4, 5, 6, 8, 15, 16, 22, 23, 43]);
/** Function codes that write (counted in writeRequests, answered or not) */
const WRITE_FCS = Object.freeze([5, 6, 15, 16, 22, 23]);
/** Function codes whose answer shows animated values (discrete inputs, holding and input registers): the animation is computed first */
const ANIMATED_FCS = Object.freeze([2, 3, 4, 23]);

/**
 * The 'signature' preset (issue 18): what each unit's tables hold when nothing wrote them, derived
 * from the unit and the address alone, so a reply taken for another request's (another address,
 * another unit) shows in the values a client publishes. Registers: unit × 1000 + address (holding),
 * the same + 32768 (input), modulo 65536; coils: on where unit + address is odd; discrete inputs: on
 * where unit + address is a multiple of 3.
 * @param {BankName} bank
 * @param {number} unitId 0-255
 * @param {number} address 0-65535
 * @returns {number} a register's value, or 1/0 for a bit
 */
function signatureValue (bank, unitId, address) {
  switch (bank) {
    case 'holdingRegisters': return (unitId * 1000 + address) & 0xFFFF;
    case 'inputRegisters': return (unitId * 1000 + address + 0x8000) & 0xFFFF;
    case 'coils': return (unitId + address) & 1;
    case 'discreteInputs': return (unitId + address) % 3 === 0 ? 1 : 0;
    default: throw new TypeError(`no bank ${bank}`);
  }
}

/** Registers 0 and 1 of the register banks move when animated (a counter and a sine) */
const ANIMATED_REGISTERS = 2;

class ModbusModel extends ServedUnits {
  /**
   * Use {@link createModbusModel}.
   * @param {object} o checked options
   */
  constructor (o) {
    super();
    /** Raw banks, for demos that write values directly; bits hold 0 or 1 */
    this.banks = Object.freeze({
      coils: new Uint8Array(o.coils),
      discreteInputs: new Uint8Array(o.discreteInputs),
      holdingRegisters: new Uint16Array(o.holdingRegisters),
      inputRegisters: new Uint16Array(o.inputRegisters)
    });
    /** @type {number[]|'any'} */
    this.unitIds = o.unitIds;
    if (o.unitIds === 'any') this._served.fill(1);
    else for (const id of o.unitIds) this._served[id] = 1;
    this.animate = o.animate;
    this._now = o.now;
    this._t0 = o.animate ? o.now() : 0;
    /**
     * Addresses the device does not have, per bank (null: none): a read or write that touches one is
     * answered with exception 2, as a PLC answers a read across a gap in its map
     * @type {Record<BankName, Uint8Array|null>}
     */
    this._holes = o.holes;
    /** Holding registers 0 and 1 move with the animation until a write takes them over (1 = animated) */
    this._animatedHolding = new Uint8Array(Math.min(ANIMATED_REGISTERS, o.holdingRegisters)).fill(o.animate ? 1 : 0);
    /** @type {import('./identity').Identity} FC43's objects */
    this._identity = o.identity;
    /** 1 at a function code the device lacks (answered with exception 1) */
    this._lacks = new Uint8Array(256);
    for (const fc of o.lacks) this._lacks[fc] = 1;
    /** FC8's counters (diagnostics.js), fed by the traffic: this model's requests and the servers' notes */
    this.diagnostics = newCounters();
    /** Requests with a write function code this model was asked to execute, answered or refused */
    this.writeRequests = 0;
    /**
     * The 'signature' preset (signatureValue): per bank, 1 where a write has taken the address over
     * (it then holds the written value for every unit); null: the preset is off
     * @type {Record<BankName, Uint8Array>|null}
     */
    this._signed = null;
  }

  /** Turns the 'signature' preset on (preset.js): every unit's tables hold signatureValue() until written. */
  useSignature () {
    const b = this.banks;
    this._signed = {
      coils: new Uint8Array(b.coils.length),
      discreteInputs: new Uint8Array(b.discreteInputs.length),
      holdingRegisters: new Uint8Array(b.holdingRegisters.length),
      inputRegisters: new Uint8Array(b.inputRegisters.length)
    };
  }

  /** @returns {BankName} the name of one of this.banks */
  _nameOf (bank) {
    const b = this.banks;
    return bank === b.coils ? 'coils' : bank === b.discreteInputs ? 'discreteInputs' : bank === b.holdingRegisters ? 'holdingRegisters' : 'inputRegisters';
  }

  /**
   * The value a read of bank[addr] answers unit unitId with (the function codes, data-access.js).
   * @param {Uint8Array|Uint16Array} bank @param {number} addr @param {number} unitId -1: unknown (the bank's value)
   * @returns {number}
   */
  valueAt (bank, addr, unitId) {
    const signed = this._signed;
    if (signed === null || unitId < 0) return bank[addr];
    const name = this._nameOf(bank);
    return signed[name][addr] === 1 ? bank[addr] : signatureValue(name, unitId, addr);
  }

  /**
   * After a write to [addr, addr + n) of a bank, by a client or by setRegisters/setBits: holding
   * registers written stop their animation, and under the 'signature' preset the addresses are taken
   * over for every unit.
   * @param {BankName} name @param {number} addr @param {number} n
   */
  wrote (name, addr, n) {
    if (name === 'holdingRegisters') this._takeOver(addr, n);
    if (this._signed !== null) this._signed[name].fill(1, addr, addr + n);
  }

  /**
   * Starts or stops answering a unit id: a unit that stops is a slave gone silent on its bus (a dead
   * meter, a pulled plug); its neighbours go on answering. For fault drills.
   * @param {number} unitId 0-255
   * @param {boolean} on
   */
  serve (unitId, on) {
    if (!Number.isInteger(unitId) || unitId < 0 || unitId > 255) invalid('unitId', unitId, 'an integer from 0 to 255');
    this._served[unitId] = on ? 1 : 0;
  }

  /**
   * Answers a PDU without checking the unit id (for TCP's "this device" unit ids and RTU broadcasts).
   * @param {Buffer} buf
   * @param {number} [start=0]
   * @param {number} [end=buf.length]
   * @param {number} [unitId=-1] the unit addressed, where the values depend on it (the 'signature' preset)
   * @returns {Buffer|null} null only for an empty PDU
   */
  execute (buf, start = 0, end = buf.length, unitId = -1) {
    const len = end - start;
    if (len < 1) return null;
    this.diagnostics.serverMessages++;
    const out = this._answer(buf, start, len, unitId);
    if (out[0] & 0x80) this.diagnostics.busExceptionErrors++;
    return out;
  }

  /** A frame on the line, whoever it is for (FC8 bus message count). */
  noteBusMessage () {
    this.diagnostics.busMessages++;
  }

  /** A frame with a bad CRC on the line (FC8 bus communication error count). */
  noteBusError () {
    this.diagnostics.busCommunicationErrors++;
  }

  /** A request to this device it did not answer: a broadcast, or a reply dropped (FC8 no response count). */
  noteNoResponse () {
    this.diagnostics.serverNoResponses++;
  }

  /** @returns {Buffer} the reply PDU to a request of len ≥ 1 bytes at buf[start] */
  _answer (buf, start, len, unitId) {
    const fc = buf[start];
    if (this._lacks[fc] === 1) return exception(fc, EXC_ILLEGAL_FUNCTION);
    if (WRITE_FCS.includes(fc)) this.writeRequests++;
    if (this.animate && ANIMATED_FCS.includes(fc)) this._tick();
    switch (fc) {
      case FC.DIAGNOSTICS: return answerDiagnostics(this.diagnostics, buf, start, len, exception);
      case FC.ENCAPSULATED_INTERFACE: return answerIdentification(this._identity, buf, start, len, unitId, exception);
      default: return answerDataAccess(this, fc, buf, start, len, unitId);
    }
  }

  /**
   * Whether [addr, addr + qty) of a bank touches a hole of the map (the function codes, data-access.js).
   * @param {Uint8Array|Uint16Array} bank one of this.banks
   * @param {number} addr @param {number} qty
   * @returns {boolean}
   */
  inHole (bank, addr, qty) {
    const holes = this._holes[this._nameOf(bank)];
    if (holes === null) return false;
    for (let i = addr; i < addr + qty; i++) if (holes[i] === 1) return true;
    return false;
  }

  /**
   * Animation: values follow the clock, computed when read so the model needs no timer. Register 0
   * counts, register 1 is a slow sine, in the input registers and in the holding registers (FC3, the
   * read most tools start with); a holding register a client writes keeps the written value.
   */
  _tick () {
    const t = this._now() - this._t0;
    const counter = Math.floor(t / C.SIM_MODBUS_ANIMATE_COUNTER_MS) & 0xFFFF;
    const sine = Math.round(C.SIM_MODBUS_ANIMATE_SINE_AMPLITUDE * (1 + Math.sin(2 * Math.PI * t / C.SIM_MODBUS_ANIMATE_SINE_PERIOD_MS)));
    const ir = this.banks.inputRegisters;
    ir[0] = counter;
    if (ir.length > 1) ir[1] = sine;
    const hr = this.banks.holdingRegisters;
    const animated = this._animatedHolding;
    if (animated[0] === 1) hr[0] = counter;
    if (animated.length > 1 && animated[1] === 1) hr[1] = sine;
    this.banks.discreteInputs[0] = Math.floor(t / C.SIM_MODBUS_ANIMATE_TOGGLE_MS) & 1;
  }

  /** A write to holding registers [addr, addr + n) stops their animation. */
  _takeOver (addr, n) {
    for (let i = addr; i < addr + n && i < this._animatedHolding.length; i++) this._animatedHolding[i] = 0;
  }

  /** @returns {Uint8Array|Uint16Array} */
  _bank (bank, kinds, addr, n) {
    if (!kinds.includes(bank)) invalid('bank', bank, `one of ${kinds.join(', ')}`);
    const arr = this.banks[bank];
    if (!Number.isInteger(addr) || addr < 0 || addr >= arr.length) {
      invalid('addr', addr, `an integer from 0 to ${arr.length - 1} (${bank} has ${arr.length})`);
    }
    if (!Number.isInteger(n) || n < 0 || addr + n > arr.length) {
      invalid('count', n, `a non-negative integer with addr + count <= ${arr.length} (${bank} at ${addr})`);
    }
    if (this.animate) this._tick();
    return arr;
  }

  /**
   * Sets consecutive registers.
   * @param {'holdingRegisters'|'inputRegisters'} bank
   * @param {number} addr 0-based address
   * @param {ArrayLike<number>} values integers -32768..65535 (negative ones stored as two's complement)
   */
  setRegisters (bank, addr, values) {
    if (!values || typeof values.length !== 'number') invalid('values', values, 'an array of integers');
    const arr = this._bank(bank, REGISTER_BANKS, addr, values.length);
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      if (!Number.isInteger(v) || v < -32768 || v > 0xFFFF) invalid(`values[${i}]`, v, 'an integer from -32768 to 65535');
    }
    for (let i = 0; i < values.length; i++) arr[addr + i] = values[i] & 0xFFFF;
    this.wrote(bank, addr, values.length);
  }

  /**
   * @param {'holdingRegisters'|'inputRegisters'} bank
   * @param {number} addr
   * @param {number} value integer -32768..65535
   */
  setRegister (bank, addr, value) {
    this.setRegisters(bank, addr, [value]);
  }

  /**
   * @param {'holdingRegisters'|'inputRegisters'} bank
   * @param {number} addr
   * @param {number} [n=1]
   * @returns {number[]} unsigned 16-bit values
   */
  getRegisters (bank, addr, n = 1) {
    const arr = this._bank(bank, REGISTER_BANKS, addr, n);
    return Array.from(arr.subarray(addr, addr + n));
  }

  /** @param {'holdingRegisters'|'inputRegisters'} bank @param {number} addr @returns {number} */
  getRegister (bank, addr) {
    return this.getRegisters(bank, addr, 1)[0];
  }

  /**
   * Sets consecutive bits.
   * @param {'coils'|'discreteInputs'} bank
   * @param {number} addr 0-based address
   * @param {ArrayLike<boolean|0|1>} values
   */
  setBits (bank, addr, values) {
    if (!values || typeof values.length !== 'number') invalid('values', values, 'an array of booleans or 0/1');
    const arr = this._bank(bank, BIT_BANKS, addr, values.length);
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      if (v !== true && v !== false && v !== 0 && v !== 1) invalid(`values[${i}]`, v, 'a boolean, 0 or 1');
    }
    for (let i = 0; i < values.length; i++) arr[addr + i] = values[i] ? 1 : 0;
    this.wrote(bank, addr, values.length);
  }

  /** @param {'coils'|'discreteInputs'} bank @param {number} addr @param {boolean|0|1} value */
  setBit (bank, addr, value) {
    this.setBits(bank, addr, [value]);
  }

  /**
   * @param {'coils'|'discreteInputs'} bank
   * @param {number} addr
   * @param {number} [n=1]
   * @returns {boolean[]}
   */
  getBits (bank, addr, n = 1) {
    const arr = this._bank(bank, BIT_BANKS, addr, n);
    const out = new Array(n);
    for (let i = 0; i < n; i++) out[i] = arr[addr + i] === 1;
    return out;
  }

  /** @param {'coils'|'discreteInputs'} bank @param {number} addr @returns {boolean} */
  getBit (bank, addr) {
    return this.getBits(bank, addr, 1)[0];
  }
}

/**
 * Creates a Modbus data model.
 * @param {object} [options]
 * @param {number} [options.coils=10000] bank size, 1-65536
 * @param {number} [options.discreteInputs=10000]
 * @param {number} [options.holdingRegisters=10000]
 * @param {number} [options.inputRegisters=10000]
 * @param {number[]|'any'} [options.unitIds=[1]] unit ids answered (0-255), or 'any'
 * @param {boolean} [options.animate=false] input and holding register 0 count every 100 ms, input and holding
 *   register 1 are a slow sine (0-2000, 10 s period), discrete input 0 toggles every second; a holding register
 *   a client (or setRegisters) writes stops moving and keeps its value
 * @param {'pattern'|'signature'|Record<string, Record<string, Array<number|boolean>>>} [options.preset] initial
 *   values (zeros by default): 'pattern', 'signature' (per unit, see signatureValue), or e.g. `{holdingRegisters: {0: [1, 2, 3]}, coils: {10: [true]}}`
 * @param {() => number} [options.now] clock in milliseconds for the animation (default performance.now)
 * @param {Partial<Record<BankName, Array<[number, number]>>>} [options.holes] address ranges (first, last,
 *   inclusive) the device does not have, e.g. `{holdingRegisters: [[50, 59]]}`: a read or write that touches
 *   one gets exception 2 (illegal data address), as real maps with gaps answer
 * @param {Partial<Record<BankName, Array<[number, number]>>>} [options.map] the address ranges (first, last,
 *   inclusive) the device has, e.g. `{holdingRegisters: [[0, 99], [200, 219]]}`; a bank not named has none. Every
 *   other address is a hole (exception 2); `holes` may cut more
 * @param {string|object} [options.identification] FC43's objects: a preset (nines, ED-588, ED-560) or
 *   `{preset?, vendorName?, productCode?, revision?, vendorUrl?, productName?, modelName?, userApplicationName?,
 *   objects?: {128: 'text'}}` (identity.js); object 6 is "unit <id>" unless given
 * @param {number[]} [options.lacks] function codes the device lacks: answered with exception 1
 * @returns {ModbusModel}
 */
function createModbusModel (options) {
  const opts = objectOption(options, 'options');
  noUnknownKeys(opts, 'options', OPTIONS);
  const o = {};
  for (const bank of BANKS) o[bank] = intOption(opts[bank], bank, 1, 65536, C.SIM_MODBUS_BANK_SIZE);
  const ids = opts.unitIds === undefined ? [1] : opts.unitIds;
  if (ids !== 'any') {
    if (!Array.isArray(ids) || ids.length === 0 || !ids.every((id) => Number.isInteger(id) && id >= 0 && id <= 255)) {
      invalid('unitIds', JSON.stringify(ids), '"any" or a non-empty array of integers from 0 to 255');
    }
  }
  o.unitIds = ids === 'any' ? 'any' : Object.freeze([...ids]);
  if (opts.animate !== undefined && typeof opts.animate !== 'boolean') invalid('animate', opts.animate, 'a boolean');
  o.animate = opts.animate === true;
  if (opts.now !== undefined && typeof opts.now !== 'function') invalid('now', opts.now, 'a function returning milliseconds');
  o.now = opts.now || (() => performance.now());
  o.holes = buildHoles(opts.holes, o, opts.map);
  o.identity = buildIdentity(opts.identification);
  o.lacks = lacksOption(opts.lacks);
  const model = new ModbusModel(o);
  applyPreset(model, opts.preset);
  return model;
}

/** @returns {number[]} the function codes a device lacks (`lacks` option) */
function lacksOption (raw) {
  if (raw === undefined) return [];
  if (!Array.isArray(raw) || !raw.every((fc) => ANSWERED_FCS.includes(fc))) invalid('lacks', JSON.stringify(raw), `a list of function codes out of ${ANSWERED_FCS.join(', ')}`);
  return raw;
}

/**
 * The model given, or a new one from modelOptions (not both).
 * @param {unknown} model
 * @param {unknown} modelOptions
 * @returns {ModbusModel}
 * @throws {NinesError} NINES_ERR_INVALID_ARG for both, or a model that is not one
 */
function resolveModel (model, modelOptions) {
  if (model !== undefined) {
    if (modelOptions !== undefined) invalid('modelOptions', 'given', 'absent when a model is given');
    const m = /** @type {any} */ (model);
    if (!m || typeof m.execute !== 'function' || typeof m.serves !== 'function') {
      invalid('model', typeof model, 'a model from createModbusModel()');
    }
    return m;
  }
  return createModbusModel(/** @type {any} */ (modelOptions));
}

module.exports = { createModbusModel, resolveModel, ModbusModel, BANKS, ANSWERED_FCS, signatureValue };
