'use strict';

/**
 * Typed decoding of Modbus registers, and the inverse for writes. Pure: no I/O, no Node-RED.
 *
 * Registers travel big-endian (high byte first), 16 bits each. A 32- or 64-bit value spans several
 * registers, and devices disagree on the order, so two switches name it (the usual letters for a
 * 32-bit value whose big-endian bytes are A B C D):
 *
 *   wordOrder big,    byteOrder big    → ABCD (Modicon, most PLCs)
 *   wordOrder little, byteOrder big    → CDAB (word swap: many meters, Schneider)
 *   wordOrder big,    byteOrder little → BADC (byte swap)
 *   wordOrder little, byteOrder little → DCBA (fully little-endian)
 *
 * Applied as: swap the bytes inside each register (byteOrder little), reverse the registers of one
 * value (wordOrder little), then read the bytes as big-endian.
 *
 * Values are `raw * scale + offset` on decode, without float noise (rounding.js: a float32 is its
 * shortest decimal, 71.3; 701 at scale 0.1 is 70.1), and `(value - offset) / scale` on encode. On encode an
 * integer type takes only a whole raw value within its range: 3.7 for an int16 is refused
 * (NINES_ERR_INVALID_VALUE), never rounded to 4 and never wrapped. A raw value within 1e-9 (relative)
 * of a whole number counts as whole, so 71.3 at scale 0.1 is 713, not a float artefact 712.9999….
 */

const { NinesError } = require('../base/errors');
const { engineeringValue } = require('./rounding');
const { readBcd, writeBcd } = require('./bcd');
const { halfToNumber, numberToHalf, f16round, FLOAT16_MAX } = require('./float16');

/**
 * Type → registers per value; `bool` packs 16 values per register, `string` 2 characters. `bcd`
 * and `lbcd` hold 4 and 8 decimal digits (bcd.js); `int8` and `uint8` one byte of a register,
 * named by the `byte` option (`high`, the first byte on the wire, or `low`), the other byte left alone.
 */
const TYPES = Object.freeze({
  int16: { words: 1, integer: true, min: -0x8000, max: 0x7FFF },
  uint16: { words: 1, integer: true, min: 0, max: 0xFFFF },
  int32: { words: 2, integer: true, min: -0x80000000, max: 0x7FFFFFFF },
  uint32: { words: 2, integer: true, min: 0, max: 0xFFFFFFFF },
  float32: { words: 2 },
  int64: { words: 4, integer: true, big: true, min: -(2n ** 63n), max: 2n ** 63n - 1n },
  uint64: { words: 4, integer: true, big: true, min: 0n, max: 2n ** 64n - 1n },
  float64: { words: 4 },
  bool: { bitsPerWord: 16 },
  string: { charsPerWord: 2 },
  float16: { words: 1 },
  bcd: { words: 1, integer: true, min: 0, max: 9999 },
  lbcd: { words: 2, integer: true, min: 0, max: 99999999 },
  int8: { words: 1, integer: true, byte: true, min: -0x80, max: 0x7F },
  uint8: { words: 1, integer: true, byte: true, min: 0, max: 0xFF }
});

/** The two bytes of a register an 8-bit value may sit in: high is the first on the wire */
const BYTES = Object.freeze(['high', 'low']);

/** The four common orders by their letters, for editors and configs */
const ORDERS = Object.freeze({
  ABCD: { wordOrder: 'big', byteOrder: 'big' },
  CDAB: { wordOrder: 'little', byteOrder: 'big' },
  BADC: { wordOrder: 'big', byteOrder: 'little' },
  DCBA: { wordOrder: 'little', byteOrder: 'little' }
});

const FLOAT32_MAX = 3.4028234663852886e38;

/**
 * A value for an error message. JSON.stringify throws on a bigint (and on an object holding one),
 * which turned a bad option such as `count: 2n` into a TypeError instead of NINES_ERR_INVALID_ARG.
 * @param {*} v
 * @returns {string}
 */
function show (v) {
  if (typeof v === 'bigint') return `${v}n`;
  // JSON.stringify writes Infinity and NaN as null, which hid what was sent ("got null")
  if (typeof v === 'number') return String(v);
  try {
    const text = JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? `${x}n` : x));
    return text === undefined ? String(v) : text;
  } catch {
    return Object.prototype.toString.call(v);
  }
}

