'use strict';

/**
 * Devices: a device owns its connections (at most maxConnections), serves its users fairly from
 * bounded per-user queues, and reports its health. Jobs, poll nodes and read/write nodes that name a
 * device share it (design.md "Devices and tags").
 */

const { Device } = require('./device');
const { DeviceUser } = require('./user');
const { buildDeviceSpec } = require('./spec');

module.exports = { Device, DeviceUser, buildDeviceSpec };
