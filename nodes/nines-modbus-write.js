'use strict';

/**
 * nines-modbus-write: one write (FC 5, 6, 15, 16; FC 22 for a part of a register written by tag) per
 * msg, values from msg.payload, encoded by gateway/values/registers.js. With a tag list (source "tags"), msg.payload names the values:
 * `{setpoint: 71.5, pump_on: true}`, each encoded by its tag's type, scale and order
 * (gateway/tags/write.js) and written in the order given. Every value is checked before anything
 * is sent: one that its tag cannot hold refuses the whole msg. Refused unless the device config
 * allows writes.
 */

const { validateOp } = require('../gateway/drivers/modbus');
const { encodeTagWrites, runTagWrites } = require('../gateway/tags');
const { NinesError } = require('../gateway/base/errors');
const { nodeError, invalidArg } = require('./lib/errors');
const { errorStatus, showStatus } = require('./lib/status');
const { latencyMs } = require('./lib/reply');
const { requestFields, typeOptions, writeOp, configuredUnit } = require('./lib/modbus-msg');
const { usesTags, withProfile, nodeTags } = require('./lib/tag-list');
const { registerTagAdmin } = require('./lib/tag-admin');

module.exports = function (RED) {
  registerTagAdmin(RED);

  function NinesModbusWriteNode (config) {
    RED.nodes.createNode(this, config);
    const node = this;
    const device = RED.nodes.getNode(config.device);
    const tagMode = usesTags(config);

    let typeOpts = null;
    /** tag mode: the checked tags */
    let tags = null;
    let configError = null;
    try {
      if (tagMode) {
        if (device && device.spec) tags = nodeTags(withProfile(RED, config, 'modbus'), device.spec).tags;
      } else {
        typeOpts = typeOptions(config);
      }
    } catch (err) {
      configError = nodeError(err, 'NINES_ERR_INVALID_ARG');
      node.error(configError);
    }

    // with writes off the node never sends, so it does not open the connection either
    const writesOff = { fill: 'grey', shape: 'ring', text: 'nines-modbus-write.status.writes-off' };
    if (!device) showStatus(node, { fill: 'red', shape: 'ring', text: 'nines-modbus-write.status.no-device' });
    else if (configError) showStatus(node, errorStatus(configError));
    else if (!device.allowWrites) showStatus(node, writesOff);
    else {
      // on a line of units the status shows the health of the node's unit: its configured one until
      // a msg names another, then that of its last request (a tag list writes to the device's unit)
      device.hub.follow(node, tagMode ? undefined : configuredUnit(config));
      device.hub.register(node);
    }

    /** A failed request: the status the device's hub gives it (DeviceHub#showFailure), then done(err) */
    const failed = (e, done) => { device.hub.showFailure(node, e); done(e); };

    /**
     * Writes by tag: all values encoded and checked first (nothing sent when one is refused), then
     * one request per tag in the order given, stopping at the first that fails (the rest are not
     * sent). msg.results says how each went; when one failed, the msg still goes out and done(err)
     * names it, so Catch nodes see it.
     */
    function writeTags (msg, send, done) {
      let writes;
      try {
        // tags live on the device's unit, as the read node's do; a write function code the device
        // lacks gets the one that stands in (its spec's unsupportedFunctionCodes)
        writes = encodeTagWrites(tags, msg.payload, { protocol: device.spec.target.protocol, unsupportedFunctionCodes: device.spec.unsupportedFunctionCodes });
        for (const w of writes) w.ops = w.ops.map((op) => validateOp(op));
      } catch (err) {
        const e = nodeError(err, 'NINES_ERR_INVALID_ARG');
        // encodeTagWrites names the tag; Node-RED users know the msg property
        if (e.details && e.details.field === 'values') e.details.field = 'msg.payload';
        failed(e, done);
        return;
      }
      const t0 = process.hrtime.bigint();
      runTagWrites(writes, (op) => device.hub.request(op, node.id)).then(({ ok, results }) => {
        msg.results = results;
        msg.latency = latencyMs({ sentNs: t0, doneNs: process.hrtime.bigint() });
        send(msg);
        if (ok) {
          device.hub.showSuccess(node);
          done();
          return;
        }
        const names = Object.keys(results).filter((n) => !results[n].ok && !results[n].skipped);
        const skipped = Object.keys(results).filter((n) => results[n].skipped);
        const first = results[names[0]];
        const after = skipped.length ? `; not sent after it: ${skipped.join(', ')}` : '';
        failed(nodeError(new NinesError(first.code, `tag write of ${names[0]} failed (${first.code})${after}: ${first.message}`,
          { tags: names, skipped, results })), done);
      });
    }

    node.on('input', (msg, send, done) => {
      if (!device) { done(invalidArg('device', RED._('nines-modbus-write.errors.no-device'))); return; }
      if (configError) { done(configError); return; }
      if (!device.allowWrites) {
        showStatus(node, writesOff);
        done(invalidArg('allowWrites', RED._('nines-modbus-write.errors.writes-disabled', { device: device.name || device.target })));
        return;
      }
      if (tagMode) {
        if (tags === null) { done(device.configError ? nodeError(device.configError, 'NINES_ERR_INVALID_ARG') : invalidArg('device', RED._('nines-modbus-write.errors.no-device'))); return; }
        writeTags(msg, send, done);
        return;
      }
      let op;
      try {
        op = writeOp(requestFields(msg, config, [5, 6, 15, 16], false), msg.payload, typeOpts);
        op = validateOp(op);
      } catch (err) {
        failed(nodeError(err, 'NINES_ERR_INVALID_ARG'), done);
        return;
      }
      device.hub.follow(node, op.unitId);
      device.hub.request(op, node.id).then((reply) => {
        msg.latency = latencyMs(reply);
        msg.modbus = {
          fc: op.fc,
          address: op.address,
          quantity: op.quantity,
          unitId: op.unitId === undefined ? device.unitId : op.unitId,
          written: op.values ? Array.from(op.values) : op.value
        };
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
      if (!device || configError || !device.allowWrites) { done(); return; }
      device.hub.deregister(node).then(() => done(), () => done());
    });
  }

  RED.nodes.registerType('nines-modbus-write', NinesModbusWriteNode);
};
