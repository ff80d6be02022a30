'use strict';

/**
 * A line of Modbus units in its own process (question 13), so the simulator never shares an event
 * loop with the gateway under test: the nines simulator answering unit ids 1..n
 *
 *   node line-sim.js tcp <n>            Modbus TCP on 127.0.0.1, port 0 (a PLC gateway with n units)
 *   node line-sim.js rtutcp <n>         RTU over TCP on 127.0.0.1, port 0 (a serial server's line)
 *   node line-sim.js rtu <n> <path>     RTU on a serial port (one end of a socat PTY pair), 115200 baud
 *
 * Prints "PORT <n>" (0 for a serial port) when it answers, and stops when stdin closes. Lines on
 * stdin, each answered by one line on stdout:
 *   serve <id> off|on    the unit goes silent (a dead slave) or answers again   → "OK <epoch ms>"
 *   stats                the simulator's counters                               → "STATS <json>"
 * `ignored` in the stats counts the requests to a unit that does not answer: the requests that reached
 * the silent unit.
 */

const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');
const BAUD = 115200;

async function main () {
  const [kind, n, serialPath] = process.argv.slice(2);
  const modbus = require(path.join(ROOT, 'gateway/simulators/modbus'));
  const modelOptions = { unitIds: Array.from({ length: Number(n) }, (_, i) => i + 1) };
  let sim;
  if (kind === 'tcp') sim = await modbus.createModbusTcpSimulator({ host: '127.0.0.1', port: 0, modelOptions });
  else if (kind === 'rtutcp') sim = await modbus.createModbusRtuTcpSimulator({ host: '127.0.0.1', port: 0, modelOptions });
  else if (kind === 'rtu') sim = await modbus.createModbusRtuSimulator({ path: serialPath, baudRate: BAUD, modelOptions });
  else throw new Error(`line-sim: unknown line ${JSON.stringify(kind)} (tcp, rtutcp, rtu)`);
  // a serial port has no port number: 0
  process.stdout.write(`PORT ${typeof sim.port === 'number' ? sim.port : 0}\n`);
  let pending = '';
  process.stdin.on('data', (d) => {
    pending += d;
    let nl;
    while ((nl = pending.indexOf('\n')) !== -1) {
      command(sim, pending.slice(0, nl).trim());
      pending = pending.slice(nl + 1);
    }
  });
  const close = () => sim.close().finally(() => process.exit()); // eslint-disable-line n/no-process-exit
  process.stdin.on('end', close);
  process.stdin.on('close', close);
}

/** Applies one stdin command and answers it; a bad one is answered with ERR. */
function command (sim, line) {
  const [verb, id, on] = line.split(/\s+/);
  try {
    if (verb === 'serve') {
      sim.model.serve(Number(id), on === 'on');
      process.stdout.write(`OK ${Date.now()}\n`);
    } else if (verb === 'stats') {
      process.stdout.write(`STATS ${JSON.stringify(sim.stats)}\n`);
    } else if (verb !== '') {
      throw new Error(`unknown command ${JSON.stringify(verb)} (serve, stats)`);
    }
  } catch (err) {
    process.stdout.write(`ERR ${err.message}\n`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