/**
 * String(v) or Number(v), or `otherwise` when v cannot become one: an object such as
 * `{"toString": ""}` (valid JSON, so possible in a msg) made String and Number throw a TypeError.
 * @template T
 * @param {(v: *) => T} convert String or Number
 * @param {*} v
 * @param {T} otherwise
 * @returns {T}
 */
function primitive (convert, v, otherwise) {
  try {
    return convert(v);
  } catch {
    return otherwise;
  }
}

/**
 * Whether v names one of TYPES. Only strings are looked up: an object key is converted first,
 * and `{"toString": false}` made that conversion throw a TypeError.
 * @param {*} v
 * @returns {boolean}
 */
function isType (v) {
  return typeof v === 'string' && Object.prototype.hasOwnProperty.call(TYPES, v);
}

function fail (message, details) {
  throw new NinesError('NINES_ERR_INVALID_ARG', message, details);
}

/** A value to encode that its type cannot hold: nothing is written. */
function failValue (message, details) {
  throw new NinesError('NINES_ERR_INVALID_VALUE', message, details);
}

/** How far (relative) a raw value may sit from a whole number and still be taken as that number */
const WHOLE_TOLERANCE = 1e-9;

/**
 * Checks and completes decode/encode options.
 * @param {object} [opts]
 * @returns {{type: string, wordOrder: string, byteOrder: string, scale: number, offset: number, count?: number}}
 */
function normalizeOptions (opts = {}) {
  if (opts === null || typeof opts !== 'object') fail(`decode options must be an object; got ${show(opts)}`, { field: 'options' });
  const type = opts.type === undefined ? 'uint16' : opts.type;
  if (!isType(type)) {
    fail(`type must be one of ${Object.keys(TYPES).join(', ')}; got ${show(type)}`, { field: 'type', value: type });
  }
  let { wordOrder = 'big', byteOrder = 'big' } = opts;
  if (opts.order !== undefined) {
    const o = ORDERS[primitive(String, opts.order, '').toUpperCase()];
    if (!o) fail(`order must be one of ${Object.keys(ORDERS).join(', ')}; got ${show(opts.order)}`, { field: 'order', value: opts.order });
    ({ wordOrder, byteOrder } = o);
  }
  for (const [field, v] of [['wordOrder', wordOrder], ['byteOrder', byteOrder]]) {
    if (v !== 'big' && v !== 'little') fail(`${field} must be "big" or "little"; got ${show(v)}`, { field, value: v });
  }
  const scale = opts.scale === undefined || opts.scale === '' ? 1 : primitive(Number, opts.scale, NaN);
  const offset = opts.offset === undefined || opts.offset === '' ? 0 : primitive(Number, opts.offset, NaN);
  if (!Number.isFinite(scale) || scale === 0) fail(`scale must be a finite number other than 0; got ${show(opts.scale)}`, { field: 'scale', value: opts.scale });
  if (!Number.isFinite(offset)) fail(`offset must be a finite number; got ${show(opts.offset)}`, { field: 'offset', value: opts.offset });
  const out = { type, wordOrder, byteOrder, scale, offset };
  if (TYPES[type].byte) {
    if (!BYTES.includes(opts.byte)) fail(`byte must be "high" or "low" for ${type} (which byte of the register holds it); got ${show(opts.byte)}`, { field: 'byte', value: opts.byte });
    out.byte = opts.byte;
  } else if (opts.byte !== undefined && opts.byte !== null) {
    fail(`byte is only used with int8 and uint8; got ${show(opts.byte)} for ${type}`, { field: 'byte', value: opts.byte });
  }
  if (opts.count !== undefined && opts.count !== null && opts.count !== '') {
    const count = primitive(Number, opts.count, NaN);
    if (!Number.isInteger(count) || count < 1) fail(`count must be a positive integer; got ${show(opts.count)}`, { field: 'count', value: opts.count });
    out.count = count;
  }
  return out;
}

/**
 * Registers needed to hold `count` values of `type` (for a read's quantity).
 * @param {string} type one of TYPES
 * @param {number} [count=1] values (characters for string, bits for bool)
 * @returns {number} registers
 */
