'use strict';

/**
 * A real Node-RED (4, or the one NINES_NODE_RED names), embedded through its API, in a child process of the test (the node tests
 * load another runtime into the mocha process, and Node-RED's runtime is a singleton). The
 * package is found as an installed module: the test links it into <userDir>/node_modules.
 * Prints "NINES_E2E_READY <port>" once listening on 127.0.0.1; stops on SIGTERM or a "stop" line.
 * NINES_E2E_USERS, when set, turns on the editor's login (adminAuth): a JSON object of user name →
 * {password, permissions} ("*" or "read"), checked in memory.
 */

function main () {
  const http = require('node:http');
  // NINES_NODE_RED names another Node-RED install (CI runs Node-RED 5 this way); default: ours
  const redPath = require.resolve(process.env.NINES_NODE_RED || 'node-red');
  const express = require(require.resolve('express', { paths: [redPath] }));
  const RED = require(redPath);
  const userDir = process.env.NINES_E2E_USERDIR;
  if (!userDir) throw new Error('NINES_E2E_USERDIR is required');

  const settings = {
    userDir,
    flowFile: 'flows.json',
    credentialSecret: false,
    httpAdminRoot: '/',
    httpNodeRoot: '/api',
    uiHost: '127.0.0.1',
    fileWorkingDirectory: userDir,
    logging: { console: { level: process.env.NINES_E2E_LOG || 'warn', metrics: false, audit: false } },
    // keep everything on 127.0.0.1: no update checks, no palette catalogue, no module installs
    telemetry: { enabled: false },
    externalModules: { autoInstall: false, palette: { allowInstall: false }, modules: { allowInstall: false } },
    editorTheme: { tours: false, palette: { editable: false }, projects: { enabled: false } },
    functionExternalModules: false
  };

  if (process.env.NINES_E2E_USERS) settings.adminAuth = adminAuth(JSON.parse(process.env.NINES_E2E_USERS));

  const app = express();
  const server = http.createServer(app);
  RED.init(server, settings);
  app.use(settings.httpAdminRoot, RED.httpAdmin);
  app.use(settings.httpNodeRoot, RED.httpNode);

  let stopping = false;
  async function stop () {
    if (stopping) return;
    stopping = true;
    try { await RED.stop(); } catch (err) { /* already stopped */ }
    server.closeAllConnections();
    server.close(() => process.exit(0)); // eslint-disable-line n/no-process-exit
  }
  process.on('SIGTERM', stop);
  process.stdin.on('data', (d) => { if (String(d).includes('stop')) stop(); });
  process.stdin.on('end', stop);

  server.listen(0, '127.0.0.1', () => {
    RED.start().then(() => {
      process.stdout.write(`NINES_E2E_READY ${server.address().port}\n`);
    }, (err) => {
      process.stderr.write(`Node-RED failed to start: ${err.stack}\n`);
      process.exitCode = 1;
      stop();
    });
  });
}

/** Node-RED's credentials login over a fixed list of users, without password hashes: a test's users only */
function adminAuth (users) {
  const user = (name) => (Object.hasOwn(users, name) ? { username: name, permissions: users[name].permissions } : null);
  return {
    type: 'credentials',
    users: async (name) => user(name),
    authenticate: async (name, password) => (user(name) !== null && users[name].password === password ? user(name) : null)
  };
}

// a script, run by launch.js; mocha given the whole folder loads it too, and must not start anything
if (require.main === module) main();
