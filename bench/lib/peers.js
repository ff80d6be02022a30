'use strict';

/**
 * The Node peers, installed in bench/node_modules (bench/package.json) and resolved from there first.
 * A missing peer is not a crash: its rows are skipped with a note saying how to install it.
 */

const path = require('node:path');

const BENCH = path.join(__dirname, '..');
const INSTALL_HINT = 'npm install --prefix bench';

/**
 * @param {string} name package name
 * @returns {{mod: any, version: string}|{skipped: string}}
 */
function loadPeer (name) {
  try {
    const main = require.resolve(name, { paths: [BENCH] });
    let version = '?';
    try { version = require(require.resolve(`${name}/package.json`, { paths: [BENCH] })).version; } catch { /* no exports of package.json */ }
    return { mod: require(main), version };
  } catch (err) {
    return { skipped: `${name} is not installed (${INSTALL_HINT}): ${err.message.split('\n')[0]}` };
  }
}

/**
 * @param {string} name
 * @returns {string|null} the installed version (bench/node_modules first, then the main install)
 */
function peerVersion (name) {
  try {
    return require(require.resolve(`${name}/package.json`, { paths: [BENCH] })).version;
  } catch {
    return null;
  }
}

module.exports = { loadPeer, peerVersion, INSTALL_HINT, BENCH };