function registersFor (type, count = 1) {
  const t = isType(type) ? TYPES[type] : undefined;
  if (!t) fail(`type must be one of ${Object.keys(TYPES).join(', ')}; got ${show(type)}`, { field: 'type', value: type });
  if (!Number.isInteger(count) || count < 1) fail(`count must be a positive integer; got ${show(count)}`, { field: 'count', value: count });
  if (t.bitsPerWord) return Math.ceil(count / t.bitsPerWord);
  if (t.charsPerWord) return Math.ceil(count / t.charsPerWord);
  return count * t.words;
}

/** Turns the input into a Buffer of big-endian register bytes. */
function toBytes (words) {
  if (Buffer.isBuffer(words) || words instanceof Uint8Array) {
    if (words.length % 2 !== 0) fail(`a register buffer must have an even length; got ${words.length} bytes`, { field: 'words', length: words.length });
    return Buffer.from(words.buffer, words.byteOffset, words.length);
  }
  if (!Array.isArray(words)) fail(`registers must be an array of 0-65535 integers or a Buffer; got ${typeof words}`, { field: 'words' });
  const buf = Buffer.alloc(words.length * 2);
  words.forEach((w, i) => {
    if (!Number.isInteger(w) || w < 0 || w > 0xFFFF) fail(`register ${i} must be an integer 0-65535; got ${show(w)}`, { field: `words[${i}]`, value: w });
    buf.writeUInt16BE(w, i * 2);
  });
  return buf;
}

/** The bytes of one value in big-endian order, after applying the orders. */
function ordered (bytes, start, nWords, { wordOrder, byteOrder }) {
  const out = Buffer.alloc(nWords * 2);
  for (let i = 0; i < nWords; i++) {
    const src = start + 2 * (wordOrder === 'little' ? nWords - 1 - i : i);
    const hi = bytes[src];
    const lo = bytes[src + 1];
    out[2 * i] = byteOrder === 'little' ? lo : hi;
    out[2 * i + 1] = byteOrder === 'little' ? hi : lo;
  }
  return out;
}

function readRaw (b, type) {
  switch (type) {
    case 'int16': return b.readInt16BE(0);
    case 'uint16': return b.readUInt16BE(0);
    case 'int32': return b.readInt32BE(0);
    case 'uint32': return b.readUInt32BE(0);
    case 'float32': return b.readFloatBE(0);
    case 'int64': return b.readBigInt64BE(0);
    case 'uint64': return b.readBigUInt64BE(0);
    case 'float64': return b.readDoubleBE(0);
    case 'float16': return halfToNumber(b.readUInt16BE(0));
    case 'bcd': return readBcd(b, 4);
    case 'lbcd': return readBcd(b, 8);
  }
  /* c8 ignore next */
  throw new Error(`unreachable type ${type}`);
}

/**
 * The raw value of one value of a numeric type (not bool or string) that starts at bytes[byteOffset],
 * before scale and offset: NaN or ±Infinity as a float holds them, NaN for a BCD register with a
 * nibble above 9 (quality.js says what each means).
 * @param {Buffer} bytes register bytes, big-endian as on the wire
 * @param {number} byteOffset where the value's first register starts
 * @param {{type: string, wordOrder: string, byteOrder: string, byte?: string}} o options from
 *   normalizeOptions, or a checked tag
 * @returns {number|bigint}
 */
function decodeRaw (bytes, byteOffset, o) {
  const t = TYPES[o.type];
  if (t.byte) {
    // the byte as on the wire: `byte` names it, so the byte order does not apply
    const v = bytes[byteOffset + (o.byte === 'high' ? 0 : 1)];
    return o.type === 'int8' ? (v << 24) >> 24 : v;
  }
  return readRaw(ordered(bytes, byteOffset, t.words, o), o.type);
}

/**
 * Decodes one value of a numeric type (not bool or string) that starts at bytes[byteOffset].
 * @param {Buffer} bytes register bytes, big-endian as on the wire
 * @param {number} byteOffset where the value's first register starts
 * @param {{type: string, wordOrder: string, byteOrder: string, scale: number, offset: number, byte?: string}} o
 *   options from normalizeOptions
 * @returns {number|bigint}
 */
function decodeOne (bytes, byteOffset, o) {
  return engineeringValue(decodeRaw(bytes, byteOffset, o), o.type, o.scale, o.offset);
}

