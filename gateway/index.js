'use strict';

/**
 * The public API of node-red-contrib-nines' core (`require('node-red-contrib-nines')`). It never
 * requires Node-RED: an edge PC runs the gateway without it.
 *
 * Every name is a lazy getter, so requiring the package loads only what the caller touches: a
 * script that opens one Modbus client does not load the MQTT client, the broker or the YAML parser.
 *
 * The folders say the architecture:
 * - base/        errors (coded), units, backoff, constants;
 * - drivers/     targets as URLs, the ASCII and Modbus clients and their connection lifecycle;
 * - devices/     a device owns its connections, serves its users fairly and reports its health;
 * - scheduler/   fixed-rate and closed-loop request plans without coordinated omission;
 * - latency/     HDR recorder, snapshots, summaries, .hgrm / .hlog, plots;
 * - values/      register decoding and the value gate (on change, every n-th, rate cap);
 * - jobs/        a poll job: a device, an operation, a schedule, a recorder; its spec in one module;
 * - workers/     the worker pool (one per process) that hosts devices and jobs off the main loop,
 *               and PollJob, one job in it for callers on a shared event loop;
 * - measure/     the probe, the offered-load sweep and the fleet watch;
 * - runtime/     the gateway: config, MQTT publisher and embedded broker;
 * - simulators/  ED-588 / ED-560 ASCII and Modbus TCP / RTU / RTU-over-TCP devices with fault injection;
 * - cli/         the `nines` command.
 */

const EXPORTS = {
  // base
  NinesError: () => require('./base/errors').NinesError,
  CODES: () => require('./base/errors').CODES,
  parseDuration: () => require('./base/quantities').parseDuration,
  parseRate: () => require('./base/quantities').parseRate,
  // drivers
  parseTarget: () => require('./drivers/target').parseTarget,
  formatTarget: () => require('./drivers/target').formatTarget,
  createClient: () => require('./drivers').createClient,
  AsciiClient: () => require('./drivers/ascii').AsciiClient,
  ModbusClient: () => require('./drivers/modbus').ModbusClient,
  ascii: () => require('./drivers/ascii'),
  modbus: () => require('./drivers/modbus'),
  // devices
  Device: () => require('./devices').Device,
  buildDeviceSpec: () => require('./devices').buildDeviceSpec,
  // scheduler and latency
  startSchedule: () => require('./scheduler').startSchedule,
  Recorder: () => require('./latency').Recorder,
  latency: () => require('./latency'),
  // values
  decodeRegisters: () => require('./values/registers').decodeRegisters,
  encodeValues: () => require('./values/registers').encodeValues,
  // jobs and the pool
  buildJobSpec: () => require('./jobs/spec').buildJobSpec,
  Job: () => require('./jobs/job').Job,
  createPollJob: () => require('./workers/poll-job').createPollJob,
  PollJob: () => require('./workers/poll-job').PollJob,
  WorkerPool: () => require('./workers/pool').WorkerPool,
  sharedPool: () => require('./workers/shared').sharedPool,
  // measurement tools
  runProbe: () => require('./measure/probe').runProbe,
  runSweep: () => require('./measure/sweep').runSweep,
  FleetView: () => require('./measure/watch').FleetView,
  // the gateway runtime
  Gateway: () => require('./runtime/gateway').Gateway,
  loadConfig: () => require('./runtime/config').loadConfig,
  validateConfig: () => require('./runtime/config').validateConfig,
  // simulators
  createAsciiSimulator: () => require('./simulators/ascii').createAsciiSimulator,
  createModbusTcpSimulator: () => require('./simulators/modbus').createModbusTcpSimulator,
  createModbusRtuSimulator: () => require('./simulators/modbus').createModbusRtuSimulator,
  createModbusRtuTcpSimulator: () => require('./simulators/modbus').createModbusRtuTcpSimulator
};

for (const [name, load] of Object.entries(EXPORTS)) {
  Object.defineProperty(module.exports, name, { enumerable: true, get: load });
}
