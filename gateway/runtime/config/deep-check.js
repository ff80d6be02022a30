'use strict';

const { NinesError } = require('../../base/errors');

/**
 * Deep checks of a job's operation by the drivers' own validators, so the config accepts exactly
 * what the drivers will send: the ASCII command validator, the generator table and the Modbus op
 * validator. They are required on first use (not every config needs both protocols), and their
 * coded errors become config problems at the job's field path.
 *
 */

/** Loaded on first use: a config that polls only Modbus never loads the ASCII validators */
const MODULES = {
  command: () => require('../../drivers/ascii/command'),
  generators: () => require('../../drivers/ascii/generators'),
  op: () => require('../../drivers/modbus/op')
};

/**
 * @param {keyof MODULES} which
 * @returns {object} the validator module
 */
function validator (which) {
  return MODULES[which]();
}

/** The validator's rule when it states one apart (op.js does), else its whole message */
function ruleFrom (err) {
  const rule = err.details && typeof err.details.rule === 'string' ? err.details.rule : null;
  return rule ? (/^(must|is|has)\b/.test(rule) ? rule : `must be ${rule}`) : `is rejected: ${err.message}`;
}

/**
 * @param {import('./problems').Problems} problems
 * @param {Array<string|number>} segs path of the `command` field
 * @param {string} command
 * @param {boolean} checksum whether the device has checksums on (from its target)
 * @returns {string} the command as the driver will send it
 */
function checkCommand (problems, segs, command, checksum) {
  const mod = validator('command');
  try {
    return mod.validateCommand(command, { checksum });
  } catch (err) {
    if (!(err instanceof NinesError)) throw err;
    problems.add(segs, command, ruleFrom(err));
    return command;
  }
}

/**
 * Generator names known to the generators module (names and aliases).
 * @param {*} table GENERATORS: a Map, an array or an object keyed by name; entries may carry
 *   `name`, `alias` and `aliases`
 * @returns {string[]}
 */
function generatorNames (table) {
  const names = new Set();
  const addEntry = (key, g) => {
    if (typeof key === 'string') names.add(key);
    if (g && typeof g === 'object') {
      if (typeof g.name === 'string') names.add(g.name);
      if (typeof g.alias === 'string') names.add(g.alias);
      for (const a of Array.isArray(g.aliases) ? g.aliases : []) names.add(a);
    }
  };
  if (table instanceof Map) for (const [k, g] of table) addEntry(k, g);
  else if (Array.isArray(table)) for (const g of table) addEntry(typeof g === 'string' ? g : undefined, g);
  else if (table && typeof table === 'object') for (const [k, g] of Object.entries(table)) addEntry(k, g);
  return [...names];
}

/**
 * @param {import('./problems').Problems} problems
 * @param {Array<string|number>} segs path of the `generator` field
 * @param {string} name
 */
function checkGenerator (problems, segs, name) {
  const mod = validator('generators');
  const names = generatorNames(mod.GENERATORS);
  if (!names.includes(name)) problems.add(segs, name, `is not a known generator; known: ${names.join(', ')}`);
}

/**
 * @param {import('./problems').Problems} problems
 * @param {Array<string|number>} segs path of the `read` or `write` field
 * @param {object} op {fc, address, quantity | value | values, unitId}
 * @returns {object} the normalized op
 */
function checkOp (problems, segs, op) {
  const mod = validator('op');
  try {
    return mod.validateOp(op);
  } catch (err) {
    if (!(err instanceof NinesError)) throw err;
    // Point at the op's field when the validator names one we have
    const field = err.details && (err.details.field || err.details.name);
    const inner = typeof field === 'string' && Object.prototype.hasOwnProperty.call(op, field) ? [field] : [];
    problems.add(segs.concat(inner), inner.length ? op[field] : op, ruleFrom(err));
    return op;
  }
}

module.exports = { checkCommand, checkGenerator, checkOp, generatorNames };
