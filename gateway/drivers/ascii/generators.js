'use strict';

/**
 * Command generators of Brainboxes' latency tests (`LatencyTestASCII.cs`, reference notes §4.4),
 * so `nines probe` can reproduce their tables. The address is configurable (the vendor hard-codes
 * 01) and `random` is injectable for deterministic tests. Value formats copy the .NET ones exactly,
 * quirks included (4-digit `@AA` data to 8-output models, mask bit 4 without a value).
 *
 * Each generator names the models it is for (`models`), and produces only commands those models
 * accept: where the vendor's test sends something a model refuses, we do not copy it. The vendor's
 * `#AAN` draws channels 0…E and sends them to 8-input models too, which answer `?01` to channels 8
 * and up (ascii-protocol.md, ED-588: "`#AAN` with N ≥ 8: invalid parameter"), so about half its
 * requests were errors; ours draws from the inputs every model it is for has (0…7). Sent to a model
 * it is not for, a generator gets nothing but refusals: checkGeneratorModel() says so before a run.
 */

const { NinesError } = require('../../base/errors');
const C = require('../../base/constants');
const { normalizeAddress } = require('./command');
const { HEX2 } = require('./checksum');

/** .NET custom format `+00.000`: literal plus, 2 integer digits, 3 decimals, half away from zero. */
function formatPlus00000 (v) {
  const milli = Math.round(v * 1000);
  return '+' + String(Math.floor(milli / 1000)).padStart(2, '0') + '.' + String(milli % 1000).padStart(3, '0');
}

/** .NET custom format `000.##` (after a literal `+`): 3 integer digits, 0–2 decimals, no trailing zeros. */
function formatPlus000hh (v) {
  const centi = Math.round(v * 100);
  const int = String(Math.floor(centi / 100)).padStart(3, '0');
  const frac = centi % 100;
  if (frac === 0) return '+' + int;
  return '+' + int + '.' + String(frac).padStart(2, '0').replace(/0$/, '');
}

/** Uniform integer in [lo, hi) from random() in [0, 1), like .NET Random.Next(lo, hi). */
function nextInt (random, lo, hi) {
  return lo + Math.floor(random() * (hi - lo));
}

const { MODELS } = require('./models');

/** Counter channels `#AAN` draws from: every model with inputs has at least 8 (ED-588, ED-538, ED-549, ED-516) */
const COUNTER_CHANNELS = 8;

/**
 * A generator's entry, with `devices` (for people) written from `kind` and `models`, so that the
 * text and the list the checks use cannot disagree.
 * @param {{name: string, alias: string, description: string, kind?: string, models: string[], make: Function}} g
 */
function generator ({ name, alias, description, kind, models, make }) {
  const listed = models.join(', ');
  return { name, alias, description, devices: kind === undefined ? listed : `${kind} (${listed})`, models: Object.freeze(models), make };
}

/**
 * The generators. `make(addr, random)` returns the generator function; `models` lists the models
 * whose every answer to it is a success.
 * @type {ReadonlyArray<{name: string, alias: string, description: string, devices: string, models: ReadonlyArray<string>, make: (addr: string, random: () => number) => () => string}>}
 */
