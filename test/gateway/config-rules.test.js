'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { validateConfig } = require('../../gateway/runtime/config');
const { configCases } = require('./config-problems');

/** A valid config with one device and one job of each kind; each case breaks one thing. */
function base () {
  return {
    gateway: { id: 'edge-1', interval: '10s' },
    mqtt: { url: 'mqtt://127.0.0.1:1883', prefix: 'nines' },
    devices: {
      ed588: { target: 'ascii://127.0.0.1:9500', timeout: '1s', allowWrites: true },
      plc1: { target: 'modbus+tcp://127.0.0.1:5020?unitId=1', timeout: '500ms', allowWrites: true }
    },
    jobs: [
      { name: 'inputs', device: 'ed588', command: '@01', rate: '1000/s' },
      { name: 'probe', device: 'ed588', generator: '@AA(Data)', rate: 'max' },
      { name: 'hr', device: 'plc1', read: { fc: 3, address: 0, quantity: 10 }, rate: '100/s' },
      { name: 'set', device: 'plc1', write: { fc: 6, address: 0, value: 1 }, rate: '10/s' }
    ]
  };
}

const { problems: problemsOf, expectOne } = configCases(base);

describe('gateway/config: every rule names the field path, the value and the rule', () => {
  it('the base config used by these tests is valid', () => {
    assert.equal(validateConfig(base(), { env: {} }).jobs.length, 4);
  });

  describe('names (they become MQTT topic levels)', () => {
    for (const bad of ['edge/1', 'a+b', 'a#', 'with space', '', 'x'.repeat(65)]) {
      it(`gateway.id ${JSON.stringify(bad)} is rejected`, () => {
        const e = expectOne((o) => { o.gateway.id = bad; }, 'gateway.id', /must be 1 to 64 letters, digits, _ \. or - .* no \/ \+ #/);
        assert.equal(e.value, bad);
      });
    }
    it('a job name with / is rejected at jobs[i].name', () => {
      expectOne((o) => { o.jobs[2].name = 'plc/hr'; }, 'jobs[2].name', /must be 1 to 64 letters/);
    });
    it('a job name used twice is rejected at the second one', () => {
      expectOne((o) => { o.jobs[3].name = 'inputs'; }, 'jobs[3].name', /already the name of jobs\[0\]; job names must be unique/);
    });
    it('a device name with / is rejected', () => {
      expectOne((o) => { o.devices['a/b'] = { target: 'ascii://h:1' }; }, 'devices["a/b"]', /not a valid device name/);
    });
  });

  describe('unknown keys are errors, with a hint', () => {
    const cases = [
      [(o) => { o.extra = 1; }, 'extra', /known keys: gateway, mqtt, devices, jobs/],
      [(o) => { o.gateway.intervall = '1s'; }, 'gateway.intervall', /did you mean "interval"/],
      [(o) => { o.mqtt.buffr = 5; }, 'mqtt.buffr', /did you mean "buffer"/],
      [(o) => { o.mqtt = { url: 'mqtts://h', tls: { ca2: 'x' } }; }, 'mqtt.tls.ca2', /known keys: ca, cert, key, rejectUnauthorized/],
      [(o) => { o.mqtt.reconnect = { min: '1s' }; }, 'mqtt.reconnect.min', /known keys: initial, max/],
      [(o) => { o.devices.ed588.timout = '1s'; }, 'devices.ed588.timout', /did you mean "timeout"/],
      [(o) => { o.jobs[0].catchup = 'skip'; }, 'jobs[0].catchup', /did you mean "catchUp"/],
      [(o) => { o.jobs[2].read.qty = 1; }, 'jobs[2].read.qty', /known keys: fc, address, quantity, unitId/],
      [(o) => { o.jobs[2].values = { mode: 'on-change', dead: 1 }; }, 'jobs[2].values.dead', /did you mean "deadband"/],
      [(o) => { o.jobs[2].values = { mode: 'on-change', deadbnad: 1 }; }, 'jobs[2].values.deadbnad', /did you mean "deadband"/]
    ];
    for (const [change, p, rule] of cases) it(`${p}`, () => expectOne(change, p, rule));
  });

  describe('jobs', () => {
    it('needs one of command, generator, read, write or tags', () => {
      expectOne((o) => { delete o.jobs[0].command; }, 'jobs[0]', /needs one of command, generator, read, write or tags/);
    });
    it('takes only one of command, generator, read or write', () => {
      expectOne((o) => { o.jobs[0].generator = '@AA'; }, 'jobs[0].generator', /cannot be combined with command/);
    });
    it('must name a device that exists', () => {
      expectOne((o) => { o.jobs[0].device = 'ed589'; }, 'jobs[0].device', /not a device \(did you mean "ed588"\?\); defined: ed588, plc1/);
    });
    it('a write job needs a modbus device', () => {
      expectOne((o) => { o.jobs[3].device = 'ed588'; }, 'jobs[3].write', /needs a modbus device; "ed588" is ascii/);
    });
    it('a read job needs a modbus device', () => {
      expectOne((o) => { o.jobs[2].device = 'ed588'; }, 'jobs[2].read', /needs a modbus device/);
    });
    it('a command job needs an ascii device', () => {
      expectOne((o) => { o.jobs[0].device = 'plc1'; }, 'jobs[0].command', /needs an ascii:\/\/ device; "plc1" is modbus\+tcp/);
    });
    it('a generator job needs an ascii device', () => {
      expectOne((o) => { o.jobs[1].device = 'plc1'; }, 'jobs[1].generator', /needs an ascii:\/\/ device/);
    });
    it('a rate that does not parse reads: "fast" is not a rate; use "max" or e.g. "1000/s"', () => {
      const { err } = problemsOf((o) => { o.jobs[1].rate = 'fast'; });
      assert.match(err.message, /^ {2}jobs\[1\]\.rate: "fast" is not a rate; use "max" or e\.g\. "1000\/s"$/m);
      assert.deepEqual(err.details.errors, [{ path: 'jobs[1].rate', value: 'fast', rule: 'is not a rate; use "max" or e.g. "1000/s"' }]);
    });
    it('a rate of 0 or above 1000000/s is out of range', () => {
      expectOne((o) => { o.jobs[0].rate = 0; }, 'jobs[0].rate', /more than 0 and at most 1000000\/s/);
      expectOne((o) => { o.jobs[0].rate = '2000000/s'; }, 'jobs[0].rate', /at most 1000000\/s/);
    });
    it('a rate is required', () => {
      expectOne((o) => { delete o.jobs[0].rate; }, 'jobs[0].rate', /is required; use "max"/);
    });
    for (const bad of [0, 65, 1.5, '2']) {
      it(`connections ${JSON.stringify(bad)} is outside 1-64`, () => {
        expectOne((o) => { o.jobs[0].connections = bad; }, 'jobs[0].connections', /integer from 1 to 64/);
      });
    }
    it('catchUp is one of burst, capped, skip', () => {
      expectOne((o) => { o.jobs[0].catchUp = 'later'; }, 'jobs[0].catchUp', /one of burst, capped, skip/);
    });
    it('precision is spin or sleep, and a job sleeps unless told', () => {
      expectOne((o) => { o.jobs[0].precision = 'exact'; }, 'jobs[0].precision', /one of spin, sleep/);
      const c = base();
      c.jobs[2].precision = 'spin';
      const jobs = validateConfig(c, { env: {} }).jobs;
      assert.deepEqual(jobs.map((j) => j.precision), ['sleep', 'sleep', 'spin', 'sleep']);
    });
    it('count and duration cannot both be set', () => {
      expectOne((o) => { Object.assign(o.jobs[0], { count: 10, duration: '1s' }); }, 'jobs[0].duration', /cannot be combined with count/);
    });
    it('count is an integer >= 1 and duration a duration', () => {
      expectOne((o) => { o.jobs[0].count = 0; }, 'jobs[0].count', /integer >= 1/);
      expectOne((o) => { o.jobs[0].duration = 'soon'; }, 'jobs[0].duration', /not a duration; use e\.g\. "500ms"/);
    });
    it('an ASCII command left empty by a YAML comment gets a quoting hint', () => {
      expectOne((o) => { o.jobs[0].command = null; }, 'jobs[0].command', /bare # starts a comment/);
    });
  });

  describe('Modbus read and write blocks', () => {
    it('read takes only function codes 1-4', () => {
      expectOne((o) => { o.jobs[2].read.fc = 6; }, 'jobs[2].read.fc', /read function code/);
    });
    it('write takes only function codes 5, 6, 15, 16', () => {
      expectOne((o) => { o.jobs[3].write.fc = 3; }, 'jobs[3].write.fc', /write function code/);
    });
    it('read needs a quantity', () => {
      expectOne((o) => { delete o.jobs[2].read.quantity; }, 'jobs[2].read.quantity', /is required/);
    });
    it('fc 6 needs value, fc 16 needs values', () => {
      expectOne((o) => { delete o.jobs[3].write.value; }, 'jobs[3].write.value', /is required with fc 6/);
      expectOne((o) => { o.jobs[3].write.fc = 16; }, 'jobs[3].write.value', /is not used with fc 16; use values/);
    });
    it('address is 0-65535 and unitId 0-255', () => {
      expectOne((o) => { o.jobs[2].read.address = 70000; }, 'jobs[2].read.address', /0 to 65535/);
      expectOne((o) => { o.jobs[2].read.unitId = 256; }, 'jobs[2].read.unitId', /0 to 255/);
    });
  });

  describe('values', () => {
    it('is off, on-change, every or an object', () => {
      expectOne((o) => { o.jobs[2].values = 'sometimes'; }, 'jobs[2].values', /one of off, on-change, every/);
      expectOne((o) => { o.jobs[2].values = 5; }, 'jobs[2].values', /one of off, on-change, every/);
    });
    it('an object needs a mode', () => {
      expectOne((o) => { o.jobs[2].values = { deadband: 1 }; }, 'jobs[2].values.mode', /is required/);
    });
    it('deadband only with on-change, n only with every', () => {
      expectOne((o) => { o.jobs[2].values = { mode: 'every', deadband: 1 }; }, 'jobs[2].values.deadband', /only used with mode: on-change/);
      expectOne((o) => { o.jobs[2].values = { mode: 'on-change', n: 5 }; }, 'jobs[2].values.n', /only used with mode: every/);
      expectOne((o) => { o.jobs[2].values = { mode: 'every', n: 0 }; }, 'jobs[2].values.n', /integer >= 1/);
    });
    it('maxRate is a finite rate, never max', () => {
      expectOne((o) => { o.jobs[2].values = { mode: 'on-change', maxRate: 'max' }; }, 'jobs[2].values.maxRate', /never published once per poll/);
    });
    it('a write job publishes no values', () => {
      expectOne((o) => { o.jobs[3].values = 'on-change'; }, 'jobs[3].values', /must be off for a write job/);
    });
  });

  describe('devices', () => {
    it('a target must parse', () => {
      expectOne((o) => { o.devices.ed588.target = 'http://h:1'; }, 'devices.ed588.target', /not a valid target: target scheme "http:" is not supported/);
    });
    it('a target is required', () => {
      expectOne((o) => { delete o.devices.ed588.target; }, 'devices.ed588.target', /is required/);
    });
    it('takes RTU over TCP, with one connection: a serial server port is one line', () => {
      const obj = base();
      obj.devices.plc1.target = 'modbus+rtutcp://10.0.0.9:4001?unitId=3&baudRate=9600';
      const d = validateConfig(obj, { env: {} }).devices.plc1;
      assert.deepEqual([d.target.protocol, d.target.port, d.target.unitId, d.target.baudRate], ['modbus+rtutcp', 4001, 3, 9600]);
      expectOne((o) => { o.devices.plc1.target = 'modbus+rtutcp://10.0.0.9?unitId=1'; }, 'devices.plc1.target', /names no port/);
      expectOne((o) => { o.devices.plc1.target = 'modbus+rtutcp://10.0.0.9:4001'; o.devices.plc1.maxConnections = 2; }, 'devices.plc1.maxConnections', /must be 1 for a modbus\+rtutcp target/);
    });
    it('two devices on one serial line are refused, naming the device that has it: a serial port or a serial server port', () => {
      const e = expectOne((o) => {
        o.devices.bus1 = { target: 'modbus+rtu:///dev/ttyUSB0?unitId=1' };
        o.devices.bus2 = { target: 'modbus+rtu:///dev/ttyUSB0?unitId=2&baudRate=19200' };
      }, 'devices.bus2.target', /uses the serial port \/dev\/ttyUSB0, as device "bus1" does: one serial line is one device, and a serial port opens once/);
      assert.match(e.rule, /list the line's slaves as units of one device \(devices.bus1.units\)/);
      expectOne((o) => {
        o.devices.srv1 = { target: 'modbus+rtutcp://Moxa.local:4001?unitId=1' };
        o.devices.srv2 = { target: 'modbus+rtutcp://moxa.local:4001?unitId=2' };
      }, 'devices.srv2.target', /uses the serial server port moxa\.local:4001, as device "srv1" does: .* takes one client/);
      // another port of the same server is another line
      const obj = base();
      obj.devices.srv1 = { target: 'modbus+rtutcp://moxa.local:4001' };
      obj.devices.srv2 = { target: 'modbus+rtutcp://moxa.local:4002' };
      assert.equal(Object.keys(validateConfig(obj, { env: {} }).devices).length, 4);
    });
    it('interFrameDelay and delayAfterConnect are durations up to a minute, the pause shorter than the timeout', () => {
      const obj = base();
      Object.assign(obj.devices.plc1, { interFrameDelay: '20ms', delayAfterConnect: '1s' });
      const d = validateConfig(obj, { env: {} }).devices.plc1;
      assert.deepEqual([d.interFrameDelayMs, d.delayAfterConnectMs], [20, 1000]);
      assert.deepEqual([validateConfig(base(), { env: {} }).devices.plc1.interFrameDelayMs, validateConfig(base(), { env: {} }).devices.plc1.delayAfterConnectMs], [0, 0]);
      expectOne((o) => { o.devices.plc1.interFrameDelay = '2m'; }, 'devices.plc1.interFrameDelay', /from 0ms to 1m/);
      expectOne((o) => { o.devices.plc1.delayAfterConnect = 'soon'; }, 'devices.plc1.delayAfterConnect', /not a duration/);
      expectOne((o) => { o.devices.plc1.interFrameDelay = '500ms'; }, 'devices.plc1.interFrameDelay', /shorter than the request timeout \(500 ms\)/);
      expectOne((o) => { o.devices.plc1.interFrameDelay = '5ms'; o.devices.plc1.maxInflight = 4; }, 'devices.plc1.interFrameDelay', /must be 0 with maxInflight 4/);
    });
    it('timeouts are positive durations', () => {
      expectOne((o) => { o.devices.ed588.timeout = 0; }, 'devices.ed588.timeout', /from 1ms to 1h/);
      expectOne((o) => { o.devices.plc1.connectTimeout = 'never'; }, 'devices.plc1.connectTimeout', /not a duration/);
    });
    it('queue is 1-100000', () => {
      expectOne((o) => { o.devices.ed588.queue = 0; }, 'devices.ed588.queue', /from 1 to 100000/);
    });
    it('maxConnections is 1-64: a device with no connection could serve nothing', () => {
      expectOne((o) => { o.devices.ed588.maxConnections = 0; }, 'devices.ed588.maxConnections', /from 1 to 64/);
      expectOne((o) => { o.devices.ed588.maxConnections = 2.5; }, 'devices.ed588.maxConnections', /from 1 to 64/);
    });
    it('maxInflight is 1-64, and above 1 only on modbus+tcp: replies are matched by transaction id', () => {
      expectOne((o) => { o.devices.plc1.maxInflight = 0; }, 'devices.plc1.maxInflight', /from 1 to 64/);
      expectOne((o) => { o.devices.ed588.maxInflight = 4; }, 'devices.ed588.maxInflight', /applies to Modbus devices only/);
      assert.equal(validateConfig((() => { const o = base(); o.devices.plc1.maxInflight = 8; return o; })(), { env: {} }).devices.plc1.maxInflight, 8);
    });
    it('the request limits of a device stay within the protocol, and apply to Modbus devices only', () => {
      expectOne((o) => { o.devices.plc1.maxRegistersPerRequest = 126; }, 'devices.plc1.maxRegistersPerRequest', /from 1 to 125/);
      expectOne((o) => { o.devices.plc1.maxBitsPerRequest = 0; }, 'devices.plc1.maxBitsPerRequest', /from 1 to 2000/);
      expectOne((o) => { o.devices.plc1.maxGap = -1; }, 'devices.plc1.maxGap', /from 0 to 2000/);
      expectOne((o) => { o.devices.ed588.maxGap = 4; }, 'devices.ed588.maxGap', /applies to Modbus devices only/);
    });
    it('backoff delays are positive, and max is at least min', () => {
      expectOne((o) => { o.devices.ed588.backoff = { min: -5 }; }, 'devices.ed588.backoff.min', /is not a duration/);
      expectOne((o) => { o.devices.ed588.backoff = { min: 0 }; }, 'devices.ed588.backoff.min', /from 1ms to 1h/);
      expectOne((o) => { o.devices.ed588.backoff = { min: '2s', max: '1s' }; }, 'devices.ed588.backoff.max', /at least backoff.min \(2000 ms\)/);
      expectOne((o) => { o.devices.ed588.backoff = { initial: '1s' }; }, 'devices.ed588.backoff.initial', /known keys: min, max/);
    });
    it('a job that writes needs a device that allows writes, as in Node-RED', () => {
      expectOne((o) => { delete o.devices.plc1.allowWrites; }, 'jobs[3].write', /writes to device "plc1", which does not allow writes; set devices.plc1.allowWrites: true/);
      expectOne((o) => { o.devices.ed588.allowWrites = false; }, 'jobs[1].generator', /does not allow writes/);
      expectOne((o) => { o.devices.ed588.allowWrites = false; o.jobs[1].generator = '@AA'; o.jobs[0].command = '#010001'; }, 'jobs[0].command', /does not allow writes/);
      const { errors } = problemsOf((o) => { o.devices.ed588.allowWrites = 'yes'; });
      assert.equal(errors[0].path, 'devices.ed588.allowWrites');
      assert.match(errors[0].rule, /true or false/);
    });
    it('a job that writes skips missed slots: a missed write is never sent late', () => {
      expectOne((o) => { o.jobs[3].catchUp = 'capped'; }, 'jobs[3].catchUp', /must be skip for a job that writes/);
      expectOne((o) => { o.jobs[3].catchUp = 'burst'; }, 'jobs[3].catchUp', /must be skip/);
    });
    it('a job cannot use more connections than its device has', () => {
      expectOne((o) => { o.jobs[0].connections = 2; }, 'jobs[0].connections', /at most devices.ed588.maxConnections \(1\)/);
      assert.equal(validateConfig((() => { const o = base(); o.devices.ed588.maxConnections = 2; o.jobs[0].connections = 2; return o; })(), { env: {} }).jobs[0].connections, 2);
    });
    it('a job on a pipelining device may have maxConnections × maxInflight lanes, and no more', () => {
      const pipelined = (lanes) => (o) => { o.devices.plc1.maxConnections = 2; o.devices.plc1.maxInflight = 4; o.jobs[2].connections = lanes; };
      expectOne(pipelined(9), 'jobs[2].connections', /at most devices.plc1.maxConnections × maxInflight \(2 × 4 = 8\)/);
      const o = base();
      pipelined(8)(o);
      assert.equal(validateConfig(o, { env: {} }).jobs[2].connections, 8);
    });
    it('a job naming no defined device is a problem at jobs[i].device', () => {
      expectOne((o) => { o.jobs[0].device = 'ed58'; }, 'jobs[0].device', /is not a device \(did you mean "ed588"\?\)/);
    });
    it('there is at least one device and one job', () => {
      const { errors } = problemsOf((o) => { o.devices = {}; o.jobs = []; });
      assert.deepEqual(errors.map((e) => [e.path, e.rule]), [
        ['devices', 'must map device names to { target, timeout, … }, at least one device'],
        ['jobs', 'must be a list of at least one job']
      ]);
    });
  });

  describe('gateway', () => {
    it('interval is at least 100ms', () => {
      expectOne((o) => { o.gateway.interval = '50ms'; }, 'gateway.interval', /from 100ms to 24h/);
    });
    it('workers is auto or 1-256', () => {
      expectOne((o) => { o.gateway.workers = 'many'; }, 'gateway.workers', /"auto" or an integer from 1 to 256/);
      expectOne((o) => { o.gateway.workers = 0; }, 'gateway.workers', /"auto" or an integer/);
    });
    it('mode is worker or inline', () => {
      expectOne((o) => { o.gateway.mode = 'threads'; }, 'gateway.mode', /worker .* or inline/);
    });
  });

  describe('mqtt', () => {
    it('url scheme is mqtt, mqtts, tcp, ssl, ws or wss', () => {
      expectOne((o) => { o.mqtt.url = 'http://h:1883'; }, 'mqtt.url', /unsupported scheme "http:"/);
    });
    it('url carries no credentials and no query', () => {
      expectOne((o) => { o.mqtt.url = 'mqtt://u:p@h'; }, 'mqtt.url', /must not carry credentials/);
      expectOne((o) => { o.mqtt.url = 'mqtt://h?clientId=x'; }, 'mqtt.url', /query string/);
    });
    it('prefix is topic levels without wildcards', () => {
      expectOne((o) => { o.mqtt.prefix = 'nines/#'; }, 'mqtt.prefix', /no \+ # or empty levels/);
      expectOne((o) => { o.mqtt.prefix = 'a//b'; }, 'mqtt.prefix', /no \+ # or empty levels/);
    });
    it('qos is 0, 1 or 2; buffer 0-1000000; keepalive at least 1s or 0', () => {
      expectOne((o) => { o.mqtt.qos = 3; }, 'mqtt.qos', /0, 1 or 2/);
      expectOne((o) => { o.mqtt.buffer = -1; }, 'mqtt.buffer', /from 0 to 1000000/);
      expectOne((o) => { o.mqtt.keepalive = '500ms'; }, 'mqtt.keepalive', /or 0 to turn it off/);
    });
    it('reconnect.max is at least reconnect.initial', () => {
      expectOne((o) => { o.mqtt.reconnect = { initial: '10s', max: '1s' }; }, 'mqtt.reconnect.max', /at least mqtt\.reconnect\.initial/);
    });
    it('embedded cannot be combined with url', () => {
      expectOne((o) => { o.mqtt.embedded = { port: 1884 }; }, 'mqtt.embedded', /cannot be combined with mqtt\.url/);
    });
    it('credentials and TLS need a url (the embedded broker takes none)', () => {
      expectOne((o) => { o.mqtt = { username: 'u' }; }, 'mqtt.username', /only used with mqtt\.url/);
    });
    it('a password needs a username under MQTT 3.1.1, also from NINES_MQTT_PASSWORD', () => {
      const e = expectOne(() => {}, 'mqtt.password', /comes from NINES_MQTT_PASSWORD but mqtt\.username is not/, { NINES_MQTT_PASSWORD: 'pw' });
      assert.equal(e.value, '***');
      assert.equal(validateConfig({ ...base(), mqtt: { url: 'mqtt://h', protocolVersion: 5, password: 'pw' } }, { env: {} }).mqtt.password, 'pw');
    });
    it('tls only with a TLS scheme', () => {
      expectOne((o) => { o.mqtt.tls = { rejectUnauthorized: false }; }, 'mqtt.tls', /only used with a TLS URL/);
    });
    it('TLS files must exist and be readable; the error names the path', () => {
      const missing = path.join(os.tmpdir(), 'nines-no-such-dir', 'ca.pem');
      const e = expectOne((o) => { o.mqtt = { url: 'mqtts://h', tls: { ca: missing } }; }, 'mqtt.tls.ca', /cannot be read: .*no such file/);
      assert.ok(e.rule.includes(missing));
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-tls-'));
      try {
        const e2 = expectOne((o) => { o.mqtt = { url: 'mqtts://h', tls: { ca: dir } }; }, 'mqtt.tls.ca', /is a directory/);
        assert.ok(e2.rule.includes(dir));
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
    it('a client certificate comes with its key (paths relative to baseDir)', () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-tls-'));
      try {
        fs.writeFileSync(path.join(dir, 'c.pem'), 'x');
        const obj = { ...base(), mqtt: { url: 'ssl://h', tls: { cert: 'c.pem' } } };
        assert.throws(() => validateConfig(obj, { env: {}, baseDir: dir }), (err) => {
          assert.deepEqual(err.details.errors.map((e) => e.path), ['mqtt.tls.key']);
          assert.match(err.details.errors[0].rule, /is required with mqtt\.tls\.cert/);
          return err.code === 'NINES_ERR_CONFIG';
        });
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('deep checks by the drivers\' own validators', () => {
    it('an ASCII command the driver would refuse is a problem at jobs[i].command', () => {
      expectOne((o) => { o.jobs[0].command = '@0a'; }, 'jobs[0].command', /address "0a"; the address must be two upper-case hex digits/);
    });
    it('the command is checked with the device\'s checksum setting', () => {
      const long = '$01M' + 'X'.repeat(250); // 254 bytes: fits alone, not with 2 checksum characters
      assert.equal(validateConfig({ ...base(), jobs: [{ name: 'j', device: 'ed588', command: long, rate: 1 }] }, { env: {} }).jobs[0].operation, long);
      expectOne((o) => {
        o.devices.ed588.target = 'ascii://127.0.0.1:9500?checksum=on';
        o.jobs[0].command = long;
      }, 'jobs[0].command', /plus 2 checksum characters/);
    });
    it('a generator must be one the driver knows, by name or alias', () => {
      expectOne((o) => { o.jobs[1].generator = '@AA(Dta)'; }, 'jobs[1].generator', /not a known generator; known: @AA, read-all, @AA\(Data\), set-all/);
      const obj = base();
      obj.jobs[1].generator = 'set-all';
      assert.equal(validateConfig(obj, { env: {} }).jobs[1].operation, 'set-all');
    });
    it('a Modbus op the driver would refuse is a problem at the op\'s field', () => {
      expectOne((o) => { o.jobs[2].read.quantity = 200; }, 'jobs[2].read.quantity', /must be an integer from 1 to 125/);
      expectOne((o) => { o.jobs[3].write.value = 70000; }, 'jobs[3].write.value', /0 to 65535/);
    });
    it('the job carries the op as the driver normalized it', () => {
      const job = validateConfig(base(), { env: {} }).jobs[2];
      assert.ok(Object.isFrozen(job.operation));
      // the unit id is the target's, filled in when the op is sent (jobs/op-source.js)
      assert.deepEqual({ ...job.operation }, { fc: 3, address: 0, quantity: 10 });
      assert.equal(job.target.unitId, 1);
    });
  });

  it('lists every problem at once, one line each, with the count', () => {
    const { err, errors } = problemsOf((o) => {
      o.gateway.interval = '1ms';
      o.mqtt.qos = 5;
      o.jobs[0].rate = 'fast';
      o.jobs[1].connections = 100;
      o.jobs[2].device = 'nope';
    });
    assert.deepEqual(errors.map((e) => e.path).sort(), ['gateway.interval', 'jobs[0].rate', 'jobs[1].connections', 'jobs[2].device', 'mqtt.qos']);
    assert.match(err.message, /\(5 problems\)/);
    assert.equal(err.message.split('\n').length, 6);
    for (const e of errors) assert.deepEqual(Object.keys(e), ['path', 'value', 'rule']);
  });
});