/**
 * Decodes registers into typed values.
 *
 * Numeric types return an array of numbers (64-bit integers beyond ±2^53 come as BigInt, so no
 * digit is lost; with a scale or offset they become numbers). `bool` returns one boolean per bit,
 * bit 0 of the first register first. `string` returns one string: two characters per register,
 * high byte first (byteOrder little swaps them: low-high), NULs and spaces that pad it at either
 * end removed. `int8`/`uint8` give one value per register, from the byte `byte` names. A float
 * that is NaN or ±Infinity and a BCD register with a nibble above 9 (NaN) are returned as they are:
 * tags turn them into a quality code (quality.js).
 *
 * @param {number[]|Buffer} words registers as uint16 numbers, or their raw big-endian bytes
 * @param {object} [opts]
 * @param {string} [opts.type='uint16'] int16|uint16|int32|uint32|float32|int64|uint64|float64|bool|string|
 *   float16|bcd|lbcd|int8|uint8
 * @param {'high'|'low'} [opts.byte] for int8 and uint8: which byte of the register
 * @param {'big'|'little'} [opts.wordOrder='big'] order of the registers of one value
 * @param {'big'|'little'} [opts.byteOrder='big'] order of the bytes inside a register
 * @param {string} [opts.order] ABCD|CDAB|BADC|DCBA, instead of wordOrder and byteOrder
 * @param {number} [opts.scale=1] multiplier applied to each raw value
 * @param {number} [opts.offset=0] added after scaling; the value is rounded to the decimals the raw
 *   value, scale and offset carry, and a float32 to its shortest decimal (rounding.js)
 * @param {number} [opts.count] values (bits for bool, characters for string); default: all that fit
 * @returns {Array<number|bigint|boolean>|string}
 */
function decodeRegisters (words, opts) {
  const o = normalizeOptions(opts);
  const bytes = toBytes(words);
  const nWords = bytes.length / 2;
  const t = TYPES[o.type];

  if (o.type === 'string') {
    const chars = o.count === undefined ? nWords * 2 : o.count;
    if (chars > nWords * 2) fail(`${chars} characters need ${registersFor('string', chars)} registers; got ${nWords}`, { field: 'count', value: chars });
    const b = ordered(bytes, 0, nWords, { wordOrder: 'big', byteOrder: o.byteOrder }).subarray(0, chars);
    // padding on either side: devices pad with NULs or spaces, some right-aligned
    return b.toString('latin1').replace(/^[\0 ]+|[\0 ]+$/g, '');
  }

  if (o.type === 'bool') {
    const bits = o.count === undefined ? nWords * 16 : o.count;
    if (bits > nWords * 16) fail(`${bits} bits need ${registersFor('bool', bits)} registers; got ${nWords}`, { field: 'count', value: bits });
    const out = new Array(bits);
    for (let i = 0; i < bits; i++) {
      const w = (bytes[2 * (i >> 4)] << 8) | bytes[2 * (i >> 4) + 1];
      out[i] = ((w >> (i & 15)) & 1) === 1;
    }
    return out;
  }

  let count = o.count;
  if (count === undefined) {
    if (nWords % t.words !== 0) {
      fail(`${nWords} registers do not hold a whole number of ${o.type} values (${t.words} registers each)`, { field: 'words', type: o.type, registers: nWords });
    }
    count = nWords / t.words;
  } else if (count * t.words > nWords) {
    fail(`${count} ${o.type} values need ${count * t.words} registers; got ${nWords}`, { field: 'count', value: count });
  }
  const out = new Array(count);
  for (let i = 0; i < count; i++) out[i] = decodeOne(bytes, i * t.words * 2, o);
  return out;
}

/**
 * The one rule for a bit to write (a coil, a bool, an ASCII output line): true or false, or the
 * numbers 1 and 0. Text ("on", "true", "1") and other numbers are refused, not guessed at.
 * @param {unknown} v
 * @param {string} what names the value in the message ("value 0", "msg.payload")
 * @param {() => string} [shown] how the value was sent (its raw JSON text), for the message
 * @returns {boolean}
 * @throws {NinesError} NINES_ERR_INVALID_VALUE
 */
function toBit (v, what, shown) {
  if (v === true || v === 1) return true;
  if (v === false || v === 0) return false;
  const got = shown ? shown() : v === undefined ? 'nothing' : show(v);
  return failValue(`${what} must be true or false (or 1 or 0); got ${got}`, { field: what, value: got, type: 'bool' });
}

/** Decimal integer text, for 64-bit values beyond what a JSON number carries exactly: no sign but -, no spaces, no exponent */
const DECIMAL_INTEGER = /^-?(0|[1-9][0-9]*)$/;

