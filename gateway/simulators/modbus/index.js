'use strict';

/**
 * Modbus simulators: a data model, a TCP server and an RTU slave on a serial line, with the shared fault engine.
 * `nines sim modbus` and the demo start these; tests and benches use them as the device under test.
 */

const { createModbusModel } = require('./model');
const { createModbusTcpSimulator } = require('./tcp-server');
const { createModbusRtuSimulator } = require('./rtu-server');

module.exports = { createModbusModel, createModbusTcpSimulator, createModbusRtuSimulator };
