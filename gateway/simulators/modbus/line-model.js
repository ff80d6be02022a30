'use strict';

/**
 * Several simulated devices on one line, each with its own model: its own map, identification and
 * function codes (what a line of 5-30 RTU slaves, or the units behind a TCP gateway, are). It has
 * the model's interface (serves, execute, the notes of diagnostics.js), so every simulator takes it
 * where it takes one model: `createModbusRtuTcpSimulator({model: createModbusLineModel({units})})`.
 * (One model with several `unitIds` is the other kind of line: units sharing one set of tables.)
 */

const { createModbusModel } = require('./model');
const { invalid, objectOption } = require('./validate');
const { ServedUnits } = require('./served-units');

class ModbusLineModel extends ServedUnits {
  /** @param {Map<number, import('./model').ModbusModel>} units */
  constructor (units) {
    super();
    /** @type {Map<number, import('./model').ModbusModel>} unit id → its model */
    this.units = units;
    /** @type {number[]} the unit ids, ascending */
    this.unitIds = Object.freeze([...units.keys()].sort((a, b) => a - b));
    this._first = /** @type {import('./model').ModbusModel} */ (units.get(this.unitIds[0]));
    for (const id of this.unitIds) this._served[id] = 1;
  }

  /**
   * Starts or stops answering a unit id (a unit gone silent), as ModbusModel#serve.
   * @param {number} unitId one of this.unitIds @param {boolean} on
   */
  serve (unitId, on) {
    if (!this.units.has(unitId)) invalid('unitId', unitId, `one of the line's units (${this.unitIds.join(', ')})`);
    this._served[unitId] = on ? 1 : 0;
  }

  /**
   * Answers a PDU as unit unitId; a broadcast (unitId -1) goes to every unit; a unit id the line has
   * not (TCP's "this device" ids 0 and 255) is the first unit.
   * @param {Buffer} buf @param {number} [start=0] @param {number} [end=buf.length] @param {number} [unitId=-1]
   * @returns {Buffer|null}
   */
  execute (buf, start = 0, end = buf.length, unitId = -1) {
    if (unitId < 0) {
      let first = null;
      for (const m of this.units.values()) {
        const out = m.execute(buf, start, end, -1);
        if (first === null) first = out;
      }
      return first;
    }
    return (this.units.get(unitId) || this._first).execute(buf, start, end, unitId);
  }

  /** Every unit hears every frame on the line. */
  noteBusMessage () {
    for (const m of this.units.values()) m.noteBusMessage();
  }

  /** A bad frame on the line: every unit counts it. */
  noteBusError () {
    for (const m of this.units.values()) m.noteBusError();
  }

  /** A broadcast: no unit answers. */
  noteNoResponse () {
    for (const m of this.units.values()) m.noteNoResponse();
  }

  /** @returns {number} write requests executed by all units together */
  get writeRequests () {
    let n = 0;
    for (const m of this.units.values()) n += m.writeRequests;
    return n;
  }
}

/**
 * Creates a line of devices, each from its own model options.
 * @param {{units: Record<string, object>}} options unit id (1-255) → createModbusModel options (its
 *   unitIds are set to that id)
 * @returns {ModbusLineModel}
 * @throws {NinesError} NINES_ERR_INVALID_ARG naming the unit's field
 */
function createModbusLineModel (options) {
  const o = objectOption(options, 'options');
  const units = objectOption(o.units, 'units');
  const ids = Object.keys(units);
  if (ids.length === 0) invalid('units', '{}', 'at least one unit id → model options');
  const map = new Map();
  for (const key of ids) {
    const id = Number(key);
    if (!/^\d+$/.test(key) || id < 1 || id > 255) invalid(`units.${key}`, key, 'keyed by unit ids 1-255');
    const unitOptions = objectOption(units[key], `units.${key}`);
    if (unitOptions.unitIds !== undefined) invalid(`units.${key}.unitIds`, unitOptions.unitIds, 'absent (the key is the unit id)');
    map.set(id, createModbusModel({ ...unitOptions, unitIds: [id] }));
  }
  return new ModbusLineModel(map);
}

module.exports = { createModbusLineModel, ModbusLineModel };
