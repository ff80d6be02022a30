'use strict';

const assert = require('node:assert/strict');
const { NinesError } = require('../../gateway/base/errors');
const cmd = require('../../gateway/drivers/ascii/command');

/** Each rule's error names the problem in its message. */
const RULE_TEXT = {
  type: /must be a string/,
  empty: /is empty/,
  prefix: /must start with one of # \$ % @ ~/,
  address: /address|broadcast/,
  case: /lower-case/,
  crlf: /contains (CR|LF) at index/,
  printable: /non-printable/,
  length: /at most 255 bytes/
};

function assertInvalid (fn, rule) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof NinesError);
    assert.equal(err.code, 'NINES_ERR_INVALID_COMMAND');
    assert.match(err.message, RULE_TEXT[rule]);
    assert.ok('command' in err.details);
    return true;
  });
}

function assertBadArg (fn, field) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof NinesError);
    assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
    assert.equal(err.details.field, field);
    return true;
  });
}

describe('ascii command validation', () => {
  it('accepts the commands of the §3.1 vectors and returns them unchanged', () => {
    for (const c of ['$01M', '@01', '$016', '$012', '#0100FF', '#010000', '#01A001', '#011000', '@01A5', '#010A0F',
      '@0100', '$01L1', '$01L0', '$01C', '#010', '$01C0', '~01OTANK1', '~01OED-588', '~010', '~**', '#**', '$01RS']) {
      assert.equal(cmd.validateCommand(c), c);
    }
  });

  it('rejects a non-string with rule "type"', () => {
    for (const v of [undefined, null, 1, {}, Buffer.from('@01')]) assertInvalid(() => cmd.validateCommand(v), 'type');
  });

  it('rejects an empty command', () => assertInvalid(() => cmd.validateCommand(''), 'empty'));

  it('rejects a command starting with anything but # $ % @ ~', () => {
    assertInvalid(() => cmd.validateCommand('INVALIDCOMMAND'), 'prefix');
    assertInvalid(() => cmd.validateCommand('!01'), 'prefix');
    assertInvalid(() => cmd.validateCommand(' @01'), 'prefix');
  });

  it('rejects an address that is not two upper-case hex digits', () => {
    for (const c of ['@0a', '@1', '@', '@G1', '$0fM', '@ 1']) assertInvalid(() => cmd.validateCommand(c), 'address');
  });

  it('accepts ** only for the # and ~ broadcasts', () => {
    assert.equal(cmd.validateCommand('#**'), '#**');
    assertInvalid(() => cmd.validateCommand('$**M'), 'address');
    assertInvalid(() => cmd.validateCommand('@**'), 'address');
  });

  it('rejects lower-case letters in the command part', () => {
    assertInvalid(() => cmd.validateCommand('$01m'), 'case');
    assertInvalid(() => cmd.validateCommand('@01a5'), 'case');
  });

  it('accepts any printable case in the free text after ~AAO and ~AAL', () => {
    assert.equal(cmd.validateCommand('~01Obob'), '~01Obob');
    assert.equal(cmd.validateCommand('~01LRoom 1'), '~01LRoom 1');
    assertInvalid(() => cmd.validateCommand('$01o'), 'case');
  });

  it('rejects CR and LF inside the command, naming them', () => {
    assertInvalid(() => cmd.validateCommand('@01\r'), 'crlf');
    assertInvalid(() => cmd.validateCommand('@01\n'), 'crlf');
    assert.throws(() => cmd.validateCommand('$01\rM'), /CR at index 3/);
  });

  it('rejects non-printable characters', () => {
    for (const c of ['@01\x00', '@01\t', '@01\x7f', '@01é', '@01\u2028']) assertInvalid(() => cmd.validateCommand(c), 'printable');
  });

  it('rejects a command longer than 255 bytes, counting the checksum when on', () => {
    const c255 = '~01O' + 'X'.repeat(251);
    assert.equal(cmd.validateCommand(c255), c255);
    assertInvalid(() => cmd.validateCommand(c255 + 'X'), 'length');
    assertInvalid(() => cmd.validateCommand(c255, { checksum: true }), 'length');
    assert.equal(cmd.validateCommand(c255.slice(0, 253), { checksum: true }).length, 253);
  });

  it('with framingOnly, lets odd commands through but never CR, LF or non-printables', () => {
    assert.equal(cmd.validateCommand('INVALIDCOMMAND', { framingOnly: true }), 'INVALIDCOMMAND');
    assert.equal(cmd.validateCommand('$01m', { framingOnly: true }), '$01m');
    assertInvalid(() => cmd.validateCommand('X\r', { framingOnly: true }), 'crlf');
    assertInvalid(() => cmd.validateCommand('X\x01', { framingOnly: true }), 'printable');
    assertInvalid(() => cmd.validateCommand('X'.repeat(256), { framingOnly: true }), 'length');
  });
});

describe('ascii command encoding', () => {
  it('appends CR only, when checksum is off', () => {
    assert.deepEqual(cmd.encodeCommand('@01'), Buffer.from('@01\r'));
  });

  it('appends the checksum then CR, when checksum is on', () => {
    assert.deepEqual(cmd.encodeCommand('$012', { checksum: true }), Buffer.from('$012B7\r'));
    assert.deepEqual(cmd.encodeCommand('#0100FF', { checksum: true }), Buffer.from('#0100FF70\r'));
  });

  it('validates before encoding', () => {
    assertInvalid(() => cmd.encodeCommand('@0a'), 'address');
  });
});

