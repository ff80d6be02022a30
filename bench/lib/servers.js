'use strict';

/**
 * The servers a question runs against, each in its own process: the C libmodbus server when it is
 * built, else the nines Modbus simulator; the nines ASCII simulator; the C responders.
 */

const path = require('node:path');
const { startServer } = require('./procs');
const { cPath, startCServer } = require('./c-peers');

const SIM = path.join(__dirname, 'sim-process.js');

/**
 * @param {'modbus'|'modbus-animated'|'ascii'} kind
 * @returns {ReturnType<typeof startServer>} the nines simulator in a child node process
 */
function startSimProcess (kind) {
  return startServer(process.execPath, [SIM, kind], { label: `nines ${kind} simulator` });
}

/**
 * The reference Modbus server: the C libmodbus server, or the nines simulator when C is unavailable.
 * @returns {Promise<{port: number, stop: Function, name: string, cmdline: string}>}
 */
async function startReferenceModbusServer () {
  if (cPath('modbus-server')) return { ...(await startCServer('modbus-server')), name: 'C libmodbus server' };
  return { ...(await startSimProcess('modbus')), name: 'nines Modbus simulator (C server not built)' };
}

module.exports = { startSimProcess, startReferenceModbusServer };
