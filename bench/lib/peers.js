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

/**
 * Peers installed only on the Node major they declare (bench/package.json enginePeers): installing
 * node-red-contrib-modbus 5.60.2 (engines.node >=22) on Node 20 warned EBADENGINE (issue 21).
 * @returns {Record<string, {version: string, node: number, why: string}>}
 */
function enginePeers () {
  return require(path.join(BENCH, 'package.json')).enginePeers || {};
}

/** @param {string} name @returns {boolean} whether this Node may run the peer (always, unless enginePeers says) */
function engineFits (name) {
  const e = enginePeers()[name];
  return e === undefined || Number(process.versions.node.split('.')[0]) >= e.node;
}

/**
 * @param {string} name
 * @returns {string|null} why the peer's rows are skipped, or null when it is installed
 */
function peerSkip (name) {
  if (peerVersion(name) !== null) return null;
  const e = enginePeers()[name];
  if (e !== undefined && !engineFits(name)) return `${name} ${e.version} needs Node ${e.node} or later (this is Node ${process.versions.node}): its rows run under Node ${e.node}+`;
  return `${name} is not installed (${INSTALL_HINT})`;
}

module.exports = { loadPeer, peerVersion, peerSkip, enginePeers, engineFits, INSTALL_HINT, BENCH };
