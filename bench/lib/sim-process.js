'use strict';

/**
 * Runs one nines simulator in its own process, so it never shares an event loop with the client
 * under test: `node sim-process.js modbus|ascii`. Prints "PORT <n>", stops when stdin closes.
 */

const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');

async function main () {
  const kind = process.argv[2];
  let sim;
  if (kind === 'modbus') {
    sim = await require(path.join(ROOT, 'gateway/simulators/modbus')).createModbusTcpSimulator({ host: '127.0.0.1', port: 0 });
  } else if (kind === 'ascii') {
    sim = await require(path.join(ROOT, 'gateway/simulators/ascii')).createAsciiSimulator({ host: '127.0.0.1', port: 0 });
  } else {
    throw new Error(`sim-process: unknown simulator ${JSON.stringify(kind)} (modbus, ascii)`);
  }
  process.stdout.write(`PORT ${sim.port}\n`);
  process.stdin.on('data', () => {});
  process.stdin.on('end', () => sim.close());
  process.stdin.on('close', () => sim.close());
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