describe('ascii command classification', () => {
  const CASES = {
    '@01': 'read-digital',
    '@01A5': 'write-digital',
    '@01FFFE': 'write-digital',
    '#0100FF': 'write-digital',
    '#010A0F': 'write-digital',
    '#010B0F': 'write-digital',
    '#011000': 'write-digital',
    '#01A001': 'write-digital',
    '#01B301': 'write-digital',
    '#010': 'read-counter',
    '#01E': 'read-counter',
    '$016': 'digital-status',
    '$01L0': 'latch',
    '$01L1': 'latch',
    '$01M': 'name',
    '$01M1': 'info',
    '$012': 'config',
    '$01F': 'firmware',
    '#010+05.000': 'analog-write',
    '#012-01.500': 'analog-write',
    '#011N0F+01.000+02.000+03.000+04.000': 'analog-write',
    '#011N10': 'analog-write',
    '$0160': 'analog-read',
    '~0140': 'analog-read',
    '$0190': 'range',
    '~010': 'watchdog',
    '$01C': 'ack',
    '$01C3': 'ack',
    '~01OTANK1': 'ack',
    '~01LRoom1': 'ack',
    '~0152': 'ack',
    '~015S': 'ack',
    '$01903200': 'ack',
    '%0101400600': 'ack',
    '#01': 'analog-input',
    '#**': 'broadcast',
    '~**': 'broadcast',
    '$01RS': 'reboot',
    '$01Z': 'other',
    '$014': 'other'
  };
  for (const [c, kind] of Object.entries(CASES)) {
    it(`classifies ${c} as ${kind}`, () => {
      assert.equal(cmd.classifyCommand(c), kind);
      assert.ok(cmd.KINDS.includes(kind));
    });
  }

  it('expects no reply to #**, ~** and $AARS and a reply to everything else [HW]', () => {
    assert.equal(cmd.expectsReply('#**'), false);
    assert.equal(cmd.expectsReply('~**'), false);
    assert.equal(cmd.expectsReply('$01RS'), false);
    assert.equal(cmd.expectsReply('$01R'), true);
    assert.equal(cmd.expectsReply('@01'), true);
    assert.equal(cmd.expectsReply('$01M'), true);
  });
});

describe('ascii command builders', () => {
  it('build the common commands from parameters', () => {
    assert.equal(cmd.readAll('01'), '@01');
    assert.equal(cmd.readAll(10), '@0A');
    assert.equal(cmd.readAll('fe'), '@FE');
    assert.equal(cmd.setAllOutputs(1, 0xa5), '@01A5');
    assert.equal(cmd.setAllOutputs('01', 0), '@0100');
    assert.equal(cmd.setOutput('01', 0, true), '#01A001'); // the library's A/B form, [HW] on ED-588
    assert.equal(cmd.setOutput('01', 7, false), '#01A700');
    assert.equal(cmd.setOutput('01', 9, true), '#01B101'); // 16-output models
    assert.equal(cmd.readCounter('01', 0), '#010');
    assert.equal(cmd.readCounter('01', 14), '#01E');
    assert.equal(cmd.clearCounter('01', 3), '$01C3');
    assert.equal(cmd.setAnalog('01', 2, 5.13), '#012+05.130');
    assert.equal(cmd.setAnalog('01', 0, -2), '#010-02.000');
    assert.equal(cmd.setAnalog('01', 0, 99.999), '#010+99.999');
    assert.equal(cmd.setAnalog('01', 0, -0.0001), '#010+00.000');
    assert.equal(cmd.readAnalog('01', 3), '$0163');
    assert.equal(cmd.readName('01'), '$01M');
  });

  it('produce commands that pass validation', () => {
    for (const c of [cmd.readAll(255), cmd.setAllOutputs(255, 255), cmd.setOutput(1, 7, true), cmd.readCounter(1, 15),
      cmd.clearCounter(1, 15), cmd.setAnalog(1, 15, -99.999), cmd.readAnalog(1, 0), cmd.readName(0)]) {
      assert.equal(cmd.validateCommand(c), c);
    }
  });

  it('reject bad arguments with NINES_ERR_INVALID_ARG naming the field', () => {
    assertBadArg(() => cmd.readAll('1'), 'address');
    assertBadArg(() => cmd.readAll(256), 'address');
    assertBadArg(() => cmd.readAll(1.5), 'address');
    assertBadArg(() => cmd.readAll(null), 'address');
    assertBadArg(() => cmd.setAllOutputs('01', 256), 'byte');
    assertBadArg(() => cmd.setAllOutputs('01', -1), 'byte');
    assertBadArg(() => cmd.setOutput('01', 16, true), 'line');
    assertBadArg(() => cmd.setOutput('01', 0, 1), 'on');
    assertBadArg(() => cmd.setOutput('01', 0, 'yes'), 'on');
    assertBadArg(() => cmd.readCounter('01', 16), 'channel');
    assertBadArg(() => cmd.clearCounter('01', -1), 'channel');
    assertBadArg(() => cmd.setAnalog('01', 0, 100), 'volts');
    assertBadArg(() => cmd.setAnalog('01', 0, NaN), 'volts');
    assertBadArg(() => cmd.setAnalog('01', 0, '5'), 'volts');
    assertBadArg(() => cmd.readAnalog('01', 2.5), 'channel');
  });
});
