'use strict';

const { parseArgs } = require('node:util');
const { NinesError } = require('../base/errors');

/**
 * Parses a subcommand's arguments with node:util parseArgs (strict: unknown options are errors).
 * @param {string[]} argv
 * @param {Record<string, {type: 'string'|'boolean', short?: string, default?: any, multiple?: boolean}>} options
 * @param {string} usage the command's help text, shown with the error
 * @returns {{values: Record<string, any>, positionals: string[]}}
 */
function parse (argv, options, usage) {
  try {
    return parseArgs({ args: argv, options: { help: { type: 'boolean', short: 'h' }, ...options }, allowPositionals: true, strict: true });
  } catch (err) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `${err.message}\n\n${usage}`);
  }
}

/**
 * Parses a comma-separated list of positive integers ("1,2,4,8").
 * @param {string} text
 * @param {string} field
 * @returns {number[]}
 */
function intList (text, field) {
  const parts = String(text).split(',').map((s) => s.trim()).filter(Boolean);
  const out = parts.map(Number);
  if (out.length === 0 || out.some((n) => !Number.isInteger(n) || n < 1 || n > 1024)) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `--${field} must be a comma-separated list of whole numbers 1-1024, e.g. 1,2,4,8; got "${text}"`, { field, value: text });
  }
  return out;
}

/**
 * Parses a positive integer option.
 * @param {string|undefined} text
 * @param {string} field
 * @param {number} [max]
 * @returns {number|undefined}
 */
function posInt (text, field, max = Number.MAX_SAFE_INTEGER) {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > max) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `--${field} must be a whole number from 1 to ${max}; got "${text}"`, { field, value: text });
  }
  return n;
}

/** The options that say what to ask a device, shared by probe and sweep */
const OP_OPTIONS = Object.freeze({
  command: { type: 'string' },
  generator: { type: 'string' },
  read: { type: 'string' },
  write: { type: 'string' }
});

module.exports = { parse, intList, posInt, OP_OPTIONS };
