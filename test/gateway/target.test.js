'use strict';

const assert = require('node:assert/strict');
const { parseTarget, formatTarget } = require('../../gateway/drivers/target');

describe('target URLs', () => {
  it('parses the three schemes with their defaults', () => {
    assert.deepEqual(parseTarget('ascii://127.0.0.1'), { protocol: 'ascii', url: 'ascii://127.0.0.1:9500?address=01&checksum=off', host: '127.0.0.1', port: 9500, address: '01', checksum: false });
    const tcp = parseTarget('modbus+tcp://10.0.0.8?unitId=3');
    assert.equal(tcp.port, 502);
    assert.equal(tcp.unitId, 3);
    const rtu = parseTarget('modbus+rtu:///dev/ttyUSB0?baudRate=19200&parity=even');
    assert.equal(rtu.path, '/dev/ttyUSB0');
    assert.equal(rtu.baudRate, 19200);
    assert.equal(rtu.parity, 'even');
    assert.equal(rtu.unitId, 1);
  });

  it('keeps a port that equals the web default (80) and accepts IPv6 hosts', () => {
    assert.equal(parseTarget('modbus+tcp://plc:80').port, 80);
    const v6 = parseTarget('ascii://[::1]:9500?address=0a&checksum=on');
    assert.equal(v6.host, '::1');
    assert.equal(v6.address, '0A');
    assert.equal(v6.checksum, true);
    assert.equal(formatTarget(v6), 'ascii://[::1]:9500?address=0A&checksum=on');
  });

  it('takes Windows serial port names', () => {
    assert.equal(parseTarget('modbus+rtu:///COM3?baudRate=9600').path, 'COM3');
    assert.equal(parseTarget('modbus+rtu:///com12').path, 'COM12');
  });

  it('returns an already parsed target as it is, and writes canonical URLs', () => {
    const t = parseTarget('modbus+tcp://h:5020');
    assert.equal(parseTarget(t), t);
    assert.equal(parseTarget(t.url).url, t.url);
  });

  it('parses RTU over TCP: host and a port it must be given, unitId, and the line\'s baudRate only when given', () => {
    const t = parseTarget('modbus+rtutcp://10.0.0.9:4001?unitId=7');
    assert.deepEqual(t, { protocol: 'modbus+rtutcp', url: 'modbus+rtutcp://10.0.0.9:4001?unitId=7', host: '10.0.0.9', port: 4001, unitId: 7 });
    const slow = parseTarget('modbus+rtutcp://[::1]:950?baudRate=9600');
    assert.equal(slow.baudRate, 9600);
    assert.equal(slow.unitId, 1);
    assert.equal(slow.url, 'modbus+rtutcp://[::1]:950?unitId=1&baudRate=9600');
    assert.equal(parseTarget(slow.url).url, slow.url);
    // the serial server owns parity and framing; a port is required (502 would be Modbus TCP)
    assert.throws(() => parseTarget('modbus+rtutcp://h:4001?parity=even'), (e) => e.code === 'NINES_ERR_INVALID_TARGET' && /unknown option "parity" for modbus\+rtutcp:\/\/ \(known: unitId, baudRate\)/.test(e.message));
    assert.throws(() => parseTarget('modbus+rtutcp://h?unitId=1'), (e) => e.code === 'NINES_ERR_INVALID_TARGET' && /names no port/.test(e.message));
    assert.throws(() => parseTarget('modbus+rtutcp://h:4001?baudRate=12345'), (e) => e.code === 'NINES_ERR_INVALID_TARGET' && /not a standard rate/.test(e.message));
  });

  it('rejects what it cannot honour with NINES_ERR_INVALID_TARGET, naming the problem', () => {
    const bad = [
      ['ftp://x', /scheme "ftp:" is not supported/],
      ['127.0.0.1:9500', /no scheme/],
      ['modbus+tcp://h?unit=1', /unknown option "unit"/],
      ['modbus+tcp://h?unitId=256', /unitId must be an integer from 0 to 255/],
      ['ascii://h?address=1', /two hex digits/],
      ['ascii://h?checksum=maybe', /checksum must be on or off/],
      ['modbus+rtu://host/dev/x', /has no host/],
      ['modbus+rtu:///dev/x?baudRate=12345', /not a standard rate/],
      ['modbus+rtu:///dev/x?parity=weird', /parity must be one of/],
      ['ascii://h:99999', /not a valid URL|port must be/],
      ['ascii://user:pw@h', /credentials/],
      ['ascii://h/path', /must not have a path/],
      ['', /must be a URL/],
      [42, /must be a URL/]
    ];
    for (const [input, re] of bad) {
      assert.throws(() => parseTarget(input), (e) => e.code === 'NINES_ERR_INVALID_TARGET' && re.test(e.message), String(input));
    }
  });
});
