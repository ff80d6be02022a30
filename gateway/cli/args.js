'use strict';

const fs = require('node:fs');
const { parseArgs } = require('node:util');
const { NinesError } = require('../base/errors');
const { suggestKey } = require('../runtime/config/problems');

/**
 * Parses a subcommand's arguments with node:util parseArgs (strict: unknown options are errors).
 *
 * Two things parseArgs gets wrong for people are put right here:
 * - a negative number as an option's value (`--rate -5/s`) is taken as the value, so the option's
 *   own check says what is wrong with it ("must be a positive rate"), where parseArgs would call it
 *   "ambiguous";
 * - an unknown option is named with the closest known one ("did you mean --command?"), and errors
 *   point to `--help` instead of repeating the whole usage text.
 * @param {string[]} argv
 * @param {Record<string, {type: 'string'|'boolean', short?: string, default?: any, multiple?: boolean}>} options
 * @param {string} usage the command's help text; its first line names the command in messages
 * @returns {{values: Record<string, any>, positionals: string[]}}
 */
function parse (argv, options, usage) {
  const all = { help: { type: 'boolean', short: 'h' }, ...options };
  const m = /^Usage: (nines(?: [a-z]+)?)/.exec(usage || '');
  const cmd = m ? m[1] : 'nines';
  try {
    return parseArgs({ args: joinNegativeValues(argv, all), options: all, allowPositionals: true, strict: true });
  } catch (err) {
    throw argError(err, all, cmd);
  }
}

/** A value that starts with a dash and is a number (`-5`, `-5/s`, `-.5s`), never an option name */
const NEGATIVE_RE = /^-\.?\d/;

/**
 * `--opt -5` → `--opt=-5` for string options, so a negative number reaches the option's check.
 * @param {string[]} argv
 * @param {Record<string, {type: string}>} options
 * @returns {string[]}
 */
function joinNegativeValues (argv, options) {
  const out = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') { out.push(...argv.slice(i)); break; }
    const name = a.startsWith('--') && !a.includes('=') ? a.slice(2) : null;
    if (name && options[name] && options[name].type === 'string' && i + 1 < argv.length && NEGATIVE_RE.test(argv[i + 1])) {
      out.push(`${a}=${argv[++i]}`);
    } else {
      out.push(a);
    }
  }
  return out;
}

/**
 * A parseArgs error in plain words, with a "did you mean" for a misspelt option.
 * @param {Error & {code?: string}} err
 * @param {Record<string, object>} options
 * @param {string} cmd e.g. "nines probe"
 * @returns {NinesError}
 */
function argError (err, options, cmd) {
  const help = `(${cmd} --help lists the options)`;
  const quoted = /'(-{1,2}[^' ]+)/.exec(err.message);
  const given = quoted ? quoted[1] : '';
  const name = given.replace(/^-+/, '');
  if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const guess = given.startsWith('--') ? suggest(name, Object.keys(options)) : undefined;
    return new NinesError('NINES_ERR_INVALID_ARG', `${cmd}: unknown option ${given}${guess ? `; did you mean --${guess}?` : ''} ${help}`,
      { field: name, value: given, suggestion: guess });
  }
  if (err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && options[name]) {
    const rule = options[name].type === 'boolean' ? 'takes no value' : 'needs a value';
    return new NinesError('NINES_ERR_INVALID_ARG', `${cmd}: --${name} ${rule} ${help}`, { field: name });
  }
  return new NinesError('NINES_ERR_INVALID_ARG', `${cmd}: ${err.message} ${help}`);
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

/**
 * A count as typed: a number when it is all digits, else the text itself, so that the option's
 * own rule (checked where the option is read) names what was typed, not NaN.
 * @param {string|undefined} text
 * @returns {number|string|undefined}
 */
function countOrText (text) {
  return text !== undefined && /^\d+$/.test(text) ? Number(text) : text;
}

/**
 * The known name closest to a misspelt one: the config's rule (problems.js suggestKey: case, a
 * clipped form, up to 2 edits), and two swapped neighbours counting as one typo (`--prot`, `porbe`).
 * @param {string} name
 * @param {string[]} known
 * @returns {string|undefined}
 */
function suggest (name, known) {
  const guess = suggestKey(name, known);
  if (guess !== undefined) return guess;
  return known.find((k) => k.length === name.length && k.length > 2 && [...k].some((_, i) =>
    i + 1 < k.length && k[i] !== k[i + 1] && name === k.slice(0, i) + k[i + 1] + k[i] + k.slice(i + 2)));
}

/** The options that say what to ask a device, shared by probe and sweep */
const OP_OPTIONS = Object.freeze({
  command: { type: 'string' },
  generator: { type: 'string' },
  read: { type: 'string' },
  write: { type: 'string' }
});

/**
 * Checks that exactly one operation flag was given (--command, --generator, --read, --write), in
 * the CLI's words: the job spec's own message names its YAML fields (a `tags` option the CLI has
 * not), and "got []" told a user of the docs' sweep example nothing (issue 21).
 * @param {Record<string, any>} values parsed flags
 * @param {string} cmd the command, for the message
 * @param {string[]} [flags] the operation flags the command takes
 * @throws {NinesError} NINES_ERR_INVALID_ARG
 */
function oneOp (values, cmd, flags = Object.keys(OP_OPTIONS)) {
  const given = flags.filter((f) => values[f] !== undefined);
  if (given.length === 1) return;
  const list = flags.map((f) => `--${f}`).join(', ');
  throw new NinesError('NINES_ERR_INVALID_ARG', given.length === 0
    ? `nines ${cmd} needs what to send: one of ${list} (e.g. --read 3:0:10 for a Modbus device, --command @01 for an ED-series one)`
    : `nines ${cmd} takes one operation; got ${given.map((f) => `--${f}`).join(' and ')}`,
  { field: 'operation', value: given });
}

/**
 * Runs fn; a builder's refusal of a field that came from a flag names the flag: the builders
 * (jobs/spec.js, devices/spec.js) read the flags' values as they read a config's, and say
 * `ratePerSec must be …` where the user typed `--rate`.
 * @template T
 * @param {() => T} fn
 * @param {Record<string, string>} flags spec field → flag
 * @returns {T}
 */
function flagErrors (fn, flags) {
  try {
    return fn();
  } catch (err) {
    const field = err instanceof NinesError && err.details ? err.details.field : undefined;
    if (typeof field !== 'string' || flags[field] === undefined) throw err;
    throw new NinesError(err.code, err.message.replace(new RegExp(`^(job |device )?${field}\\b`), flags[field]), { ...err.details, field: flags[field] });
  }
}

/**
 * Reads the files some options name (TLS certificates and keys: `--ca ca.crt`), each once, here at the edge.
 * @param {Record<string, unknown>} values the parsed options
 * @param {string[]} names the options that name files; absent ones are left out
 * @returns {Record<string, Buffer>} option → contents
 * @throws {NinesError} NINES_ERR_INVALID_ARG naming the option and the file problem
 */
function readOptionFiles (values, names) {
  const out = {};
  for (const name of names) {
    const file = values[name];
    if (file === undefined) continue;
    try {
      out[name] = fs.readFileSync(String(file));
    } catch (err) {
      throw new NinesError('NINES_ERR_INVALID_ARG', `--${name} ${file} cannot be read: ${err.code || err.message}`, { field: name, value: file });
    }
  }
  return out;
}

module.exports = { parse, suggest, intList, posInt, countOrText, oneOp, flagErrors, readOptionFiles, OP_OPTIONS };
