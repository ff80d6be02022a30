'use strict';

/**
 * The C peers (bench/c/): built on first use, started as servers, run as clients. When a program
 * cannot be built, `programs[name].skipped` says why and the benches skip those rows with the note.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { build } = require('../c/build');
const { startServer, runJson } = require('./procs');
const { fromRawNs } = require('./hist');
const { pinned } = require('./placement');

let built;

/** @returns {ReturnType<typeof build>} the build status (built once per process) */
function cPeers () {
  if (!built) built = build();
  return built;
}

/**
 * @param {string} name program name
 * @returns {string|null} its path, or null when it was not built
 */
function cPath (name) {
  const p = cPeers().programs[name];
  return p && p.path ? p.path : null;
}

/** @param {string} name @returns {string} why it is missing, or '' */
function cSkipReason (name) {
  const p = cPeers().programs[name];
  return p && p.skipped ? `${name}: ${p.skipped}` : '';
}

/**
 * Starts a C server program.
 * @param {'pingpong'|'ascii-responder'|'modbus-server'} name
 * @returns {ReturnType<typeof startServer>}
 */
function startCServer (name) {
  const bin = cPath(name);
  if (!bin) throw new Error(cSkipReason(name));
  return startServer(bin, name === 'pingpong' ? ['server'] : [], { label: name });
}

/**
 * Runs a C client and returns its JSON line plus a histogram built from its raw samples.
 * @param {'pingpong'|'modbus-client'} name
 * @param {{port: number, count: number, durationMs: number, warmup: number, reconnect?: boolean,
 *   ratePerSec?: number, cpu?: string}} o ratePerSec: modbus-client paced at that rate (latency from the
 *   intended send time); cpu: run it pinned there with `taskset -c <cpu>` (question 12's placements)
 * @returns {Promise<{json: object, hist: object, cmdline: string}>}
 */
async function runCClient (name, { port, count, durationMs, warmup, reconnect = false, ratePerSec, cpu }) {
  const bin = cPath(name);
  if (!bin) throw new Error(cSkipReason(name));
  const out = path.join(os.tmpdir(), `nines-bench-${process.pid}-${name}.bin`);
  const args = [...(name === 'pingpong' ? ['client'] : []), String(port), String(count), String(durationMs), String(warmup), out];
  if (reconnect) args.push('reconnect');
  else if (ratePerSec) args.push(`rate=${ratePerSec}`);
  const [cmd, argv] = pinned(cpu, bin, args);
  const json = await runJson(cmd, argv, { timeoutMs: durationMs + 30000 });
  const hist = fromRawNs(fs.readFileSync(out));
  fs.rmSync(out, { force: true });
  return { json, hist, cmdline: [cmd, ...argv].join(' ') };
}

module.exports = { cPeers, cPath, cSkipReason, startCServer, runCClient };