/**
 * Turns one engineering value into the raw value of `type`, checked. Strict: a number must be a
 * number (a finite one), never a boolean or text such as "0x10" or "1e3" that Number() would
 * coerce; the one exception is decimal integer text for int64 and uint64, as JSON carries no
 * integer beyond 2^53 exactly. A float32 takes the nearest float32: a value that is not 0 but
 * would round to 0, or that would round to Infinity, is refused. `o.shown()`, when set, says how
 * the value was sent (its raw JSON text), for the message.
 */
function toRaw (v, i, o) {
  const t = TYPES[o.type];
  const shown = () => (typeof o.shown === 'function' ? o.shown() : show(v));
  if (t.big && typeof v === 'string' && DECIMAL_INTEGER.test(v)) v = BigInt(v);
  if (t.big && typeof v === 'bigint') {
    if (o.scale !== 1 || o.offset !== 0) v = Number(v);
  } else if (typeof v !== 'number' || !Number.isFinite(v)) {
    const what = t.big ? 'a finite JSON number or decimal integer text' : 'a finite number';
    failValue(`values[${i}] must be ${what} for ${o.type}; got ${shown()}`, { field: `values[${i}]`, value: shown(), type: o.type });
  }
  let raw = typeof v === 'bigint' ? v : (v - o.offset) / o.scale;
  if (t.integer) {
    if (typeof raw === 'number') {
      const whole = Math.round(raw);
      // the tolerance covers (value - offset) / scale's own error too: a small scale beside a large
      // offset (8192.9996 at 0.0001 + 8193) magnifies the subtraction's last bit
      const slack = Math.max(WHOLE_TOLERANCE * Math.max(1, Math.abs(raw)), 4 * Number.EPSILON * (Math.abs(v) + Math.abs(o.offset)) / Math.abs(o.scale));
      if (Math.abs(raw - whole) > slack) {
        const how = o.scale === 1 && o.offset === 0 ? '' : ` (raw = (value - ${o.offset}) / ${o.scale})`;
        failValue(`${shown()} (values[${i}]) is not representable as ${o.type}: raw ${raw}${how} is not a whole number, and it is not rounded`,
          { field: `values[${i}]`, value: shown(), type: o.type, raw });
      }
      raw = whole;
      if (t.big) {
        if (!Number.isSafeInteger(raw)) failValue(`${shown()} (values[${i}]) is not exact as a number; pass a BigInt (or decimal integer text) for ${o.type} values beyond ±2^53`, { field: `values[${i}]`, value: shown(), type: o.type });
        raw = BigInt(raw);
      }
    }
    if (raw < t.min || raw > t.max) {
      failValue(`${shown()} (values[${i}]) gives raw ${String(raw)}, outside ${o.type} range ${String(t.min)} to ${String(t.max)}`, { field: `values[${i}]`, value: shown(), type: o.type });
    }
  } else if (o.type === 'float32' || o.type === 'float16') {
    const half = o.type === 'float16';
    const stored = half ? f16round(raw) : Math.fround(raw);
    if (!Number.isFinite(stored)) failValue(`${shown()} (values[${i}]) is outside the ${o.type} range (±${half ? FLOAT16_MAX : FLOAT32_MAX}): it would be stored as Infinity`, { field: `values[${i}]`, value: shown(), type: o.type });
    if (stored === 0 && raw !== 0) failValue(`${shown()} (values[${i}]) is too small for ${o.type} (below about ${half ? '6e-8' : '1.4e-45'}): it would be stored as 0`, { field: `values[${i}]`, value: shown(), type: o.type });
  } else if (!Number.isFinite(raw)) {
    failValue(`${shown()} (values[${i}]) gives raw ${raw} after scale and offset, which float64 cannot hold`, { field: `values[${i}]`, value: shown(), type: o.type });
  }
  return raw;
}

function writeRaw (b, type, raw) {
  switch (type) {
    case 'int16': return b.writeInt16BE(raw, 0);
    case 'uint16': return b.writeUInt16BE(raw, 0);
    case 'int32': return b.writeInt32BE(raw, 0);
    case 'uint32': return b.writeUInt32BE(raw, 0);
    case 'float32': return b.writeFloatBE(raw, 0);
    case 'int64': return b.writeBigInt64BE(raw, 0);
    case 'uint64': return b.writeBigUInt64BE(raw, 0);
    case 'float64': return b.writeDoubleBE(raw, 0);
    case 'float16': return b.writeUInt16BE(numberToHalf(raw), 0);
    case 'bcd': return writeBcd(b, raw, 4);
    case 'lbcd': return writeBcd(b, raw, 8);
  }
}

