'use strict';

const assert = require('node:assert/strict');
const { createDevice, MODELS } = require('../../gateway/simulators/ascii');
const { NinesError } = require('../../gateway/base/errors');

/** A clock the test moves by hand (ms). */
function manualClock (start = 1000) {
  let t = start;
  const now = () => t;
  now.advance = (ms) => { t += ms; };
  return now;
}

/** Runs [command, expected reply or null] rows in order on one device. */
function runVectors (dev, rows) {
  for (const [cmd, expected, note] of rows) {
    assert.equal(dev.handle(cmd).reply, expected, `${JSON.stringify(cmd)} ${note || ''}`);
  }
}

function assertInvalid (fn, pattern) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof NinesError);
    assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
    if (pattern) assert.match(err.message, pattern);
    return true;
  });
}

describe('ASCII simulator device', function () {
  describe('ED-588 vectors (notes §3.1, sequential from S0)', function () {
    it('answers all 31 rows of the initial-state table', function () {
      const dev = createDevice({ model: 'ED-588' });
      runVectors(dev, [
        ['$01M', '!01ED-588', '1'],
        ['@01', '>00FF', '2'],
        ['$016', '!00FF00', '3'],
        ['$012', '!01400600', '4'],
        ['#0100FF', '>', '5'],
        ['@01', '>FFFF', '6'],
        ['#010000', '>', '7'],
        ['@01', '>00FF', '8'],
        ['#01A001', '>', '9'],
        ['@01', '>01FF', '10'],
        ['#01A101', '>', '11'],
        ['@01', '>03FF', '12'],
        ['#011000', '>', '13'],
        ['@01', '>02FF', '14'],
        ['#01A100', '>', '15'],
        ['@01', '>00FF', '16'],
        ['@01A5', '>', '17'],
        ['@01', '>A5FF', '18'],
        ['$016', '!A5FF00', '19'],
        ['#010A0F', '>', '20'],
        ['@01', '>0FFF', '21'],
        ['@0100', '>', '22'],
        ['$01L1', '!000000', '23'],
        ['$01L0', '!000000', '24'],
        ['$01C', '!01', '25'],
        ['#010', '!0100000', '26'],
        ['$01C0', '!01', '27'],
        ['~01OTANK1', '!01', '28'],
        ['$01M', '!01TANK1', '29'],
        ['~01OED-588', '!01', '30'],
        ['~010', '!0100', '31']
      ]);
      assert.equal(dev.outputs, 0);
      assert.equal(dev.name, 'ED-588');
    });
  });

  describe('error and edge cases (notes §3.2)', function () {
    it('answers E1-E7 from S0 and closes without a reply on E8', function () {
      const dev = createDevice();
      runVectors(dev, [
        ['INVALIDCOMMAND', null, 'E1'],
        ['$01M', '!01ED-588', 'E2'],
        ['@02', null, 'E3'],
        ['$02M', null, 'E4'],
        ['~**', null, 'E5'],
        ['#**', null, 'E6'],
        ['#018', '?01', 'E7']
      ]);
      assert.deepEqual(dev.handle('$01RS'), { reply: null, close: true });
    });

    it('answers the hold-overs as documented [OURS]', function () {
      const dev = createDevice();
      assert.equal(dev.handle('@01A5A5').reply, '>');
      assert.equal(dev.outputs, 0xA5, '4-digit data drives the outputs with the low byte');
      assert.equal(dev.handle('@011234').reply, '>');
      assert.equal(dev.outputs, 0x34);
      assert.equal(dev.handle('#01A801').reply, '?');
      assert.equal(dev.handle('#01A002').reply, '?');
      assert.equal(dev.outputs, 0x34, 'invalid writes change nothing');
      assert.equal(dev.handle('$01m').reply, null, 'lower case is silent');
      assert.equal(dev.handle('@0a').reply, null);
      assert.equal(dev.handle('$012B7').reply, null, 'checksum while checksums are off: unknown shape');
      assert.equal(dev.handle('\n@01').reply, '>34FF', 'LF of a CR-LF is ignored');
      assert.equal(dev.handle('\n\n$01M').reply, '!01ED-588');
    });

    it('stays silent on empty, short and prefix-less lines', function () {
      const dev = createDevice();
      for (const line of ['', '@', '@0', '01M', ' @01', '@01 ', '*01M', '\n']) assert.equal(dev.handle(line).reply, null, JSON.stringify(line));
    });

    it('answers other output-write shapes with a bare ? and unknown shapes with silence', function () {
      const dev = createDevice();
      assert.equal(dev.handle('@01F').reply, '?');
      assert.equal(dev.handle('@01ABCDEF').reply, '?');
      assert.equal(dev.handle('#010BFF').reply, '?', 'upper outputs do not exist on an ED-588');
      assert.equal(dev.handle('#01B001').reply, '?', 'B group is ED-527 only');
      assert.equal(dev.handle('#012001').reply, '?');
      assert.equal(dev.handle('#01A0').reply, '?01', 'a 2-character body reads like an ED-560 write');
      assert.equal(dev.handle('$01X').reply, null);
      assert.equal(dev.handle('@01(FF)').reply, null);
    });

    it('answers ?AA for absent channels and bad parameters of known commands', function () {
      const dev = createDevice();
      for (const ch of '89ABCDE') assert.equal(dev.handle(`#01${ch}`).reply, '?01', `#01${ch}: vendor #AAN test channels`);
      assert.equal(dev.handle('$01C8').reply, '?01');
      assert.equal(dev.handle('$01L2').reply, '?01');
      assert.equal(dev.handle('~013100').reply, '?01', 'enabled watchdog with no time');
      assert.equal(dev.handle('~0132FF').reply, '?01');
      assert.equal(dev.handle('~013').reply, '?01');
    });
  });

  describe('checksum mode (notes §3.3)', function () {
    it('answers C1-C6', function () {
      const dev = createDevice({ checksum: true });
      runVectors(dev, [
        ['$012B7', '!01400640B0', 'C1'],
        ['$012', null, 'C2 no checksum'],
        ['$012B8', null, 'C3 wrong checksum'],
        ['@01A1', '>00FF2A', 'C4'],
        ['$01MD2', '!01ED-588DD', 'C5'],
        ['#0100FF70', '>3E', 'C6']
      ]);
    });

    it('adds checksums to ? replies and ignores checksummed broadcasts silently', function () {
      const dev = createDevice({ checksum: true });
      const cmd = '#018';
      const cs = ((cmd.charCodeAt(0) + cmd.charCodeAt(1) + cmd.charCodeAt(2) + cmd.charCodeAt(3)) & 0xFF).toString(16).toUpperCase().padStart(2, '0');
      assert.equal(dev.handle(cmd + cs).reply, '?01A0');
      assert.equal(dev.handle('~**D2').reply, null);
      assert.equal(dev.handle('$012b7').reply, null, 'lower-case checksum digits are wrong');
      dev.checksum = false;
      assert.equal(dev.handle('$012').reply, '!01400600');
      assertInvalid(() => { dev.checksum = 'yes'; }, /checksum/);
    });
  });

  describe('ED-560 (notes §3.4)', function () {
    it('answers the bonus analog vectors', function () {
      const dev = createDevice({ model: 'ED-560' });
      runVectors(dev, [
        ['$01M', '!01ED-560'],
        ['#010+05.000', '>'],
        ['$0160', '!01+05.000'],
        ['$0190', '!013200'],
        ['~0140', '!01+00.000'],
        ['#012+05.130', '>'],
        ['~0152', '!01'],
        ['~0142', '!01+05.130'],
        ['#015+05.000', '?01']
      ]);
      assert.deepEqual(dev.outputs, [5, 0, 5.13, 0]);
      assert.deepEqual(dev.safeValue, [0, 0, 5.13, 0]);
    });

    it('sets the channels of a multi-channel #AA1N command whose mask bit is set [OURS]', function () {
      const dev = createDevice({ model: 'ED-560' });
      assert.equal(dev.handle('#011N0F+01.000+02.000+03.000+04.000').reply, '>');
      assert.deepEqual(dev.outputs, [1, 2, 3, 4]);
      assert.equal(dev.handle('#011N05+07.5+08.25').reply, '>');
      assert.deepEqual(dev.outputs, [7.5, 2, 8.25, 4]);
      // vendor generator: bit 4 set with no value, values up to +100 (clamped to the 0-10 V range)
      assert.equal(dev.handle('#011N1A+042.57+007.1').reply, '>');
      assert.deepEqual(dev.outputs, [7.5, 10, 8.25, 7.1]);
      assert.equal(dev.handle('#011N10').reply, '>', 'mask 0x10: no values, nothing set');
      assert.deepEqual(dev.outputs, [7.5, 10, 8.25, 7.1]);
      assert.equal(dev.handle('#011N0F+01.000x').reply, '?01');
      assert.equal(dev.handle('#011N0F01.000').reply, '?01', 'values need a sign to be split');
      assert.equal(dev.handle('$0163').reply, '!01+07.100');
    });

    it('reads and sets ranges, refuses out-of-range values and absent channels', function () {
      const dev = createDevice({ model: 'ED-560' });
      runVectors(dev, [
        ['#0104.983', '>', 'loose number as the vendor library sends it'],
        ['$0160', '!01+04.983'],
        ['#010+10.001', '?01'],
        ['#010-00.500', '?01'],
        ['$0160', '!01+04.983'],
        ['$01913100', '!01', 'channel 1 to 4-20 mA'],
        ['$0191', '!013100'],
        ['$0161', '!01+04.000', 'value clamped into the new range'],
        ['#011+20.000', '>'],
        ['$019220', '!01', 'short form: type 32, slew 0'],
        ['$0192', '!013200'],
        ['$01913300', '?01', 'unknown range code'],
        ['$01940', '?01', 'no channel 4'],
        ['$0164', '?01'],
        ['~0144', '?01'],
        ['$0140', '!01', 'store power-on value of channel 0'],
        ['$0170', '!01+04.983'],
        ['$01M0', '!01ED-560'],
        ['$012', '!01300600']
      ]);
    });

    it('answers ED-588 commands with ?01, bare ? for its output writes', function () {
      const dev = createDevice({ model: 'ED-560' });
      runVectors(dev, [
        ['@01', '?01'],
        ['@01FF', '?'],
        ['#0100FF', '?', 'an ED-588 output write (0FF is no number)'],
        ['$016', '?01'],
        ['$01L1', '?01'],
        ['~014S', '?01'],
        // `nines probe --command '#010'` to an ED-560: an ED-588 counter read; the ED-560 has no
        // counters, and as its own `#AAn(data)` the value is missing: invalid either way
        ['#010', '?01', 'an ED-588 counter read']
      ]);
      assertInvalid(() => dev.setInput(0, true), /ED-560 has none/);
      assert.equal(dev.inputs, null);
      const edo = createDevice();
      assert.equal(edo.handle('#010+05.000').reply, '?01');
      assert.equal(edo.handle('$0190').reply, '?01');
    });

    it('holds outputs at their safe values when its watchdog trips', function () {
      const now = manualClock();
      const dev = createDevice({ model: 'ED-560', now });
      runVectors(dev, [['#010+02.000', '>'], ['~0150', '!01'], ['#010+09.000', '>'], ['~013105', '!01']]);
      now.advance(600);
      assert.equal(dev.handle('#011+01.000').reply, '!');
      assert.deepEqual(dev.outputs, [2, 0, 0, 0]);
      assert.equal(dev.handle('#011N0F+01+01+01+01').reply, '!');
    });
  });

  describe('common commands', function () {
    it('reads model, location, firmware and reset status', function () {
      const dev = createDevice();
      runVectors(dev, [
        ['$01M0', '!01ED-588'],
        ['$01M1', '!01'],
        ['~01LRoom1', '!01'],
        ['$01M1', '!01Room1'],
        ['~01LRoom1234567', '?01', 'location over 10 characters'],
        ['$01F', '!012.54'],
        ['$015', '!011', 'first read after power-on'],
        ['$015', '!010'],
        ['~01Obob', '!01', 'free text may be lower case'],
        ['$01M', '!01bob'],
        ['~01O', '?01'],
        ['~01OABCDEFGHIJK', '?01']
      ]);
    });

    it('reboots on $AARS and factory-resets on $AAS1', function () {
      const dev = createDevice();
      runVectors(dev, [['$015', '!011'], ['@0133', '>'], ['~015P', '!01'], ['@0155', '>'], ['~01OTANK', '!01']]);
      dev.setInput(0, false);
      assert.deepEqual(dev.handle('$01RS'), { reply: null, close: true });
      assert.equal(dev.outputs, 0x33, 'outputs at their power-on value');
      assert.deepEqual(dev.counters, [0, 0, 0, 0, 0, 0, 0, 0]);
      assert.deepEqual(dev.latches, { high: 0, low: 0 });
      runVectors(dev, [['$015', '!011'], ['$01M', '!01TANK'], ['~014P', '!013300']]);
      assert.deepEqual(dev.handle('$01S1'), { reply: '!01', close: true });
      runVectors(dev, [['$01M', '!01ED-588'], ['@01', '>00FF'], ['~014P', '!010000']]);
    });

    it('changes address, counter edge and counter width with %AANNTTCCFF', function () {
      const dev = createDevice();
      runVectors(dev, [
        ['%0101400640', '?01', 'checksum bit cannot change over %'],
        ['%0101300600', '?01', 'type must be the model\'s'],
        ['%0101400B00', '?01', 'unknown baud code'],
        ['%0101400601', '?01', 'flag bits an ED-588 has not'],
        ['%0102400AA0', '!02', 'new address in the reply'],
        ['$012', null],
        ['$022', '!02400AA0'],
        ['%0201400600', '!01']
      ]);
      assert.equal(dev.address, '01');
      assert.deepEqual(dev.config, { type: '40', baud: '06', ff: 0, counterEdge: 'falling', counterBits: 16 });
    });

    it('returns synchronized data once fresh after #**', function () {
      const dev = createDevice();
      runVectors(dev, [['$014', '?01', 'nothing sampled yet'], ['@0112', '>'], ['#**', null], ['@0134', '>'],
        ['$014', '!112FF'], ['$014', '!012FF']]);
    });
  });

  describe('inputs, counters and latches', function () {
    it('counts falling edges by default and latches both directions', function () {
      const dev = createDevice();
      dev.setInput(0, false);
      dev.setInput(0, true);
      dev.setInput(0, false);
      dev.setInput(3, false);
      dev.setInput(3, false); // no edge
      runVectors(dev, [
        ['@01', '>00F6'],
        ['#010', '!0100002'],
        ['#013', '!0100001'],
        ['#011', '!0100000'],
        ['$01L0', '!000900'],
        ['$01L1', '!000100'],
        ['$01C', '!01'],
        ['$01L0', '!000000'],
        ['$01C0', '!01'],
        ['#010', '!0100000'],
        ['#013', '!0100001']
      ]);
      assert.deepEqual(dev.counters, [0, 0, 0, 1, 0, 0, 0, 0]);
    });

    it('counts rising edges when the counter-edge flag is set', function () {
      const dev = createDevice({ counterEdge: 'rising' });
      assert.equal(dev.handle('$012').reply, '!01400680');
      dev.setInputs(0x00);
      assert.deepEqual(dev.counters, [0, 0, 0, 0, 0, 0, 0, 0]);
      dev.setInputs(0x0F);
      assert.deepEqual(dev.counters, [1, 1, 1, 1, 0, 0, 0, 0]);
      assert.deepEqual(dev.latches, { high: 0x0F, low: 0xFF });
      assert.equal(dev.inputs, 0x0F);
    });

    it('wraps 16-bit counters at 65536 and prints 32-bit counters with 10 digits', function () {
      const now = manualClock();
      const dev = createDevice({ animate: true, now });
      now.advance(1000 * 65536 * 2); // input 0 toggles 131072 times: 65536 falling edges
      assert.equal(dev.handle('#010').reply, '!0100000');
      assert.equal(dev.handle('#011').reply, '!0132768');
      const dev32 = createDevice({ counterBits: 32 });
      dev32.setInput(7, false);
      assert.equal(dev32.handle('#017').reply, '!010000000001');
    });

    it('toggles inputs slowly only when animate is on', function () {
      const now = manualClock();
      const still = createDevice({ now });
      const live = createDevice({ now, animate: true });
      now.advance(3000);
      assert.equal(still.inputs, 0xFF);
      // input i toggles every (i+1) s: 0 three times, 1 once, 2 once
      assert.equal(live.inputs, 0xF8);
      assert.equal(live.handle('#010').reply, '!0100002');
      assert.equal(live.handle('@01').reply, '>00F8');
    });

    it('rejects bad input values naming the field', function () {
      const dev = createDevice();
      assertInvalid(() => dev.setInput(8, true), /n must be/);
      assertInvalid(() => dev.setInput(0, 1), /high must be/);
      assertInvalid(() => dev.setInputs(256), /byte must be/);
      assertInvalid(() => dev.setInputs(-1), /byte must be/);
      assertInvalid(() => dev.handle(42), /line must be/);
    });
  });

  describe('host watchdog', function () {
    it('trips without a host OK in time: outputs go safe and writes get a bare !', function () {
      const now = manualClock();
      const dev = createDevice({ now });
      runVectors(dev, [
        ['@0103', '>'],
        ['~015S', '!01'],
        ['~014S', '!010300'],
        ['#01000F', '>'],
        ['~01310A', '!01', 'enable, 1.0 s'],
        ['~012', '!0110A']
      ]);
      now.advance(900);
      dev.handle('~**');
      now.advance(900);
      runVectors(dev, [['@01', '>0FFF', 'kept alive by ~**'], ['~010', '!0100']]);
      now.advance(1100);
      runVectors(dev, [
        ['@01', '>03FF', 'safe value'],
        ['~010', '!0104'],
        ['#0100FF', '!'],
        ['@01FF', '!'],
        ['#01A001', '!'],
        ['#01A801', '?', 'invalid is checked before the watchdog'],
        ['~**', null],
        ['#0100FF', '!', 'host OK does not clear a tripped watchdog'],
        ['~011', '!01'],
        ['~010', '!0100'],
        ['#0100FF', '>'],
        ['@01', '>FFFF']
      ]);
      assert.deepEqual(dev.watchdog, { enabled: true, timeoutMs: 1000, tripped: false });
      dev.handle('~013000');
      now.advance(100000);
      assert.equal(dev.handle('#010000').reply, '>', 'disabled watchdog never trips');
    });
  });

  describe('options', function () {
    it('lists its models', function () {
      assert.deepEqual(Object.keys(MODELS), ['ED-588', 'ED-560']);
    });

    it('normalises the address and answers only to it', function () {
      const dev = createDevice({ address: 10 });
      assert.equal(dev.address, '0A');
      assert.equal(dev.handle('@0A').reply, '>00FF');
      assert.equal(dev.handle('@0a').reply, null);
      assert.equal(createDevice({ address: 'ff' }).address, 'FF');
      assert.equal(createDevice({ address: '1' }).handle('$01M').reply, '!01ED-588');
      assert.equal(createDevice({ name: 'PUMP' }).handle('$01M').reply, '!01PUMP');
    });

    it('rejects bad options with NINES_ERR_INVALID_ARG naming the field', function () {
      assertInvalid(() => createDevice({ model: 'ED-999' }), /model/);
      assertInvalid(() => createDevice({ address: 'G1' }), /address/);
      assertInvalid(() => createDevice({ address: 256 }), /address/);
      assertInvalid(() => createDevice({ checksum: 'on' }), /checksum/);
      assertInvalid(() => createDevice({ name: '' }), /name/);
      assertInvalid(() => createDevice({ name: 'a name that is too long' }), /name/);
      assertInvalid(() => createDevice({ counterEdge: 'both' }), /counterEdge/);
      assertInvalid(() => createDevice({ counterBits: 8 }), /counterBits/);
      assertInvalid(() => createDevice({ colour: 'red' }), /colour.*unknown option/);
      assertInvalid(() => createDevice(null), /options/);
    });
  });
});
