'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { NinesError } = require('../../base/errors');

/**
 * Metric aliases of one edge node (Sparkplug 3.0, 6.4.5): every metric is born with a name and an
 * alias, and DATA carries the alias alone. An alias is unique across the node and all its devices,
 * so one counter serves them all.
 *
 * Assignment is deterministic and never taken back: the first time a metric is seen (in model
 * order: node metrics, then devices and their tags in config order) it gets the next number, from 1.
 * A rebirth, and a reload that keeps a metric, keep its alias; a metric a reload removes keeps its
 * number reserved, so a host that still holds an old birth never reads a new metric under it.
 * With a disk spool the map is saved beside the held data (aliases.json), so data held across a
 * restart still means what it meant; without one, the same config gives the same aliases anyway.
 */

/** The file the map is kept in, inside the Sparkplug spool folder */
const FILE = 'aliases.json';

class AliasMap {
  /**
   * @param {object} [opts]
   * @param {string|null} [opts.dir] where aliases.json lives; null keeps the map in memory only
   * @param {(err: NinesError) => void} [opts.onError] a save that failed (the map stays in memory)
   */
  constructor ({ dir = null, onError = () => {} } = {}) {
    this.file = dir === null ? null : path.join(dir, FILE);
    this._onError = onError;
    /** @type {Map<string, number>} key → alias */
    this._byKey = new Map();
    /** @type {Map<number, string>} alias → key */
    this._byAlias = new Map();
    this._next = 1;
    this._dirty = false;
    if (this.file !== null) this._load();
  }

  /**
   * The key of a metric: its owner (null for the node, else the Sparkplug device id) and its name.
   * @param {string|null} device
   * @param {string} name
   * @returns {string}
   */
  static key (device, name) {
    return `${device === null ? '' : device}\u0000${name}`;
  }

  /**
   * The alias of a metric, assigned now when it has none.
   * @param {string|null} device
   * @param {string} name
   * @returns {number}
   */
  aliasOf (device, name) {
    const key = AliasMap.key(device, name);
    let alias = this._byKey.get(key);
    if (alias === undefined) {
      alias = this._next++;
      this._byKey.set(key, alias);
      this._byAlias.set(alias, key);
      this._dirty = true;
    }
    return alias;
  }

  /**
   * The metric an alias stands for, or null.
   * @param {number} alias
   * @returns {{device: string|null, name: string}|null}
   */
  metricOf (alias) {
    const key = this._byAlias.get(alias);
    if (key === undefined) return null;
    const i = key.indexOf('\u0000');
    const device = key.slice(0, i);
    return { device: device === '' ? null : device, name: key.slice(i + 1) };
  }

  /** @returns {number} aliases assigned */
  get size () { return this._byKey.size; }

  /** Writes the map when it changed (a temporary file renamed over the old one, so a crash leaves one whole). */
  save () {
    if (this.file === null || !this._dirty) return;
    const tmp = `${this.file}.tmp`;
    try {
      fs.writeFileSync(tmp, JSON.stringify({ v: 1, next: this._next, aliases: Object.fromEntries(this._byKey) }));
      fs.renameSync(tmp, this.file);
      this._dirty = false;
    } catch (err) {
      this._onError(new NinesError('NINES_ERR_IO', `cannot save the Sparkplug aliases to ${this.file}: ${err.message}`, { file: this.file, cause: err.code }));
    }
  }

  _load () {
    let raw;
    try {
      raw = JSON.parse(fs.readFileSync(this.file, 'utf8'));
    } catch (err) {
      if (err.code === 'ENOENT') return;
      // a damaged map: start again (held data that used it is refused at replay, and counted)
      this._onError(new NinesError('NINES_ERR_IO', `cannot read the Sparkplug aliases in ${this.file}: ${err.message}; assigning afresh`, { file: this.file, cause: err.code || 'EBADF' }));
      return;
    }
    if (!raw || typeof raw.aliases !== 'object') return;
    for (const [key, alias] of Object.entries(raw.aliases)) {
      if (!Number.isSafeInteger(alias) || alias < 1 || this._byAlias.has(alias)) continue;
      this._byKey.set(key, alias);
      this._byAlias.set(alias, key);
      this._next = Math.max(this._next, alias + 1);
    }
    if (Number.isSafeInteger(raw.next)) this._next = Math.max(this._next, raw.next);
  }
}

module.exports = { AliasMap, ALIAS_FILE: FILE };
