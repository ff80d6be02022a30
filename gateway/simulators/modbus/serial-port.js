'use strict';

/**
 * Lazy loading of the optional `serialport` package, so TCP-only installs never load a native module.
 */

const { NinesError } = require('../../base/errors');

/**
 * Returns the SerialPort class, loading serialport on first use.
 * @param {(id: string) => any} [load=require] module loader (a seam for tests)
 * @returns {Function} the SerialPort class
 * @throws {NinesError} NINES_ERR_SERIAL_UNAVAILABLE when the package cannot be loaded
 */
function loadSerialPort (load = require) {
  let mod;
  try {
    mod = load('serialport');
  } catch (err) {
    throw new NinesError('NINES_ERR_SERIAL_UNAVAILABLE',
      `the Modbus RTU simulator needs the optional "serialport" package, which could not be loaded (${err && err.message}); install it with: npm install serialport`,
      { cause: err && err.code });
  }
  if (!mod || typeof mod.SerialPort !== 'function') {
    throw new NinesError('NINES_ERR_SERIAL_UNAVAILABLE', 'the "serialport" package loaded but has no SerialPort class (serialport 10 or later is needed)');
  }
  return mod.SerialPort;
}

module.exports = { loadSerialPort };