/**
 * The registers of one checked raw value: an 8-bit value in its byte (the other byte 0: a write of
 * the whole register would clear it, so tags of one byte are read-only), the rest by their orders.
 * @param {Buffer} b scratch of the type's registers
 * @param {number|bigint} raw from toRaw
 * @param {object} o normalized options (or a checked tag)
 * @returns {number[]}
 */
function rawWords (b, raw, o) {
  const t = TYPES[o.type];
  if (t.byte) return [o.byte === 'high' ? (raw & 0xFF) << 8 : raw & 0xFF];
  writeRaw(b, o.type, raw);
  return unorder(b, t.words, o);
}

/** Puts big-endian value bytes into register order (the inverse of `ordered`). */
function unorder (valueBytes, nWords, { wordOrder, byteOrder }) {
  const words = new Array(nWords);
  for (let i = 0; i < nWords; i++) {
    const src = 2 * (wordOrder === 'little' ? nWords - 1 - i : i);
    const hi = valueBytes[src];
    const lo = valueBytes[src + 1];
    words[i] = byteOrder === 'little' ? (lo << 8) | hi : (hi << 8) | lo;
  }
  return words;
}

/**
 * Encodes typed values into registers for FC 6 / FC 16: the inverse of decodeRegisters.
 * @param {number|bigint|boolean|string|Array<number|bigint|boolean>} values one value or an array;
 *   a string for type string (padded with NUL to `count` characters, or to a whole register)
 * @param {object} [opts] as decodeRegisters (type, wordOrder, byteOrder, order, scale, offset, count)
 * @returns {number[]} uint16 registers
 */
function encodeValues (values, opts) {
  const o = normalizeOptions(opts);
  const t = TYPES[o.type];

  if (o.type === 'string') {
    if (typeof values !== 'string') fail(`a string value is needed for type string; got ${typeof values}`, { field: 'values' });
    // latin1 keeps one byte per character; anything wider cannot be stored faithfully
    if ([...values].some((ch) => ch.charCodeAt(0) > 0xFF)) failValue('string has characters outside Latin-1, which do not fit one byte each', { field: 'values', type: 'string' });
    const chars = o.count === undefined ? values.length : o.count;
    if (values.length > chars) failValue(`string of ${values.length} characters is longer than count ${chars}`, { field: 'values', value: values, type: 'string' });
    const b = Buffer.alloc(registersFor('string', Math.max(chars, 1)) * 2);
    b.write(values, 'latin1');
    return unorder(b, b.length / 2, { wordOrder: 'big', byteOrder: o.byteOrder });
  }

  const list = Array.isArray(values) ? values : [values];
  if (list.length === 0) fail('no values to encode', { field: 'values' });
  if (o.count !== undefined && list.length !== o.count) fail(`expected ${o.count} values; got ${list.length}`, { field: 'values', count: list.length });

  if (o.type === 'bool') {
    const words = new Array(registersFor('bool', list.length)).fill(0);
    list.forEach((v, i) => {
      if (toBit(v, `value ${i}`)) words[i >> 4] |= 1 << (i & 15);
    });
    return words;
  }

  const out = [];
  const b = Buffer.alloc(t.words * 2);
  list.forEach((v, i) => {
    out.push(...rawWords(b, toRaw(v, i, o), o));
  });
  return out;
}

/**
 * Encodes one value of a numeric type (not bool or string) into its registers.
 * @param {number|bigint|string|boolean} value engineering value
 * @param {object} o options from normalizeOptions
 * @returns {number[]} uint16 registers
 * @throws {NinesError} NINES_ERR_INVALID_VALUE when the type cannot hold the value
 */
function encodeOne (value, o) {
  const t = TYPES[o.type];
  return rawWords(Buffer.alloc(t.words * 2), toRaw(value, 0, o), o);
}

module.exports = { decodeRegisters, decodeOne, decodeRaw, encodeValues, encodeOne, toBit, show, registersFor, normalizeOptions, TYPES, ORDERS, BYTES };
