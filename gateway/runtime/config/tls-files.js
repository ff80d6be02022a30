'use strict';

/**
 * TLS files named in a config (mqtt.tls, devices.<name>.tls), read once at load: a missing or
 * unreadable file fails there, naming the field and the file, never at the first connect.
 */

const fs = require('node:fs');
const path = require('node:path');

/**
 * Reads one TLS file.
 * @param {import('./problems').Problems} problems where a failure is reported
 * @param {string[]} segs the field's path, e.g. ['devices', 'plc1', 'tls', 'ca']
 * @param {unknown} file the path as written (relative to the config's directory)
 * @param {string} baseDir the config's directory
 * @returns {{data: Buffer, abs: string}|undefined} undefined: not given, or reported
 */
function readTlsFile (problems, segs, file, baseDir) {
  if (typeof file !== 'string' || file === '') return undefined;
  const abs = path.resolve(baseDir, file);
  try {
    return { data: fs.readFileSync(abs), abs };
  } catch (err) {
    const code = /** @type {any} */ (err).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : /** @type {Error} */ (err).message;
    problems.add(segs, file, `cannot be read: ${abs}: ${why}`);
    return undefined;
  }
}

module.exports = { readTlsFile };
