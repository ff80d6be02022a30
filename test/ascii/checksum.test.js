'use strict';

const assert = require('node:assert/strict');
const { checksum, appendChecksum, verifyAndStrip } = require('../../gateway/drivers/ascii/checksum');

// reference/ascii-protocol-notes.md §1.3, every worked example
const TABLE = [
  ['$012', '$012B7'],
  ['!01400600', '!01400600AC'],
  ['!01400640', '!01400640B0'],
  ['@01', '@01A1'],
  ['>00FF', '>00FF2A'],
  ['$01M', '$01MD2'],
  ['!01ED-588', '!01ED-588DD'],
  ['#0100FF', '#0100FF70'],
  ['>', '>3E'],
  ['!01', '!0182'],
  ['?01', '?01A0'],
  ['~**', '~**D2']
];

describe('ascii checksum', () => {
  for (const [plain, withCs] of TABLE) {
    it(`appends the checksum of ${plain} to give ${withCs}`, () => {
      assert.equal(appendChecksum(plain), withCs);
      assert.equal(checksum(plain), withCs.slice(-2));
    });
    it(`verifies ${withCs} and strips it back to ${plain}`, () => {
      assert.deepEqual(verifyAndStrip(withCs), { body: plain, ok: true, expected: withCs.slice(-2), got: withCs.slice(-2) });
    });
  }

  it('sums bytes of a Buffer the same way as the characters of a string', () => {
    assert.equal(checksum(Buffer.from('$012', 'latin1')), 'B7');
  });

  it('keeps only the low 8 bits of the sum and pads to two upper-case digits', () => {
    assert.equal(checksum(''), '00');
    assert.equal(checksum('\x01'), '01');
    assert.equal(checksum('\xff\x01'), '00');
    assert.equal(checksum('zzzz'), (0x7a * 4 & 0xff).toString(16).toUpperCase().padStart(2, '0'));
  });

  it('reports a wrong checksum with the expected and received digits', () => {
    assert.deepEqual(verifyAndStrip('>00FF3F'), { body: '>00FF', ok: false, expected: '2A', got: '3F' });
  });

  it('accepts lower-case checksum digits when the sum matches', () => {
    assert.equal(verifyAndStrip('>00FF2a').ok, true);
  });

  it('reports a line too short to carry a checksum with got empty', () => {
    assert.deepEqual(verifyAndStrip('>'), { body: '>', ok: false, expected: '3E', got: '' });
    assert.equal(verifyAndStrip('').ok, false);
  });

  it('does not take a reply without checksum for a checksummed one', () => {
    assert.equal(verifyAndStrip('>00FF').ok, false);
    assert.equal(verifyAndStrip('!01ED-588').ok, false);
  });
});