const GENERATORS = Object.freeze([
  generator({
    name: '@AA',
    alias: 'read-all',
    description: 'read all digital lines: @01',
    kind: 'digital I/O',
    models: ['ED-588', 'ED-516', 'ED-527', 'ED-538'],
    make: (addr) => { const cmd = '@' + addr; return () => cmd; }
  }),
  generator({
    name: '@AA(Data)',
    alias: 'set-all',
    description: 'set all outputs: @01 + 4 upper-case hex digits, uniform 0…0xFFFE (4 digits even on 8-output models, as the vendor does)',
    kind: 'digital outputs',
    models: ['ED-588', 'ED-527', 'ED-538'],
    make: (addr, random) => {
      const head = '@' + addr;
      return () => {
        const v = nextInt(random, 0, 0xffff);
        return head + HEX2[v >>> 8] + HEX2[v & 0xff];
      };
    }
  }),
  generator({
    name: '#AAN',
    alias: 'read-counter',
    description: 'read an input counter: #01 + one channel 0…7 (the vendor draws 0…E, which 8-input models refuse)',
    kind: 'digital inputs',
    models: ['ED-588', 'ED-516', 'ED-538'],
    make: (addr, random) => {
      const head = '#' + addr;
      return () => head + nextInt(random, 0, COUNTER_CHANNELS);
    }
  }),
  generator({
    name: '#AA1N0F',
    alias: 'analog-set4',
    description: 'set 4 analog outputs: #011N0F + four values uniform 0…10 formatted +00.000 (35 characters)',
    models: ['ED-560'],
    make: (addr, random) => {
      const head = '#' + addr + '1N0F';
      return () => head + formatPlus00000(random() * 10) + formatPlus00000(random() * 10) +
        formatPlus00000(random() * 10) + formatPlus00000(random() * 10);
    }
  }),
  generator({
    name: '#AA1NVVData',
    alias: 'analog-set-mask',
    description: 'set analog outputs by mask: #011N + mask 01…1E + one value per set bit among bits 0–3, uniform 0…100 formatted +000.##',
    kind: 'analog outputs',
    models: ['ED-560'],
    make: (addr, random) => {
      const head = '#' + addr + '1N';
      return () => {
        const mask = nextInt(random, 1, 31);
        let cmd = head + HEX2[mask];
        for (let bit = 0; bit < 4; bit++) {
          if (mask & (1 << bit)) cmd += formatPlus000hh(random() * 100);
        }
        return cmd;
      };
    }
  })
]);

const BY_NAME = new Map();
for (const g of GENERATORS) {
  BY_NAME.set(g.name, g);
  BY_NAME.set(g.alias, g);
}

/**
 * Creates a command generator.
 * @param {string} name a generator name ('@AA', '@AA(Data)', '#AAN', '#AA1N0F', '#AA1NVVData') or
 *   alias ('read-all', 'set-all', 'read-counter', 'analog-set4', 'analog-set-mask')
 * @param {object} [opts]
 * @param {string|number} [opts.address='01'] two hex digits or 0…255
 * @param {() => number} [opts.random=Math.random] uniform in [0, 1)
 * @returns {() => string} returns a new command (without checksum) on each call
 */
function createGenerator (name, { address = C.ASCII_ADDRESS_DEFAULT, random = Math.random } = {}) {
  const g = BY_NAME.get(name);
  if (!g) {
    throw new NinesError('NINES_ERR_INVALID_ARG',
      `generator ${JSON.stringify(name)} is unknown; use one of ${GENERATORS.map((x) => `${x.name} (${x.alias})`).join(', ')}`,
      { field: 'generator', value: name });
  }
  if (typeof random !== 'function') {
    throw new NinesError('NINES_ERR_INVALID_ARG', `random must be a function returning a number in [0, 1); got ${typeof random}`, { field: 'random', value: String(random) });
  }
  return g.make(normalizeAddress(address), random);
}

/**
 * Checks that a generator is for the model a device reports (its `$AAM` name), before a run: sent
 * to a model it is not for, every request would be refused (`?AA`). Names that are not an ED model
 * we know pass unchecked.
 * @param {string} name generator name or alias
 * @param {string} model the device's model name, e.g. 'ED-588'
 * @param {string} [where] the device, for the message (its URL)
 * @throws {NinesError} NINES_ERR_INVALID_ARG naming the generator's models and those for this model
 */
function checkGeneratorModel (name, model, where = 'the device') {
  const g = BY_NAME.get(name);
  if (!g || !Object.prototype.hasOwnProperty.call(MODELS, model) || g.models.includes(model)) return;
  const fit = GENERATORS.filter((x) => x.models.includes(model)).map((x) => x.name);
  throw new NinesError('NINES_ERR_INVALID_ARG',
    `generator ${g.name} is for ${g.models.join(', ')}, but ${where} is an ${model} (${MODELS[model]}), which refuses every ${g.name} command; ` +
    (fit.length ? `for an ${model} use ${fit.join(', ')}` : `no generator is for an ${model}; use --command`),
    { field: 'generator', value: name, model, models: g.models.slice(), fit });
}

module.exports = { createGenerator, checkGeneratorModel, GENERATORS, MODELS, formatPlus00000, formatPlus000hh };
