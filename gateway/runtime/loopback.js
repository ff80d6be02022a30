'use strict';

const net = require('node:net');

/**
 * The one rule for everything the gateway listens on (the embedded broker, the metrics endpoint,
 * the status page): on loopback a server may be open; anywhere else it must ask for a login.
 * Config checks and the servers themselves ask exposureProblem(), so the three cannot disagree.
 */

const LOOPBACK = new net.BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6'); // BlockList also matches ::ffff:127.x.y.z against the IPv4 subnet

/** @param {string} host @returns {string} without brackets or surrounding space, lower case */
const bare = (host) => host.trim().replace(/^\[(.*)\]$/, '$1').toLowerCase();

/**
 * Whether listening on `host` keeps a server on this machine: 127.0.0.0/8, ::1 (also as
 * ::ffff:127.x.y.z or in brackets) and "localhost". Any other name may resolve to anything, and
 * 0.0.0.0 or :: listen on every interface, so they count as beyond loopback.
 * @param {*} host
 * @returns {boolean}
 */
function isLoopbackHost (host) {
  if (typeof host !== 'string') return false;
  const h = bare(host);
  if (h === 'localhost') return true;
  const family = net.isIP(h);
  return family !== 0 && LOOPBACK.check(h, family === 6 ? 'ipv6' : 'ipv4');
}

/**
 * Whether a server on `host` may run as configured.
 * @param {*} host where it will listen
 * @param {boolean} hasLogin whether every client must log in
 * @returns {string|null} null when allowed; otherwise what is wrong with the host, to follow it in
 *   a message ("binds beyond loopback", or for a name, that it may)
 */
function exposureProblem (host, hasLogin) {
  if (hasLogin || isLoopbackHost(host)) return null;
  return typeof host === 'string' && net.isIP(bare(host)) === 0
    ? 'is a name, so it may bind beyond loopback (only 127.0.0.0/8, ::1 and localhost count as loopback)'
    : 'binds beyond loopback';
}

module.exports = { isLoopbackHost, exposureProblem };
