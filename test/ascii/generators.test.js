'use strict';

const assert = require('node:assert/strict');
const { NinesError } = require('../../gateway/base/errors');
const { createGenerator, checkGeneratorModel, GENERATORS, MODELS, formatPlus00000, formatPlus000hh } = require('../../gateway/drivers/ascii/generators');
const { validateCommand, classifyCommand } = require('../../gateway/drivers/ascii/command');
const { createDevice } = require('../../gateway/simulators/ascii/device');

const DRAWS = 10000;

/** Deterministic uniform [0, 1) source. */
function lcg (seed) {
  let s = seed >>> 0;
  return () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 2 ** 32; };
}

/** A random() that replays a fixed list. */
function replay (...values) {
  let i = 0;
  return () => values[i++ % values.length];
}

describe('ascii latency-test generators', () => {
  it('lists the five vendor generators with aliases and descriptions', () => {
    assert.deepEqual(GENERATORS.map((g) => g.name), ['@AA', '@AA(Data)', '#AAN', '#AA1N0F', '#AA1NVVData']);
    assert.deepEqual(GENERATORS.map((g) => g.alias), ['read-all', 'set-all', 'read-counter', 'analog-set4', 'analog-set-mask']);
    for (const g of GENERATORS) assert.ok(g.description.length > 10);
  });

  it('@AA always gives @ + the address (default 01)', () => {
    assert.equal(createGenerator('@AA')(), '@01');
    assert.equal(createGenerator('read-all', { address: 'a0' })(), '@A0');
    assert.equal(createGenerator('@AA', { address: 5 })(), '@05');
  });

  it('@AA(Data) gives 4 upper-case hex digits from 0000 to FFFE over 10,000 draws', () => {
    const gen = createGenerator('@AA(Data)', { random: lcg(1) });
    let min = Infinity; let max = -Infinity;
    for (let i = 0; i < DRAWS; i++) {
      const c = gen();
      assert.match(c, /^@01[0-9A-F]{4}$/);
      const v = parseInt(c.slice(3), 16);
      min = Math.min(min, v); max = Math.max(max, v);
    }
    assert.ok(max <= 0xfffe && min >= 0);
    assert.ok(max > 0xf000 && min < 0x1000, 'spread over the range');
  });

  it('@AA(Data) maps random() 0 and just under 1 to 0000 and FFFE', () => {
    assert.equal(createGenerator('set-all', { random: () => 0 })(), '@010000');
    assert.equal(createGenerator('set-all', { random: () => 1 - 2 ** -53 })(), '@01FFFE');
  });

  it('#AAN gives one counter channel 0…7, each seen over 10,000 draws (not the vendor\'s 0…E, which 8-input models refuse)', () => {
    const gen = createGenerator('#AAN', { random: lcg(2) });
    const seen = new Set();
    for (let i = 0; i < DRAWS; i++) {
      const c = gen();
      assert.match(c, /^#01[0-7]$/);
      seen.add(c[3]);
    }
    assert.equal(seen.size, 8);
    assert.equal(createGenerator('#AAN', { random: () => 1 - 2 ** -53 })(), '#017');
  });

  it('names the models each generator is for, all of them ED models we know', () => {
    const expected = { '@AA': 'ED-588', '@AA(Data)': 'ED-588', '#AAN': 'ED-588', '#AA1N0F': 'ED-560', '#AA1NVVData': 'ED-560' };
    for (const g of GENERATORS) {
      assert.ok(g.models.length > 0, g.name);
      for (const m of g.models) assert.ok(Object.hasOwn(MODELS, m), `${g.name}: ${m}`);
      assert.ok(g.models.includes(expected[g.name]), `${g.name} is for the simulated ${expected[g.name]}`);
    }
  });

  it('sends the simulated model it is for nothing that model refuses (ascii-protocol.md)', () => {
    for (const g of GENERATORS) {
      for (const model of g.models.filter((m) => m === 'ED-588' || m === 'ED-560')) {
        const dev = createDevice({ model });
        const gen = createGenerator(g.name, { random: lcg(6) });
        const refused = new Map();
        for (let i = 0; i < 2000; i++) {
          const c = gen();
          const { reply } = dev.handle(c);
          if (reply === null || reply.startsWith('?')) refused.set(c, reply);
        }
        assert.equal(refused.size, 0, `${model} refused ${g.name}: ${[...refused].slice(0, 5).map(([c, r]) => `${c} → ${r}`).join(', ')}`);
      }
    }
  });

  it('checkGeneratorModel refuses a generator for a model that refuses its commands, naming the ones that fit', () => {
    assert.throws(() => checkGeneratorModel('#AA1N0F', 'ED-588', 'ascii://h:9500'), (e) => {
      assert.ok(e instanceof NinesError);
      assert.equal(e.code, 'NINES_ERR_INVALID_ARG');
      assert.match(e.message, /generator #AA1N0F is for ED-560, but ascii:\/\/h:9500 is an ED-588/);
      assert.deepEqual(e.details.fit, ['@AA', '@AA(Data)', '#AAN']);
      return true;
    });
    assert.throws(() => checkGeneratorModel('read-all', 'ED-560'), (e) => e.code === 'NINES_ERR_INVALID_ARG' && /#AA1N0F, #AA1NVVData/.test(e.message));
    assert.throws(() => checkGeneratorModel('#AAN', 'ED-527'), /ED-527 \(16 digital outputs\)/);
    assert.throws(() => checkGeneratorModel('@AA', 'ED-549'), /no generator is for an ED-549; use --command/);
    // the model it is for, and names we cannot judge (renamed devices, other makers, no answer)
    for (const [name, model] of [['#AAN', 'ED-588'], ['analog-set4', 'ED-560'], ['@AA', 'ED-516'], ['#AA1N0F', 'MyBox'], ['@AA', 'ascii']]) {
      assert.doesNotThrow(() => checkGeneratorModel(name, model), `${name} on ${model}`);
    }
  });

  it('#AA1N0F gives four +DD.DDD values in 0…10 (35 characters)', () => {
    const gen = createGenerator('analog-set4', { random: lcg(3) });
    for (let i = 0; i < DRAWS; i++) {
      const c = gen();
      assert.match(c, /^#011N0F(?:\+\d{2}\.\d{3}){4}$/);
      assert.equal(c.length, 35);
      for (const v of c.slice(7).split('+').slice(1)) assert.ok(Number(v) >= 0 && Number(v) <= 10);
    }
  });

  it('#AA1NVVData gives a mask 01…1E and one +000.## value per set bit among bits 0-3', () => {
    const gen = createGenerator('#AA1NVVData', { random: lcg(4) });
    const masks = new Set();
    for (let i = 0; i < DRAWS; i++) {
      const c = gen();
      const m = /^#011N([0-9A-F]{2})((?:\+\d{3}(?:\.\d{1,2})?)*)$/.exec(c);
      assert.ok(m, c);
      const mask = parseInt(m[1], 16);
      masks.add(mask);
      assert.ok(mask >= 1 && mask <= 0x1e);
      const values = m[2] === '' ? [] : m[2].split('+').slice(1);
      let expected = 0;
      for (let b = 0; b < 4; b++) if (mask & (1 << b)) expected++;
      assert.equal(values.length, expected, c);
      for (const v of values) {
        assert.ok(Number(v) >= 0 && Number(v) <= 100);
        assert.doesNotMatch(v, /\.\d*0$/, 'no trailing zeros');
      }
    }
    assert.equal(masks.size, 30);
  });

  it('#AA1NVVData with mask 0x10 sends no value at all (the vendor quirk)', () => {
    assert.equal(createGenerator('#AA1NVVData', { random: () => 15 / 30 })(), '#011N10');
  });

  it('is deterministic with an injected random', () => {
    for (const g of GENERATORS) {
      const a = createGenerator(g.name, { random: lcg(9) });
      const b = createGenerator(g.alias, { random: lcg(9) });
      for (let i = 0; i < 100; i++) assert.equal(a(), b());
    }
    const gen = createGenerator('#AA1NVVData', { random: replay(0, 0.12345, 0.5) });
    assert.equal(gen(), '#011N01+012.35');
  });

  it('produces commands that pass validation and classify as the vendor meant', () => {
    const kinds = { '@AA': 'read-digital', '@AA(Data)': 'write-digital', '#AAN': 'read-counter', '#AA1N0F': 'analog-write', '#AA1NVVData': 'analog-write' };
    for (const g of GENERATORS) {
      const gen = createGenerator(g.name, { random: lcg(5), address: 'FE' });
      for (let i = 0; i < 1000; i++) {
        const c = gen();
        assert.equal(validateCommand(c), c);
        assert.equal(classifyCommand(c), kinds[g.name]);
      }
    }
  });

  it('formats like .NET: +00.000 and +000.##', () => {
    assert.equal(formatPlus00000(7.3184), '+07.318');
    assert.equal(formatPlus00000(0), '+00.000');
    assert.equal(formatPlus00000(9.9996), '+10.000');
    assert.equal(formatPlus000hh(42.57), '+042.57');
    assert.equal(formatPlus000hh(7.1), '+007.1');
    assert.equal(formatPlus000hh(12), '+012');
    assert.equal(formatPlus000hh(99.999), '+100');
    assert.equal(formatPlus000hh(0.004), '+000');
  });

  it('rejects an unknown generator, a bad address or a non-function random with NINES_ERR_INVALID_ARG', () => {
    for (const [name, opts, field] of [['@AB', {}, 'generator'], ['@AA', { address: '1' }, 'address'], ['@AA', { random: 3 }, 'random']]) {
      assert.throws(() => createGenerator(name, opts), (e) => e instanceof NinesError && e.code === 'NINES_ERR_INVALID_ARG' && e.details.field === field);
    }
  });
});
