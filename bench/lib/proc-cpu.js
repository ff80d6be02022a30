'use strict';

/**
 * A server process's CPU time, from /proc: what serving costs it per request, which on one core bounds
 * what any client can reach (questions 12 and 14).
 */

const fs = require('node:fs');
const { spawnSync } = require('node:child_process');

/** Clock ticks per second of /proc/<pid>/stat's CPU times */
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

/**
 * A process's CPU time so far (user + system). Resolution one clock tick (10 ms), fine over a 2 s run.
 * @param {number} pid
 * @returns {number|null} ns, or null where /proc is not there
 */
function procCpuNs (pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 1e9 / CLK_TCK; // utime, stime: fields 14 and 15
  } catch {
    return null;
  }
}

module.exports = { procCpuNs };
