'use strict';

/**
 * Modbus simulators: a data model, a TCP server, an RTU slave on a serial line and RTU slaves behind a TCP
 * listener (RTU over TCP, as a serial server presents them), with the shared fault engine and quirk modes.
 * `nines sim modbus` and the demo start these; tests and benches use them as the device under test.
 */

const { createModbusModel } = require('./model');
const { createModbusLineModel } = require('./line-model');
const { createModbusTcpSimulator } = require('./tcp-server');
const { createModbusRtuSimulator } = require('./rtu-server');
const { createModbusRtuTcpSimulator } = require('./rtutcp-server');

module.exports = { createModbusModel, createModbusLineModel, createModbusTcpSimulator, createModbusRtuSimulator, createModbusRtuTcpSimulator };
