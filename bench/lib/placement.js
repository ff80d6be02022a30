'use strict';

/**
 * CPU placements for closed-loop questions (issue 11). On a 2-core machine a closed loop is bimodal:
 * with client and server on different cores every request costs a cross-core wake-up (10–14k req/s
 * for any client), with both on one core they take turns and the client's own CPU per request shows
 * (30–46k req/s). Which one an unpinned run gets depends on the scheduler and the other load, so the
 * questions measure both on purpose, pinned with `taskset -c`: the server on CPU 0 always, the
 * client on CPU 0 ("one core") or CPU 1 ("two cores"). Where taskset is missing, or only one CPU may
 * be used, they fall back to what can be measured and say so in a note.
 */

const { spawnSync } = require('node:child_process');

/**
 * @typedef {object} Placement
 * @property {'one'|'two'|'free'} id
 * @property {string} label
 * @property {string|undefined} server CPU of the server process (taskset -c), undefined: unpinned
 * @property {string|undefined} client CPU of the client process
 */

/** @returns {boolean} whether `taskset -c <cpu>` works here */
function canPin (cpu) {
  const r = spawnSync('taskset', ['-c', cpu, 'true'], { stdio: 'ignore' });
  return r.status === 0;
}

/**
 * The placements this machine allows.
 * @returns {{placements: Placement[], notes: string[]}}
 */
function placements () {
  const notes = [];
  const list = [];
  if (canPin('0') && canPin('1')) {
    list.push({ id: 'one', label: 'one core', server: '0', client: '0' }, { id: 'two', label: 'two cores', server: '0', client: '1' });
  } else if (canPin('0')) {
    list.push({ id: 'one', label: 'one core', server: '0', client: '0' });
    notes.push('Only CPU 0 can be pinned here: the two-core placement is not measured.');
  } else {
    list.push({ id: 'free', label: 'unpinned', server: undefined, client: undefined });
    notes.push('taskset is unavailable: client and server run unpinned, so each run lands on one core or two as the scheduler decides.');
  }
  return { placements: list, notes };
}

/**
 * @param {string|undefined} cpu
 * @param {string} cmd
 * @param {string[]} args
 * @returns {[string, string[]]} cmd and args, run under `taskset -c cpu` when cpu is given
 */
function pinned (cpu, cmd, args) {
  return cpu === undefined ? [cmd, args] : ['taskset', ['-c', cpu, cmd, ...args]];
}

/**
 * @param {Placement} p
 * @returns {string} "one core (server on CPU 0, client on CPU 0)"
 */
function describe (p) {
  return `${p.label}${p.client === undefined ? '' : ` (server on CPU ${p.server}, client on CPU ${p.client})`}`;
}

module.exports = { canPin, placements, pinned, describe };
