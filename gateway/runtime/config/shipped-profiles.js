'use strict';

const fs = require('node:fs');
const path = require('node:path');

/**
 * The profiles shipped with the package (its profiles/ folder, one YAML file per profile, named as
 * the profile: ED-588.yaml): what `profile: ED-588` names when the config defines no profile of
 * that name. Read once each, when first named; each file is checked by the same rules as a profile
 * written in the config (the test suite loads every one).
 */

/** The package's profiles/ folder */
const DIR = path.join(__dirname, '..', '..', '..', 'profiles');
const EXT = '.yaml';

let names = null;
const cache = new Map();

/** @returns {string[]} the names of the shipped profiles, sorted */
function shippedNames () {
  if (names === null) {
    let files = [];
    try {
      files = fs.readdirSync(DIR);
    } catch {
      // a package without the folder ships no profile
    }
    names = files.filter((f) => f.endsWith(EXT)).map((f) => f.slice(0, -EXT.length)).sort();
  }
  return names;
}

/**
 * A shipped profile, as written in its file.
 * @param {string} name
 * @returns {{body: unknown, file: string, dir: string}|null} null when none is shipped under that name
 */
function shippedProfile (name) {
  // only names listed in the folder: a name is never turned into a path of its own
  if (!shippedNames().includes(name)) return null;
  if (!cache.has(name)) {
    const file = path.join(DIR, name + EXT);
    const body = require('yaml').parse(fs.readFileSync(file, 'utf8'));
    cache.set(name, { body, file: `profiles/${name}${EXT}`, dir: DIR });
  }
  return cache.get(name);
}

module.exports = { shippedNames, shippedProfile, SHIPPED_DIR: DIR };
