'use strict';

/**
 * Runs one nines simulator in its own process, so it never shares an event loop with the client
 * under test: `node sim-process.js modbus|modbus-animated|ascii`, or `node sim-process.js modbus-tls '<json>'`
 * ({cert, key, ca}: PEM file paths; Modbus/TCP Security, client certificates signed by ca required).
 * Prints "PORT <n>", stops when stdin closes.
 * Lines on stdin are fault commands (faults.js), so a bench can fault one device while it runs:
 *   stall <duration>    freeze the device now (replies are held until it ends), e.g. "stall 6s"
 *   faults <spec>       replace the fault plan, e.g. "faults latency=1ms,drop=0.01"
 *   clear               remove every fault, a stall included
 */

const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');

async function main () {
  const kind = process.argv[2];
  let sim;
  if (kind === 'modbus' || kind === 'modbus-animated') {
    // animated: holding registers 0 and 1 move (a counter and a sine), so polled tags change
    const modelOptions = kind === 'modbus-animated' ? { animate: true } : undefined;
    sim = await require(path.join(ROOT, 'gateway/simulators/modbus')).createModbusTcpSimulator({ host: '127.0.0.1', port: 0, modelOptions });
  } else if (kind === 'modbus-tls') {
    const files = JSON.parse(process.argv[3]);
    const tls = { cert: fs.readFileSync(files.cert), key: fs.readFileSync(files.key), ca: fs.readFileSync(files.ca) };
    sim = await require(path.join(ROOT, 'gateway/simulators/modbus')).createModbusTcpSimulator({ host: '127.0.0.1', port: 0, tls });
  } else if (kind === 'ascii') {
    sim = await require(path.join(ROOT, 'gateway/simulators/ascii')).createAsciiSimulator({ host: '127.0.0.1', port: 0 });
  } else {
    throw new Error(`sim-process: unknown simulator ${JSON.stringify(kind)} (modbus, modbus-animated, modbus-tls, ascii)`);
  }
  process.stdout.write(`PORT ${sim.port}\n`);
  let pending = '';
  process.stdin.on('data', (d) => {
    pending += d;
    let nl;
    while ((nl = pending.indexOf('\n')) !== -1) {
      command(sim, pending.slice(0, nl).trim());
      pending = pending.slice(nl + 1);
    }
  });
  process.stdin.on('end', () => sim.close());
  process.stdin.on('close', () => sim.close());
}

/** Applies one stdin command; a bad one is reported on stderr and changes nothing. */
function command (sim, line) {
  const [verb, ...rest] = line.split(/\s+/);
  const arg = rest.join(' ');
  try {
    if (verb === 'stall') sim.faults.stall(arg);
    else if (verb === 'faults') sim.faults.set(arg);
    else if (verb === 'clear') sim.faults.clear();
    else if (verb !== '') throw new Error(`unknown command ${JSON.stringify(verb)} (stall, faults, clear)`);
  } catch (err) {
    console.error(`sim-process: ${err.message}`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
