'use strict';

/**
 * Builds the C peers into bench/c/build/ with the system compiler and libmodbus (via pkg-config).
 * Missing tools are not an error: each program that cannot be built is reported with the reason,
 * and the benches skip its rows with that note.
 *
 *   node bench/c/build.js          build what can be built, print a JSON status line
 */

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const SRC = __dirname;
const OUT = path.join(__dirname, 'build');
const CFLAGS = ['-O2', '-Wall', '-Wextra', '-std=gnu11'];

/** Programs, their sources and whether they need libmodbus */
const PROGRAMS = [
  { name: 'pingpong', src: 'pingpong.c', modbus: false },
  { name: 'ascii-responder', src: 'ascii-responder.c', modbus: false },
  { name: 'modbus-server', src: 'modbus-server.c', modbus: true },
  { name: 'modbus-client', src: 'modbus-client.c', modbus: true }
];

/**
 * Runs a command and returns its trimmed stdout, or null when it fails or is missing.
 * @param {string} cmd
 * @param {string[]} args
 * @returns {string|null}
 */
function tryRun (cmd, args) {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch {
    return null;
  }
}

/** @returns {string|null} the C compiler to use: $CC, cc or gcc */
function findCompiler () {
  for (const cc of [process.env.CC, 'cc', 'gcc'].filter(Boolean)) {
    if (tryRun(cc, ['--version']) !== null) return cc;
  }
  return null;
}

/**
 * Builds every program whose sources are newer than its binary.
 * @param {{force?: boolean}} [opts]
 * @returns {{cc: string|null, libmodbus: string|null, programs: Object<string, {path?: string, skipped?: string}>}}
 */
function build (opts = {}) {
  const cc = findCompiler();
  const libmodbus = tryRun('pkg-config', ['--modversion', 'libmodbus']);
  const modbusFlags = libmodbus ? tryRun('pkg-config', ['--cflags', '--libs', 'libmodbus']).split(/\s+/).filter(Boolean) : [];
  const programs = {};
  fs.mkdirSync(OUT, { recursive: true });
  for (const p of PROGRAMS) {
    const bin = path.join(OUT, p.name);
    if (!cc) { programs[p.name] = { skipped: 'no C compiler (cc, gcc) found' }; continue; }
    if (p.modbus && !libmodbus) { programs[p.name] = { skipped: 'libmodbus not found by pkg-config (apt-get install libmodbus-dev)' }; continue; }
    const srcs = [p.src, 'lat.h', 'serve.h'].map((f) => path.join(SRC, f));
    const fresh = fs.existsSync(bin) && srcs.every((s) => fs.statSync(s).mtimeMs <= fs.statSync(bin).mtimeMs);
    if (!fresh || opts.force) {
      try {
        execFileSync(cc, [...CFLAGS, '-o', bin, path.join(SRC, p.src), ...(p.modbus ? modbusFlags : [])],
          { stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (err) {
        const lines = String(err.stderr || err.message).split('\n');
        programs[p.name] = { skipped: `build failed: ${lines.find((l) => l.includes('error')) || lines[0]}` };
        continue;
      }
    }
    programs[p.name] = { path: bin };
  }
  const ccVersion = cc && tryRun(cc, ['-dumpfullversion', '-dumpversion']);
  return { cc: cc && `${cc} ${ccVersion || ''}`.trim(), libmodbus, programs };
}

module.exports = { build, OUT };

if (require.main === module) {
  console.log(JSON.stringify(build({ force: process.argv.includes('--force') })));
}
