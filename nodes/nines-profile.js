'use strict';

/**
 * nines-profile: a tag list described once and used by many nodes (a meter model polled on 30
 * units, an I/O module in every panel), the Node-RED face of the gateway's profiles (docs/tags.md
 * "Profiles"). A nines-poll, nines-modbus-read or nines-modbus-write node whose source is "profile"
 * takes its tags from here instead of a list of its own: edited once, deployed to every user.
 *
 * Checked once here, by the runtime's core (gateway/tags/spec.js), for its protocol; a user checks
 * the tags again with its own device's limits. A config node never logs itself (the debug sidebar
 * cannot place a config node's message): its users say what is wrong, naming the profile and the
 * field (`profile "meter": tags[3].address …`).
 */

const { buildTags, tagContext } = require('../gateway/tags');
const { rawTags } = require('./lib/tag-list');
const { registerTagAdmin } = require('./lib/tag-admin');

/** The protocols a profile's tags are written for: their tables differ */
const PROTOCOLS = Object.freeze({ modbus: 'modbus+tcp', ascii: 'ascii' });

module.exports = function (RED) {
  registerTagAdmin(RED);

  function NinesProfileNode (config) {
    RED.nodes.createNode(this, config);
    const node = this;
    node.name = config.name;
    node.protocol = config.protocol === 'ascii' ? 'ascii' : 'modbus';
    node.tags = Array.isArray(config.tags) ? config.tags : [];
    node.configError = null;
    try {
      if (!Object.hasOwn(PROTOCOLS, config.protocol || 'modbus')) throw new TypeError(`protocol must be "modbus" or "ascii"; got ${JSON.stringify(config.protocol)}`);
      buildTags(rawTags(config.tags), tagContext({ protocol: PROTOCOLS[node.protocol] }), 'tags');
    } catch (err) {
      node.configError = err;
    }
  }

  RED.nodes.registerType('nines-profile', NinesProfileNode);
};
