'use strict';

const assert = require('node:assert/strict');
const { NinesError } = require('../../gateway/base/errors');
const { parseReply } = require('../../gateway/drivers/ascii/reply');
const { appendChecksum } = require('../../gateway/drivers/ascii/checksum');

function parse (line, command, opts = {}) {
  return parseReply(line, { command, ...opts });
}

function assertCode (fn, code, check) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof NinesError);
    assert.equal(err.code, code);
    if (check) check(err);
    return true;
  });
}

const bits = (s) => [...s].map((c) => c === '1');

describe('ascii reply parsing', () => {
  describe('digital reads', () => {
    it('parses @AA >OOII into outputs, inputs, value and 16 bits (ED-588, outputs first) [HW]', () => {
      const r = parse('>01FF', '@01');
      assert.equal(r.ok, true);
      assert.equal(r.command, '@01');
      assert.equal(r.kind, 'read-digital');
      assert.equal(r.lead, '>');
      assert.equal(r.raw, '>01FF');
      assert.equal(r.value, 0x01ff);
      assert.deepEqual(r.outputs, bits('10000000'));
      assert.deepEqual(r.inputs, bits('11111111'));
      assert.equal(r.bits.length, 16);
      assert.equal(r.bits[8], true);
      assert.equal(r.bits[9], false);
    });

    it('maps bit 0 of OO to output 0 and bit 0 of II to input 0', () => {
      const r = parse('>0302', '@01');
      assert.deepEqual(r.outputs, bits('11000000'));
      assert.deepEqual(r.inputs, bits('01000000'));
    });

    it('returns value and bits for other hex widths without outputs/inputs', () => {
      const r = parse('>FF', '@01');
      assert.equal(r.value, 255);
      assert.equal(r.bits.length, 8);
      assert.equal(r.outputs, undefined);
    });

    it('parses $AA6 !DDDD00 like @AA (no address echoed) [HW]', () => {
      const r = parse('!A5FF00', '$016');
      assert.equal(r.kind, 'digital-status');
      assert.equal(r.value, 0xa5ff);
      assert.deepEqual(r.outputs, bits('10100101'));
      assert.deepEqual(r.inputs, bits('11111111'));
    });

    it('keeps a 2-digit $AA6 reply (ED-549 enable mask) as text', () => {
      assert.equal(parse('!FF', '$016').text, 'FF');
    });

    it('parses latches $AAL1 !DDDD00 into value and bits', () => {
      const r = parse('!000100', '$01L1');
      assert.equal(r.kind, 'latch');
      assert.equal(r.value, 1);
      assert.equal(r.bits[0], true);
    });

    it('rejects a digital read with the wrong lead or non-hex data', () => {
      assertCode(() => parse('!00FF', '@01'), 'NINES_ERR_BAD_REPLY', (e) => {
        assert.equal(e.details.command, '@01');
        assert.equal(e.details.raw, '!00FF');
        assert.equal(e.details.hex, Buffer.from('!00FF').toString('hex'));
      });
      assertCode(() => parse('>00FG', '@01'), 'NINES_ERR_BAD_REPLY');
      assertCode(() => parse('>', '@01'), 'NINES_ERR_BAD_REPLY');
      assertCode(() => parse('>00FF', '$016'), 'NINES_ERR_BAD_REPLY');
    });
  });

  describe('counters, names, config', () => {
    it('parses #AAN !AA(count) with any number of digits [DCON]', () => {
      assert.equal(parse('!0100000', '#010').count, 0);
      assert.equal(parse('!0100012', '#010').count, 12);
      assert.equal(parse('!014294967295', '#017').count, 4294967295);
      assert.equal(parse('!017', '#017').count, 7);
    });

    it('parses an ED-549 #AAn >(value) as an analog reading', () => {
      assert.equal(parse('>+00.144', '#010').value, 0.144);
    });

    it('rejects a counter reply from another address or with non-decimal data', () => {
      assertCode(() => parse('!0200012', '#010'), 'NINES_ERR_BAD_REPLY');
      assertCode(() => parse('!01', '#010'), 'NINES_ERR_BAD_REPLY');
      assertCode(() => parse('!010001A', '#010'), 'NINES_ERR_BAD_REPLY');
    });

    it('parses $AAM into name [HW]', () => {
      const r = parse('!01ED-588', '$01M');
      assert.equal(r.kind, 'name');
      assert.equal(r.name, 'ED-588');
      assert.equal(parse('!01bob', '$01M').name, 'bob');
    });

    it('parses $AAM1 (location) into text and $AAF into firmware', () => {
      assert.equal(parse('!01Room1', '$01M1').text, 'Room1');
      assert.equal(parse('!012.54', '$01F').firmware, '2.54');
    });

    it('parses $AA2 into type, baud code, flags and the checksum bit', () => {
      const r = parse('!01400600', '$012');
      assert.deepEqual({ type: r.type, baudCode: r.baudCode, flags: r.flags, checksum: r.checksum },
        { type: '40', baudCode: '06', flags: 0, checksum: false });
      assert.equal(parse('!01400640', '$012').checksum, true);
      assertCode(() => parse('!014006', '$012'), 'NINES_ERR_BAD_REPLY');
    });

    it('parses ~AA0 into the watchdog status and whether it tripped', () => {
      assert.deepEqual([parse('!0100', '~010').watchdog, parse('!0100', '~010').tripped], [0, false]);
      assert.equal(parse('!0104', '~010').tripped, true);
    });
  });

  describe('analog', () => {
    it('parses $AA6n and ~AA4n readings in volts', () => {
      assert.equal(parse('!01+05.000', '$0160').value, 5);
      assert.equal(parse('!01-01.250', '$0161').value, -1.25);
      assert.equal(parse('!01+05.130', '~0142').value, 5.13);
      assert.equal(parse('!01+050.00', '$0160').value, 50);
    });

    it('keeps a hex-format analog reading as text', () => {
      assert.equal(parse('!010BBC', '$0160').text, '0BBC');
    });

    it('parses $AA9n into range and slew', () => {
      const r = parse('!013200', '$0190');
      assert.equal(r.range, '32');
      assert.equal(r.slew, '00');
    });

    it('parses ED-549 #AA into a list of values', () => {
      const r = parse('>+00.156+00.165-00.038+00.049+00.078+00.111+00.015+00.004', '#01');
      assert.deepEqual(r.values, [0.156, 0.165, -0.038, 0.049, 0.078, 0.111, 0.015, 0.004]);
    });

    it('acknowledges #AAn(+DD.DDD) and #AA1N… with >', () => {
      assert.equal(parse('>', '#010+05.000').ack, true);
      assert.equal(parse('>', '#011N0F+01.000+02.000+03.000+04.000').ack, true);
    });
  });

  describe('writes and acknowledgements', () => {
    for (const c of ['@01A5', '#0100FF', '#010A0F', '#01A001', '#011000']) {
      it(`acknowledges ${c} with > as {ack: true}`, () => {
        const r = parse('>', c);
        assert.equal(r.ack, true);
        assert.equal(r.kind, 'write-digital');
        assert.equal(r.raw, '>');
      });
    }

    it('reports a bare ! to a write as NINES_ERR_DEVICE_IGNORED (watchdog tripped) [DCON]', () => {
      assertCode(() => parse('!', '#01A001'), 'NINES_ERR_DEVICE_IGNORED', (e) => assert.equal(e.details.command, '#01A001'));
      assertCode(() => parse('!', '#010+05.000'), 'NINES_ERR_DEVICE_IGNORED');
    });

    it('rejects a write reply that is neither >, ! nor ?', () => {
      assertCode(() => parse('>00FF', '#0100FF'), 'NINES_ERR_BAD_REPLY');
      assertCode(() => parse('!01', '@01A5'), 'NINES_ERR_BAD_REPLY');
    });

    it('parses !AA acknowledgements to $AAC, $AACN, ~AAO, ~AA5n', () => {
      for (const c of ['$01C', '$01C0', '~01OTANK1', '~0152']) assert.equal(parse('!01', c).ack, true);
      assertCode(() => parse('!02', '$01C'), 'NINES_ERR_BAD_REPLY');
      assertCode(() => parse('!01X', '$01C'), 'NINES_ERR_BAD_REPLY');
      assertCode(() => parse('>', '$01C'), 'NINES_ERR_BAD_REPLY');
    });

    it('takes the new address from the reply to %AANNTTCCFF [DCON]', () => {
      const r = parse('!02', '%0102400600');
      assert.equal(r.ack, true);
      assert.equal(r.address, '02');
    });
  });

  describe('error leads', () => {
    it('reports ?AA as NINES_ERR_DEVICE_INVALID with the raw reply and the command', () => {
      assertCode(() => parse('?01', '#018'), 'NINES_ERR_DEVICE_INVALID', (e) => {
        assert.equal(e.details.command, '#018');
        assert.equal(e.details.raw, '?01');
      });
    });

    it('reports a bare ? (output writes) as NINES_ERR_DEVICE_INVALID', () => {
      assertCode(() => parse('?', '#01A002'), 'NINES_ERR_DEVICE_INVALID');
    });

    it('does not take ? from another address for an answer: NINES_ERR_BAD_REPLY', () => {
      assertCode(() => parse('?02', '$01M'), 'NINES_ERR_BAD_REPLY');
    });

    it('reports garbage with hex and escaped text in details', () => {
      assertCode(() => parse('\x00\xffA', '@01'), 'NINES_ERR_BAD_REPLY', (e) => {
        assert.equal(e.details.hex, '00ff41');
        assert.equal(e.details.raw, '\\x00\\xffA');
        assert.equal(e.details.kind, 'read-digital');
      });
    });

    it('reports an empty reply as NINES_ERR_BAD_REPLY', () => {
      assertCode(() => parse('', '@01'), 'NINES_ERR_BAD_REPLY');
    });

    it('returns the text after the lead for commands of unknown shape', () => {
      assert.equal(parse('!01XYZ', '$01Z').text, '01XYZ');
      assertCode(() => parse('#01', '$01Z'), 'NINES_ERR_BAD_REPLY');
      assertCode(() => parse('?01', '$01Z'), 'NINES_ERR_DEVICE_INVALID');
    });
  });

  describe('checksum mode', () => {
    it('verifies and strips the checksum of each reply (§3.3 C1, C4, C5, C6)', () => {
      const c1 = parse('!01400640B0', '$012', { checksum: true });
      assert.equal(c1.raw, '!01400640');
      assert.equal(c1.checksum, true);
      assert.equal(parse('>00FF2A', '@01', { checksum: true }).value, 0xff);
      assert.equal(parse('!01ED-588DD', '$01M', { checksum: true }).name, 'ED-588');
      assert.equal(parse('>3E', '#0100FF', { checksum: true }).ack, true);
    });

    it('reports a wrong checksum as NINES_ERR_BAD_CHECKSUM naming both values', () => {
      assertCode(() => parse('>00FF3F', '@01', { checksum: true }), 'NINES_ERR_BAD_CHECKSUM', (e) => {
        assert.equal(e.message, 'reply to @01 has checksum 3F, expected 2A');
        assert.equal(e.details.expected, '2A');
        assert.equal(e.details.got, '3F');
        assert.equal(e.details.raw, '>00FF3F');
      });
    });

    it('reports a reply without checksum as NINES_ERR_BAD_CHECKSUM when checksum is on', () => {
      assertCode(() => parse('>', '#0100FF', { checksum: true }), 'NINES_ERR_BAD_CHECKSUM', (e) => assert.match(e.message, /no checksum/));
      assertCode(() => parse('>00FF', '@01', { checksum: true }), 'NINES_ERR_BAD_CHECKSUM');
    });

    it('checks the checksum before the lead, so ? and ! carry one too', () => {
      assertCode(() => parse(appendChecksum('?01'), '#018', { checksum: true }), 'NINES_ERR_DEVICE_INVALID');
      assertCode(() => parse(appendChecksum('!'), '#01A001', { checksum: true }), 'NINES_ERR_DEVICE_IGNORED');
      assertCode(() => parse('?01', '#018', { checksum: true }), 'NINES_ERR_BAD_CHECKSUM');
    });

    it('leaves checksum digits in place when checksum mode is off (they fail the shape)', () => {
      assert.equal(parse('!01ED-588DD', '$01M').name, 'ED-588DD');
      assertCode(() => parse('>3E', '#0100FF'), 'NINES_ERR_BAD_REPLY');
    });
  });

  it('uses a given kind instead of classifying the command again', () => {
    assert.equal(parse('>0001', '@01', { kind: 'read-digital' }).value, 1);
  });
});
