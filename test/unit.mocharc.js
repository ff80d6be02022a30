'use strict';

/**
 * `npm run test:unit`: the tests that need no system tool, no child process and no network peer,
 * in a few seconds: parsers and encoders, config validation, latency arithmetic, the scheduler with
 * fake clients, specs and small pure modules. The rest of `npm test` (sockets to simulators, PTYs,
 * brokers, worker pools, child processes, Node-RED) runs in the full suite.
 *
 * test/tools/unit-set.test.js keeps this list honest: every file here exists, starts no program
 * and no child process.
 */

/** Whole folders, then single files per folder (the other files there use sockets or processes) */
const FOLDERS = ['test/latency', 'test/jobs', 'test/fuzz', 'test/sparkplug', 'test/bench'];
const FILES = {
  'test/ascii': ['checksum', 'command', 'framer', 'reply', 'generators'],
  'test/modbus': ['pdu', 'op', 'pipeline-guard', 'fcs', 'function-codes'],
  'test/simulators': ['modbus-model', 'ascii-device', 'faults', 'modbus-fcs'],
  'test/commission': ['map-probe'],
  'test/devices': ['spec', 'fifo'],
  'test/drivers': ['connection-options'],
  'test/scheduler': ['scheduler', 'wait', 'deadline-queue'],
  'test/gateway': ['config', 'config-rules', 'one-rule', 'config-limits', 'core-small', 'decode', 'op-source', 'target', 'watch', 'sweep-rule', 'hlog-errors', 'config-tags', 'config-profiles', 'config-scan', 'config-sparkplug', 'spool', 'spool-recovery', 'store-forward', 'rounding', 'register-types', 'window-reporter'],
  'test/tools': ['system-tools', 'unit-set', 'package'],
  // the docs' snippets run the CLI and a walkthrough (snippets.test.js): only the README's checks here
  'test/docs': ['readme'],
  'test/tags': ['spec', 'plan', 'csv', 'write', 'values', 'editor-rows', 'types'],
  'test/nodes': ['unit-list'],
  'test/metrics': ['classic-buckets', 'summaries']
};

const UNIT = [
  ...FOLDERS.map((dir) => `${dir}/*.test.js`),
  ...Object.entries(FILES).flatMap(([dir, names]) => names.map((n) => `${dir}/${n}.test.js`))
];

module.exports = { ...require('../.mocharc.js'), spec: UNIT };
