'use strict';

/** The machine and software a run was measured on, so a results file stands on its own. */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { peerVersion } = require('./peers');

/** @returns {object} CPU, cores, RAM, kernel, OS, host */
function machine () {
  const cpus = os.cpus();
  let osName = `${os.type()} ${os.release()}`;
  try {
    const rel = fs.readFileSync('/etc/os-release', 'utf8');
    const m = /^PRETTY_NAME="?([^"\n]+)"?/m.exec(rel);
    if (m) osName = m[1];
  } catch { /* not Linux */ }
  return {
    host: os.hostname(),
    cpu: cpus.length ? cpus[0].model.trim() : 'unknown',
    cores: os.availableParallelism(),
    ramGiB: Math.round(os.totalmem() / 2 ** 30 * 10) / 10,
    kernel: `${os.type()} ${os.release()} ${os.arch()}`,
    os: osName
  };
}

/** @returns {number[]} 1, 5 and 15-minute load averages */
function loadAverage () {
  return os.loadavg().map((x) => Math.round(x * 100) / 100);
}

/**
 * @param {{cc?: string|null, libmodbus?: string|null}} cBuild the C build status
 * @returns {Object<string, string|null>} versions of node, nines and every peer
 */
function versions (cBuild = {}) {
  const root = path.join(__dirname, '..', '..');
  return {
    node: process.version,
    nines: require(path.join(root, 'package.json')).version,
    'hdr-histogram-js': peerVersion('hdr-histogram-js'),
    'modbus-serial': peerVersion('modbus-serial'),
    jsmodbus: peerVersion('jsmodbus'),
    'node-red': peerVersion('node-red'),
    'node-red-contrib-modbus': peerVersion('node-red-contrib-modbus'),
    aedes: peerVersion('aedes'),
    cc: cBuild.cc || null,
    libmodbus: cBuild.libmodbus || null
  };
}

module.exports = { machine, loadAverage, versions };
