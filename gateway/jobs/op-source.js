'use strict';

const { NinesError } = require('../base/errors');
const { parseTarget } = require('../drivers/target');

/**
 * What a job or probe asks the device, validated once, as a function the scheduler calls per request.
 *
 * Exactly one of:
 * - `command`: a fixed ASCII command (`@01`, `#0100FF`…), validated for the target's checksum mode;
 * - `generator`: a vendor latency-test generator (`@AA`, `@AA(Data)`, `#AAN`, `#AA1N0F`, `#AA1NVVData`)
 *   for the target's address;
 * - `read` / `write`: a Modbus operation `{fc, address, quantity | value | values, unitId}` or its string
 *   form (`3:0:10`, `16:0=1,2,3`); the unit id defaults to the target's.
 *
 * @param {{command?: string, generator?: string, read?: object|string, write?: object|string, random?: () => number}} spec
 * @param {string|import('../drivers/target').Target} target
 * @returns {{nextOp: (seq: number) => any, label: string, kind: 'ascii'|'modbus'}}
 *   label is a short name for file names and tables (`@AA`, `@AA(Data)`, `fc3-0+10`)
 */
function createOpSource (spec, target) {
  const t = parseTarget(target);
  const given = ['command', 'generator', 'read', 'write'].filter((k) => spec && spec[k] !== undefined);
  if (given.length !== 1) {
    throw new NinesError('NINES_ERR_INVALID_ARG',
      `give exactly one of command, generator, read or write; got ${given.length ? given.join(' and ') : 'none'}`, { given });
  }
  const key = given[0];
  if (t.protocol === 'ascii') {
    if (key === 'read' || key === 'write') {
      throw new NinesError('NINES_ERR_INVALID_ARG', `${key} is a Modbus operation, but the target ${t.url} is an ASCII device; use command or generator`, { target: t.url });
    }
    const ascii = require('../drivers/ascii');
    if (key === 'command') {
      const command = ascii.validateCommand(spec.command, { checksum: t.checksum });
      return { nextOp: () => command, label: templateOf(command), kind: 'ascii' };
    }
    const next = ascii.createGenerator(spec.generator, { address: t.address, random: spec.random });
    return { nextOp: () => next(), label: generatorLabel(spec.generator, ascii), kind: 'ascii' };
  }
  if (key === 'command' || key === 'generator') {
    throw new NinesError('NINES_ERR_INVALID_ARG', `${key} is an ASCII command, but the target ${t.url} is a Modbus device; use read or write`, { target: t.url });
  }
  const modbus = require('../drivers/modbus');
  const raw = { ...(typeof spec[key] === 'string' ? modbus.parseOpString(spec[key]) : spec[key]) };
  if (raw.unitId === undefined) raw.unitId = t.unitId;
  const op = modbus.validateOp(raw);
  const isWrite = modbus.changesDevice(op);
  if ((key === 'read') === isWrite) {
    throw new NinesError('NINES_ERR_INVALID_OP', `${key} was given function code ${op.fc}, which is a ${isWrite ? 'write' : 'read'}`, { field: `${key}.fc`, value: op.fc });
  }
  const n = op.quantity !== undefined ? op.quantity : (op.values ? op.values.length : 1);
  // FC8 and FC43 have no address: their label names the sub-function or read code (fc8-sub11, fc43-code2)
  const label = op.fc === 8 ? `fc8-sub${op.subFunction}` : op.fc === 43 ? `fc43-code${op.readCode}` : modbusLabel(op.fc, op.address, n);
  return { nextOp: () => op, label, kind: 'modbus' };
}

/**
 * The label of a Modbus operation: `fc3-0+10` is FC3 from address 0, 10 registers (addresses 0 to 9).
 * Not `fc3-0x10`, which read like hex 0x10; not `fc3:0:10` (the --read syntax), because the label
 * names the probe's .hgrm files and `:` is not allowed in Windows file names. `+` is safe in file
 * names everywhere, and probe.js's file-name filter keeps it.
 * @param {number} fc
 * @param {number} address 0-based
 * @param {number} n registers or coils
 * @returns {string}
 */
function modbusLabel (fc, address, n) {
  return `fc${fc}-${address}+${n}`;
}

/** `@01` → `@AA`, `#0100FF` → `#AA00FF`: the command with its address written as AA, as the vendor names runs */
function templateOf (command) {
  return command.length >= 3 && command.slice(1, 3) !== '**' ? command[0] + 'AA' + command.slice(3) : command;
}

/**
 * A generator's label is its vendor name (`@AA(Data)`), also when it was given by its alias
 * (`read-all`), so runs of the same command mix get the same table row and file name.
 * @param {string} name as given
 * @param {{GENERATORS: ReadonlyArray<{name: string, alias: string}>}} ascii
 * @returns {string}
 */
function generatorLabel (name, ascii) {
  const g = ascii.GENERATORS.find((x) => x.name === name || x.alias === name);
  return g ? g.name : name;
}

module.exports = { createOpSource, templateOf, modbusLabel };
