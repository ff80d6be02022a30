'use strict';

/**
 * nines-ascii: one ASCII (DCON) command per msg to a Brainboxes ED device, the typed reply out.
 * The command is the node's own, or msg.command, or a string msg.payload, or built from outputs
 * given as data: msg.payload {outputs: [8 booleans]} or {line: 3, value: true} (lib/ascii-outputs.js).
 */

const { validateCommand } = require('../gateway/drivers/ascii');
const { nodeError, invalidArg } = require('./lib/errors');
const { showStatus } = require('./lib/status');
const { asciiPayload, latencyMs } = require('./lib/reply');
const { isOutputsPayload, outputsCommand, checkOutputsOf } = require('./lib/ascii-outputs');

module.exports = function (RED) {
  function NinesAsciiNode (config) {
    RED.nodes.createNode(this, config);
    const node = this;
    const device = RED.nodes.getNode(config.device);
    const configured = typeof config.command === 'string' ? config.command.trim() : '';

    if (device) device.hub.register(node);
    else showStatus(node, { fill: 'red', shape: 'ring', text: 'nines-ascii.status.no-device' });

    /** @returns {string} the command for this msg; throws NINES_ERR_INVALID_ARG when there is none */
    function commandFor (msg) {
      if (configured) return configured;
      if (msg.command !== undefined) {
        if (typeof msg.command !== 'string') throw invalidArg('msg.command', `msg.command must be a string such as "@01"; got ${typeof msg.command}`);
        return msg.command.trim();
      }
      if (typeof msg.payload === 'string') return msg.payload.trim();
      // outputs as data: only when nothing else names a command, so a reply passed on from an
      // `@AA` read ({outputs, inputs, value}) to a node with its own command never sets outputs
      if (isOutputsPayload(msg.payload)) return outputsCommand(msg.payload, device.address);
      throw invalidArg('msg.command', 'no command: set one in the node, or send msg.command, a string msg.payload such as "@01", or msg.payload { outputs: [8 booleans] } or { line: 3, value: true }');
    }

    node.on('input', (msg, send, done) => {
      if (!device) {
        done(invalidArg('device', RED._('nines-ascii.errors.no-device')));
        return;
      }
      if (device.configError) { done(nodeError(device.configError, 'NINES_ERR_INVALID_ARG')); return; }
      let command;
      try {
        command = commandFor(msg);
        validateCommand(command, { checksum: device.checksum });
      } catch (err) {
        const e = nodeError(err, 'NINES_ERR_INVALID_COMMAND');
        device.hub.showFailure(node, e);
        done(e);
        return;
      }
      // outputs as data: checked against the lines the module has (its model), before they are set
      const checked = configured || msg.command !== undefined || !isOutputsPayload(msg.payload)
        ? Promise.resolve()
        : device.model(node.id).then((model) => checkOutputsOf(msg.payload, model));
      checked.then(() => device.hub.request(command, node.id)).then((reply) => {
        msg.payload = asciiPayload(reply);
        msg.raw = reply.raw;
        msg.latency = latencyMs(reply);
        msg.command = command;
        device.hub.showSuccess(node);
        send(msg);
        done();
      }, (err) => {
        const e = nodeError(err);
        // the connection's state is the device's, shown alike on all its nodes; this request's own
        // failure (a timeout, an exception, a "?" reply) shows on this node until its next reply
        device.hub.showFailure(node, e);
        done(e);
      });
    });

    node.on('close', (removed, done) => {
      if (!device) { done(); return; }
      device.hub.deregister(node).then(() => done(), () => done());
    });
  }

  RED.nodes.registerType('nines-ascii', NinesAsciiNode);
};
