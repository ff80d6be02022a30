'use strict';

/**
 * "Scan line" needs the editor's write permission: a real Node-RED (4, or the one NINES_NODE_RED
 * names) with its login on, one user who may only read and one who may write. Without a login, or
 * with read only, the scan endpoints refuse and nothing reaches the line; with write, the scan runs
 * against a simulated line and writes nothing.
 */

const assert = require('node:assert/strict');
const { startNodeRed } = require('./launch');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');

const USERS = { admin: { password: 'admin-pass', permissions: '*' }, viewer: { password: 'viewer-pass', permissions: 'read' } };

describe('scan from the device dialog needs the write permission (Node-RED with adminAuth)', function () {
  this.timeout(60000);
  let nr, sim;

  before(async () => {
    sim = await createModbusTcpSimulator({ port: 0, modelOptions: { unitIds: [1, 4] } });
    nr = await startNodeRed({ users: USERS });
  });
  after(async () => {
    if (nr) await nr.stop();
    if (sim) await sim.close();
  });

  /** The Authorization header of a user logged in through Node-RED's own token endpoint */
  async function login (username) {
    const res = await nr.api('POST', '/auth/token', { client_id: 'node-red-editor', grant_type: 'password', scope: USERS[username].permissions, username, password: USERS[username].password });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return { Authorization: `Bearer ${res.body.access_token}` };
  }

  const body = () => ({ transport: 'tcp', host: '127.0.0.1', port: String(sim.port), units: '1-5', timeout: '30' });

  it('refuses a scan without a login and with read permission only, sending nothing', async () => {
    assert.equal((await nr.api('POST', '/nines-scan', body())).status, 401);
    const viewer = await login('viewer');
    // Node-RED answers a valid login that lacks the permission with 401 too; the same login reads
    // the tag schema, so it is the permission that is missing, not the login
    const res = await nr.api('POST', '/nines-scan', body(), viewer);
    assert.equal(res.status, 401);
    assert.equal((await nr.api('GET', '/nines-tags/schema', undefined, viewer)).status, 200);
    assert.equal(sim.stats.connections, 0, 'no scan reached the line');
  });

  it('runs the scan for a user with write permission, and writes nothing', async () => {
    const admin = await login('admin');
    const started = await nr.api('POST', '/nines-scan', body(), admin);
    assert.equal(started.status, 202, JSON.stringify(started.body));
    assert.equal(started.body.boundMs, 5 * (30 + 30 + 10));
    // a reader may not watch it either
    assert.equal((await nr.api('GET', `/nines-scan/${started.body.id}`, undefined, await login('viewer'))).status, 401);
    let s;
    for (;;) {
      s = (await nr.api('GET', `/nines-scan/${started.body.id}`, undefined, admin)).body;
      if (s.state !== 'running') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(s.state, 'done', JSON.stringify(s.error));
    assert.deepEqual(s.report.units.map((u) => u.unitId), [1, 4]);
    assert.equal(s.unitList, '1,4');
    assert.equal(sim.model.writeRequests, 0, 'a scan never writes');
  });
});
