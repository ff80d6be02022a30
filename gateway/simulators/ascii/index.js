'use strict';

/** The ED-588 / ED-560 ASCII simulator: TCP server, pure device models and the model table. */

const { createAsciiSimulator } = require('./server');
const { createDevice } = require('./device');
const { MODELS } = require('./models');

module.exports = { createAsciiSimulator, createDevice, MODELS };
