'use strict';

const assert = require('node:assert/strict');
const { checkConfig, redactConfig } = require('../../gateway/runtime/config/validate');
const { parseListen } = require('../../gateway/runtime/config/check-http');

const BASE = { devices: { d: { target: 'modbus+tcp://127.0.0.1:5020?unitId=1' } }, jobs: [{ name: 'j', device: 'd', read: { fc: 3, address: 0, quantity: 1 }, rate: '1/s' }] };
const check = (gateway, env = {}) => checkConfig({ ...BASE, gateway }, { env });
const problems = (r) => r.problems.list.map((p) => `${p.segs.join('.')}: ${p.rule}`);

describe('config: gateway.metrics and gateway.http', () => {
  it('are off when omitted, and on loopback at 9464 and 9465 when given empty', () => {
    const off = check({}).config.gateway;
    assert.equal(off.metrics, null);
    assert.equal(off.http, null);
    const on = check({ metrics: {}, http: {} }).config.gateway;
    assert.deepEqual(on.metrics, { host: '127.0.0.1', port: 9464, login: null });
    assert.deepEqual(on.http, { host: '127.0.0.1', port: 9465, login: null, windowIntervals: 6 });
  });

  it('reads host:port, [v6]:port and a bare port, and names the field of a bad one', () => {
    assert.deepEqual(parseListen('0.0.0.0:80', 'x'), { host: '0.0.0.0', port: 80 });
    assert.deepEqual(parseListen('[::1]:9464', 'x'), { host: '::1', port: 9464 });
    assert.deepEqual(parseListen(0, '127.0.0.1'), { host: '127.0.0.1', port: 0 });
    assert.match(problems(check({ metrics: { listen: 'localhost' } }))[0], /^gateway\.metrics\.listen: must be "host:port"/);
    assert.match(problems(check({ metrics: { listen: '127.0.0.1:70000' } }))[0], /^gateway\.metrics\.listen: has port 70000/);
    assert.match(problems(check({ http: { listen: '127.0.0.1:1', extra: 1 } }))[0], /^gateway\.http\.extra/);
  });

  it('refuses a status page beyond loopback without a login, and takes the password from NINES_HTTP_PASSWORD', () => {
    assert.match(problems(check({ http: { listen: '0.0.0.0:9465' } }))[0], /^gateway\.http\.listen: listens beyond loopback \(0\.0\.0\.0\)/);
    const ok = check({ http: { listen: '0.0.0.0:9465', username: 'viewer' } }, { NINES_HTTP_PASSWORD: 's3cret' }).config;
    assert.deepEqual(ok.gateway.http.login, { username: 'viewer', password: 's3cret', passwordSource: 'env' });
    assert.equal(redactConfig(ok).gateway.http.login.password, '***');
    assert.match(problems(check({ http: { username: 'viewer' } }))[0], /^gateway\.http\.password: is required/);
    // metrics may listen beyond loopback without a login (Prometheus scrapes across the network)
    assert.equal(check({ metrics: { listen: '0.0.0.0:9464' } }).problems.size, 0);
  });
});
