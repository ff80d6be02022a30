'use strict';

/**
 * Child processes for the benches: servers that announce "PORT <n>" on stdout and stop when their
 * stdin closes (so none outlives its bench, even when the bench crashes), and one-shot clients whose
 * last stdout line is a JSON result (earlier lines may signal progress, see runJson's onLine).
 */

const { spawn } = require('node:child_process');

/**
 * Starts a server process and waits for its "PORT <n>" line.
 * @param {string} cmd
 * @param {string[]} args
 * @param {{timeoutMs?: number, label?: string}} [opts]
 * @returns {Promise<{port: number, pid: number, stop: () => Promise<void>, send: (line: string) => void,
 *   kill: (signal?: string) => Promise<void>, cmdline: string}>} send writes a line to its stdin (the nines
 *   simulators take commands there, see sim-process.js); kill signals it and waits for its exit
 */
function startServer (cmd, args, { timeoutMs = 10000, label = cmd } = {}) {
  const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.stdin.on('error', () => {}); // a server killed on purpose (question 9) must not fail a later write
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => { child.kill(); reject(new Error(`${label} did not announce a port within ${timeoutMs} ms`)); }, timeoutMs);
    child.once('error', (err) => { clearTimeout(timer); reject(err); });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`${label} exited (${code}) before announcing a port`)); });
    child.stdout.on('data', (d) => {
      out += d;
      const m = /PORT (\d+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout.removeAllListeners('data');
      child.stdout.resume();
      resolve({
        port: Number(m[1]),
        pid: child.pid,
        cmdline: [cmd, ...args].join(' '),
        stop: async () => {
          if (child.exitCode !== null || child.signalCode !== null) return;
          child.stdin.end();
          const t = setTimeout(() => child.kill('SIGKILL'), 3000);
          await exited;
          clearTimeout(t);
        },
        send: (line) => { if (child.stdin.writable) child.stdin.write(line + '\n'); },
        kill: async (signal = 'SIGKILL') => {
          if (child.exitCode !== null || child.signalCode !== null) return;
          child.kill(signal);
          await exited;
        }
      });
    });
  });
}

/**
 * Runs a client process to completion and parses the JSON on its last stdout line.
 * @param {string} cmd
 * @param {string[]} args
 * @param {{timeoutMs?: number, onLine?: (line: string) => void}} [opts] the process is killed after
 *   timeoutMs; onLine sees every complete stdout line as it comes (a child signalling a phase)
 * @returns {Promise<object>}
 */
function runJson (cmd, args, { timeoutMs = 120000, onLine } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let seen = 0;
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (d) => {
      out += d;
      if (!onLine) return;
      let nl;
      while ((nl = out.indexOf('\n', seen)) !== -1) {
        onLine(out.slice(seen, nl));
        seen = nl + 1;
      }
    });
    child.stderr.on('data', (d) => { err += d; });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      const last = out.trim().split('\n').pop();
      try {
        resolve(JSON.parse(last));
      } catch {
        reject(new Error(`${cmd} ${args.join(' ')} exited ${code ?? signal} without a JSON line: ${(err || out).slice(-500)}`));
      }
    });
  });
}

module.exports = { startServer, runJson };
