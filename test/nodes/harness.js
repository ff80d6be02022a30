'use strict';

/**
 * Shared plumbing for the node tests: node-red-node-test-helper bound to the installed Node-RED 4,
 * the simulators on port 0, and small waits that poll state instead of assuming times.
 */

const helper = require('node-red-node-test-helper');
const { until } = require('../helpers/wait');

// NINES_NODE_RED names another Node-RED install (CI runs the node tests on Node-RED 5 this way)
helper.init(require.resolve(process.env.NINES_NODE_RED || 'node-red'));

/**
 * The last status a node set (the helper spies on Node.prototype.status).
 * @param {object} node
 * @returns {object|undefined}
 */
function lastStatus (node) {
  const calls = node.status.getCalls().filter((c) => c.thisValue === node);
  return calls.length ? calls[calls.length - 1].args[0] : undefined;
}

/**
 * Waits until a node's status matches `pred`.
 * @param {object} node
 * @param {(s: object) => boolean} pred
 * @param {string} what
 * @param {number} [limitMs]
 */
function waitStatus (node, pred, what, limitMs) {
  return until(() => { const s = lastStatus(node); return s && pred(s) ? s : null; }, `${node.type} status ${what}`, limitMs);
}

/**
 * Sends `msg` to `node` and resolves with the msg a helper node `out` receives, or rejects with the
 * error given to done(err).
 * @param {object} node the node under test
 * @param {object} out a 'helper' node wired to its output
 * @param {object} msg
 * @param {number} [limitMs=5000]
 * @returns {Promise<object>}
 */
function roundTrip (node, out, msg, limitMs = 5000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { cleanup(); reject(new Error('no output and no error')); }, limitMs);
    const onInput = (m) => { cleanup(); resolve(m); };
    const onDone = (call) => {
      const err = call.args[0];
      if (call.thisValue === node && err && err.code) { cleanup(); reject(err); }
    };
    function cleanup () {
      clearTimeout(timer);
      out.removeListener('input', onInput);
      node.removeListener('call:error', onDone);
    }
    out.on('input', onInput);
    node.on('call:error', onDone);
    node.receive(msg);
  });
}

/**
 * Sends `msg` and resolves with the error the node reports through done(err) (Node-RED passes it
 * to node.error with the msg; a log line without a msg, such as a device's report, is not one).
 * @param {object} node
 * @param {object} msg
 * @param {number} [limitMs=5000]
 * @returns {Promise<Error>}
 */
function expectError (node, msg, limitMs = 5000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { node.removeListener('call:error', onError); reject(new Error('no error reported')); }, limitMs);
    function onError (call) {
      if (call.thisValue !== node || call.args.length < 2) return;
      clearTimeout(timer);
      node.removeListener('call:error', onError);
      resolve(call.args[0]);
    }
    node.on('call:error', onError);
    node.receive(msg);
  });
}

/**
 * The mocha hooks of a node test against a Modbus TCP simulator: the helper's server for the file,
 * a fresh simulator on port 0 per test, and after each test the flow unloaded and the current
 * simulator closed (a test may replace it, e.g. to restart the device on the same port).
 * @param {() => {close: Function}} get returns the current simulator
 * @param {(sim: object) => void} set receives each new one
 */
function withModbusSim (get, set) {
  const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
  before(() => helper.startServer());
  after(() => helper.stopServer());
  beforeEach(async () => set(await createModbusTcpSimulator({ port: 0 })));
  afterEach(async () => {
    await helper.unload();
    await get().close();
  });
}

module.exports = { helper, waitStatus, lastStatus, roundTrip, expectError, withModbusSim };
