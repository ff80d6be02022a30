'use strict';

/**
 * nines-modbus-read: one read (FC 1-4) per msg; registers decoded to typed values (int16 … float64,
 * word and byte order, scale) by gateway/values/registers.js.
 */

const { decodeRegisters } = require('../gateway/values/registers');
const { validateOp } = require('../gateway/drivers/modbus');
const { nodeError, invalidArg, isMsgError } = require('./lib/errors');
const { errorStatus, isConnectionError, showStatus } = require('./lib/status');
const { latencyMs } = require('./lib/reply');
const { requestFields, typeOptions } = require('./lib/modbus-msg');

module.exports = function (RED) {
  function NinesModbusReadNode (config) {
    RED.nodes.createNode(this, config);
    const node = this;
    const device = RED.nodes.getNode(config.device);

    let decodeOpts = null;
    let configError = null;
    try {
      decodeOpts = typeOptions(config);
    } catch (err) {
      configError = nodeError(err, 'NINES_ERR_INVALID_ARG');
      node.error(configError);
    }

    if (!device) showStatus(node, { fill: 'red', shape: 'ring', text: 'nines-modbus-read.status.no-device' });
    else if (configError) showStatus(node, errorStatus(configError));
    else device.hub.register(node);

    node.on('input', (msg, send, done) => {
      if (!device) { done(invalidArg('device', RED._('nines-modbus-read.errors.no-device'))); return; }
      if (configError) { done(configError); return; }
      let op;
      try {
        op = requestFields(msg, config, [1, 2, 3, 4], true);
        validateOp(op);
      } catch (err) {
        done(nodeError(err, 'NINES_ERR_INVALID_ARG'));
        return;
      }
      device.hub.request(op, node.id).then((reply) => {
        let payload;
        try {
          // coils and discrete inputs are booleans already; registers get the node's type
          payload = op.fc <= 2 ? reply.data : decodeRegisters(reply.data, decodeOpts);
        } catch (err) {
          done(nodeError(err, 'NINES_ERR_INVALID_ARG'));
          return;
        }
        msg.payload = payload;
        msg.data = reply.data;
        if (reply.buffer) msg.buffer = reply.buffer;
        msg.latency = latencyMs(reply);
        msg.modbus = { fc: op.fc, address: op.address, quantity: op.quantity, unitId: op.unitId === undefined ? device.unitId : op.unitId };
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
      if (!device || configError) { done(); return; }
      device.hub.deregister(node).then(() => done(), () => done());
    });
  }

  RED.nodes.registerType('nines-modbus-read', NinesModbusReadNode);
};
