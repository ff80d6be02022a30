'use strict';

/**
 * nines-modbus-read: one read (FC 1-4) per msg; registers decoded to typed values (int16 … float64,
 * word and byte order, scale) by gateway/values/registers.js. With a tag list (source "tags"), one
 * poll of the tags per msg: the fewest reads that cover them, sent on the device's connections and
 * decoded beside the device (pool.readTags), out as msg.payload {tag: value} with msg.quality.
 */

const { decodeRegisters } = require('../gateway/values/registers');
const { validateOp } = require('../gateway/drivers/modbus');
const { NinesError } = require('../gateway/base/errors');
const { nodeError, invalidArg } = require('./lib/errors');
const { errorStatus, showStatus } = require('./lib/status');
const { latencyMs } = require('./lib/reply');
const { requestFields, typeOptions, configuredUnit } = require('./lib/modbus-msg');
const { usesTags, withProfile, tagRead, badTags } = require('./lib/tag-list');
const { registerTagAdmin } = require('./lib/tag-admin');

module.exports = function (RED) {
  registerTagAdmin(RED);

  function NinesModbusReadNode (config) {
    RED.nodes.createNode(this, config);
    const node = this;
    const device = RED.nodes.getNode(config.device);
    const tagMode = usesTags(config);

    let decodeOpts = null;
    /** tag mode: the checked tags, their reads, units and reader key */
    let read = null;
    let configError = null;
    try {
      if (tagMode) {
        if (device && device.spec) read = tagRead(withProfile(RED, config, 'modbus'), device.spec, node.id);
      } else {
        decodeOpts = typeOptions(config);
      }
    } catch (err) {
      configError = nodeError(err, 'NINES_ERR_INVALID_ARG');
      node.error(configError);
    }

    if (!device) showStatus(node, { fill: 'red', shape: 'ring', text: 'nines-modbus-read.status.no-device' });
    else if (configError) showStatus(node, errorStatus(configError));
    else {
      // on a line of units the status shows the health of the node's unit: its configured one until
      // a msg names another, then that of its last request (a tag list reads the device's unit)
      device.hub.follow(node, tagMode ? undefined : configuredUnit(config));
      device.hub.register(node);
    }

    /** A failed request: the status the device's hub gives it (DeviceHub#showFailure), then done(err) */
    const failed = (e, done) => { device.hub.showFailure(node, e); done(e); };

    /**
     * One poll of the tags. The msg goes out whatever came back: the tags read carry their values,
     * the others null with their code in msg.quality. When any tag was not read, done(err) as well,
     * so Catch nodes see it (err.details.quality names every tag's outcome).
     */
    function readTags (msg, send, done) {
      device.hub.readTags(read, node.id, read.key).then((result) => finish(result, null), (err) => {
        const e = nodeError(err);
        if (err && err.poll) finish(err.poll, e);
        else failed(e, done);
      });
      function finish (result, err) {
        msg.payload = result.values;
        msg.quality = result.quality;
        msg.ts = result.ts;
        msg.units = read.units;
        msg.reads = result.requests;
        msg.latency = latencyMs(result);
        send(msg);
        const bad = badTags(result.quality);
        if (err === null && bad.code === null) {
          device.hub.showSuccess(node);
          done();
          return;
        }
        const e = err || nodeError(new NinesError(bad.code, `${bad.names.length} of ${read.tags.length} tags not read (${bad.names.map((n) => `${n}: ${result.quality[n]}`).join(', ')})`, {}));
        e.details = Object.assign({}, e.details, { tags: bad.names, quality: result.quality });
        failed(e, done);
      }
    }

    node.on('input', (msg, send, done) => {
      if (!device) { done(invalidArg('device', RED._('nines-modbus-read.errors.no-device'))); return; }
      if (configError) { done(configError); return; }
      if (tagMode) {
        if (read === null) { done(device.configError ? nodeError(device.configError, 'NINES_ERR_INVALID_ARG') : invalidArg('device', RED._('nines-modbus-read.errors.no-device'))); return; }
        readTags(msg, send, done);
        return;
      }
      let op;
      try {
        op = requestFields(msg, config, [1, 2, 3, 4], true);
        validateOp(op);
      } catch (err) {
        failed(nodeError(err, 'NINES_ERR_INVALID_ARG'), done);
        return;
      }
      device.hub.follow(node, op.unitId);
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
        device.hub.showSuccess(node);
        send(msg);
        done();
      }, (err) => {
        // the connection's state is the device's, shown alike on all its nodes; this request's own
        // failure (a timeout, an exception, a "?" reply) shows on this node until its next reply
        failed(nodeError(err), done);
      });
    });

    node.on('close', (removed, done) => {
      if (!device || configError) { done(); return; }
      device.hub.deregister(node).then(() => done(), () => done());
    });
  }

  RED.nodes.registerType('nines-modbus-read', NinesModbusReadNode);
};
