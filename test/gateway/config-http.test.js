'use strict';

const assert = require('node:assert/strict');
const { checkConfig, redactConfig } = require('../../gateway/runtime/config/validate');
const { parseListen } = require('../../gateway/runtime/config/check-http');
const D = require('../../gateway/runtime/config/defaults');

const BASE = { devices: { d: { target: 'modbus+tcp://127.0.0.1:5020?unitId=1' } }, jobs: [{ name: 'j', device: 'd', read: { fc: 3, address: 0, quantity: 1 }, rate: '1/s' }] };
const check = (gateway, env = {}) => checkConfig({ ...BASE, gateway }, { env });
const problems = (r) => r.problems.list.map((p) => `${p.segs.join('.')}: ${p.rule}`);

describe('config: gateway.metrics and gateway.http', () => {
  it('are off when omitted, and on loopback at 9464 and 9465 when given empty', () => {
    const off = check({}).config.gateway;
    assert.equal(off.metrics, null);
    assert.equal(off.http, null);
    const on = check({ metrics: {}, http: {} }).config.gateway;
    assert.deepEqual(on.metrics, { host: '127.0.0.1', port: 9464, maxConnections: 32, login: null, bucketsNs: D.METRICS_BUCKETS_NS });
    assert.deepEqual(on.http, { host: '127.0.0.1', port: 9465, maxConnections: 32, login: null, windowIntervals: 6 });
  });

  it('reads gateway.metrics.buckets as durations in ns, ascending; [] for none', () => {
    const got = check({ metrics: { buckets: ['250us', '1ms', 2.5, '1s', '1h'] } });
    assert.deepEqual(problems(got), []);
    assert.deepEqual(got.config.gateway.metrics.bucketsNs, [250e3, 1e6, 2.5e6, 1e9, 3600e9]);
    assert.deepEqual(check({ metrics: { buckets: [] } }).config.gateway.metrics.bucketsNs, []);
    // the default: 10 µs … 10 s, neighbours at most 1.6× apart (the error the docs state)
    const def = D.METRICS_BUCKETS_NS;
    assert.equal(def[0], 10e3);
    assert.equal(def[def.length - 1], 10e9);
    for (let i = 1; i < def.length; i++) assert.ok(def[i] / def[i - 1] > 1 && def[i] / def[i - 1] <= 1.6, `${def[i - 1]} → ${def[i]}`);
  });

  it('names the bucket that is no duration, out of range, or not above the one before it', () => {
    assert.deepEqual(problems(check({ metrics: { buckets: ['1ms', 'soon'] } })), ['gateway.metrics.buckets.1: is not a duration; use e.g. "500ms", "10s", "2m" or a number of milliseconds']);
    assert.match(problems(check({ metrics: { buckets: ['2h'] } }))[0], /^gateway\.metrics\.buckets\.0: must be from 1ns to 1h/);
    assert.match(problems(check({ metrics: { buckets: ['0.1ns'] } }))[0], /^gateway\.metrics\.buckets\.0: must be from 1ns to 1h/);
    assert.match(problems(check({ metrics: { buckets: ['5ms', '1ms'] } }))[0], /^gateway\.metrics\.buckets\.1: must be longer than the bucket before it \("5ms"\)/);
    assert.match(problems(check({ metrics: { buckets: ['1ms', 1] } }))[0], /^gateway\.metrics\.buckets\.1: must be longer/);
    assert.match(problems(check({ metrics: { buckets: '1ms' } }))[0], /^gateway\.metrics\.buckets: must be a list of at most 60 durations/);
    const tooMany = problems(check({ metrics: { buckets: Array.from({ length: 61 }, (_, i) => `${i + 1}ms`) } }));
    assert.equal(tooMany.length, 1);
    assert.match(tooMany[0], /^gateway\.metrics\.buckets: must be a list of at most 60/);
    assert.match(problems(check({ http: { buckets: ['1ms'] } }))[0], /^gateway\.http\.buckets/);
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
    assert.match(problems(check({ http: { listen: '0.0.0.0:9465' } }))[0], /^gateway\.http\.listen: binds beyond loopback \(0\.0\.0\.0\); set gateway\.http\.username and gateway\.http\.password \(or NINES_HTTP_PASSWORD\)/);
    const ok = check({ http: { listen: '0.0.0.0:9465', username: 'viewer' } }, { NINES_HTTP_PASSWORD: 's3cret' }).config;
    assert.deepEqual(ok.gateway.http.login, { username: 'viewer', password: 's3cret', passwordSource: 'env' });
    assert.equal(redactConfig(ok).gateway.http.login.password, '***');
    assert.match(problems(check({ http: { username: 'viewer' } }))[0], /^gateway\.http\.password: is required/);
  });

  it('holds the metrics endpoint to the same loopback rule as the status page and the embedded broker', () => {
    for (const listen of ['0.0.0.0:9464', '[::]:9464', '10.0.0.7:9464', 'edge-pc:9464']) {
      const got = problems(check({ metrics: { listen } }));
      assert.equal(got.length, 1, listen);
      assert.match(got[0], /^gateway\.metrics\.listen: (?:binds|is a name, so it may bind) beyond loopback .*set gateway\.metrics\.username and gateway\.metrics\.password \(or NINES_METRICS_PASSWORD\)/, listen);
    }
    // the same hosts, with the same words, as the broker's rule
    assert.match(problems(check({ http: { listen: 'edge-pc:9465' } }))[0], /^gateway\.http\.listen: is a name, so it may bind beyond loopback \(only 127\.0\.0\.0\/8, ::1 and localhost count as loopback\)/);
    const ok = check({ metrics: { listen: '0.0.0.0:9464', username: 'prometheus' } }, { NINES_METRICS_PASSWORD: 's3cret' });
    assert.equal(ok.problems.size, 0);
    for (const listen of ['127.0.0.1:9464', '127.0.0.2:9464', 'localhost:9464', '[::1]:9464', 9464]) assert.equal(check({ metrics: { listen } }).problems.size, 0, String(listen));
  });

  it('refuses a username with a colon, which HTTP Basic could never match, naming the field and the value', () => {
    for (const key of ['metrics', 'http']) {
      const r = check({ [key]: { username: 'site:viewer', password: 'pw' } });
      assert.deepEqual(r.problems.list.map((p) => [p.segs.join('.'), p.value]), [[`gateway.${key}.username`, 'site:viewer']]);
      assert.match(problems(r)[0], /must not contain ":" \(HTTP Basic splits the user name from the password at the first colon/);
    }
  });
});
