'use strict';

/** The ASCII (DCON / Brainboxes ED) driver: pure protocol parts and the TCP client. */

const { checksum, appendChecksum, verifyAndStrip } = require('./checksum');
const command = require('./command');
const { AsciiFramer } = require('./framer');
const { parseReply, describeBytes } = require('./reply');
const { createGenerator, GENERATORS } = require('./generators');
const { AsciiClient } = require('./client');

module.exports = {
  AsciiClient,
  AsciiFramer,
  parseReply,
  describeBytes,
  checksum,
  appendChecksum,
  verifyAndStrip,
  createGenerator,
  GENERATORS,
  ...command
};
