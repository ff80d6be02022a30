'use strict';

const { execFile } = require('node:child_process');
const path = require('node:path');

/**
 * The `nines` command as a user runs it, for the tests that start it: its path (for tests that
 * spawn a long-running `nines run` or `nines sim` and read its output as it comes), and a run to
 * the end with the output collected.
 */

/** bin/nines.js of this checkout, run with this process's Node */
const NINES_BIN = path.join(__dirname, '..', '..', 'bin', 'nines.js');

/**
 * Runs `nines <args>` in a child process to its end.
 * @param {string[]} args
 * @param {{timeoutMs?: number, cwd?: string, env?: object}} [opts] timeoutMs: killed after it (a
 *   hang guard for a loaded machine, not a timing assertion)
 * @returns {Promise<{code: number, stdout: string, stderr: string}>} code: the exit status (1 when
 *   killed by a signal or the timeout)
 */
function nines (args, { timeoutMs = 60000, cwd, env } = {}) {
  return new Promise((resolve) => {
    execFile(process.execPath, [NINES_BIN, ...args], { timeout: timeoutMs, cwd, env }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

module.exports = { nines, NINES_BIN };
