'use strict';

/**
 * nines-modbus-write: one write (FC 5, 6, 15, 16) per msg, values from msg.payload, encoded by
 * gateway/values/registers.js. Refused unless the device config allows writes.
 */

const { validateOp } = require('../gateway/drivers/modbus');
const { nodeError, invalidArg, isMsgError } = require('./lib/errors');
const { errorStatus, isConnectionError, showStatus } = require('./lib/status');
const { latencyMs } = require('./lib/reply');
const { requestFields, typeOptions, writeOp } = require('./lib/modbus-msg');

module.exports = function (RED) {
  function NinesModbusWriteNode (config) {
    RED.nodes.createNode(this, config);
    const node = this;
    const device = RED.nodes.getNode(config.device);

    let typeOpts = null;
    let configError = null;
    try {
      typeOpts = typeOptions(config);
    } catch (err) {
      configError = nodeError(err, 'NINES_ERR_INVALID_ARG');
      node.error(configError);
    }

    // with writes off the node never sends, so it does not open the connection either
    const writesOff = { fill: 'grey', shape: 'ring', text: 'nines-modbus-write.status.writes-off' };
    if (!device) showStatus(node, { fill: 'red', shape: 'ring', text: 'nines-modbus-write.status.no-device' });
    else if (configError) showStatus(node, errorStatus(configError));
    else if (!device.allowWrites) showStatus(node, writesOff);
    else device.hub.register(node);

    node.on('input', (msg, send, done) => {
      if (!device) { done(invalidArg('device', RED._('nines-modbus-write.errors.no-device'))); return; }
      if (configError) { done(configError); return; }
      if (!device.allowWrites) {
        showStatus(node, writesOff);
        done(invalidArg('allowWrites', RED._('nines-modbus-write.errors.writes-disabled', { device: device.name || device.target })));
        return;
      }
      let op;
      try {
        op = writeOp(requestFields(msg, config, [5, 6, 15, 16], false), msg.payload, typeOpts);
        op = validateOp(op);
      } catch (err) {
        done(nodeError(err, 'NINES_ERR_INVALID_ARG'));
        return;
      }
      device.hub.request(op, node.id).then((reply) => {
        msg.latency = latencyMs(reply);
        msg.modbus = {
          fc: op.fc,
          address: op.address,
          quantity: op.quantity,
          unitId: op.unitId === undefined ? device.unitId : op.unitId,
          written: op.values ? Array.from(op.values) : op.value
        };
        showStatus(node, device.hub.status);
        send(msg);
        done();
      }, (err) => {
        const e = nodeError(err);
        // the connection's state is the device's, shown alike on all its nodes; this request's own
        // failure (a timeout, an exception, a "?" reply) shows on this node until its next reply
        if (isConnectionError(e)) showStatus(node, device.hub.status);
        else if (!isMsgError(e)) showStatus(node, errorStatus(e));
        done(e);
      });
    });

    node.on('close', (removed, done) => {
      if (!device || configError || !device.allowWrites) { done(); return; }
      device.hub.deregister(node).then(() => done(), () => done());
    });
  }

  RED.nodes.registerType('nines-modbus-write', NinesModbusWriteNode);
};
