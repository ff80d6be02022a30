'use strict';

/**
 * Tags: named, typed values of a device, as a plant engineer writes them ("boiler temperature,
 * float32 at holding register 100, word order CDAB, × 0.1 °C"). This is the one place a tag list is
 * checked, whoever wrote it: the gateway YAML, a CSV tag sheet (csv.js), the Node-RED editor. Every
 * problem is reported at once with its field path (`[3].address`); nothing is sent before the whole
 * list passes. The result is plain data (it crosses to worker threads with postMessage).
 *
 * A tag:
 *   { name: boiler_temp, table: holding, address: 100, type: float32, order: CDAB, scale: 0.1,
 *     offset: 0, unit: "°C", deadband: 0.2, readOnly: false, description: "…" }
 *
 * Tables name where the value lives, per protocol of the device:
 * - Modbus: `coil` (FC1, writable), `discrete` (FC2), `holding` (FC3, writable), `input` (FC4);
 *   `address` is the 0-based protocol address, as on the wire (no 4xxxx offsets).
 * - ASCII ED series: `input` and `output` (digital lines 0-7, ED-588 `@AA`), `counter` (0-7, `#AAN`),
 *   `analog` (analog output channel 0-3 of an ED-560, read back with `$AA6n`, in volts).
 *
 * Types: bool (bit tables and digital lines), bit (one bit of a register: `bit: 0-15`), bits (an
 * unsigned field of several bits of a register: `bit: 4-6`), int16, uint16, int32, uint32, float32,
 * int64, uint64, float64, float16, bcd (4 digits), lbcd (8 digits, two registers), int8 and uint8
 * (one byte of a register: `byte: high|low`), string (`length` registers, two Latin-1 characters
 * each). IEC 61131 names are accepted too (INT, UINT, DINT, UDINT, LINT, ULINT, REAL, LREAL, WORD,
 * DWORD, BOOL, SINT, USINT). Word and byte order: `order: ABCD|CDAB|BADC|DCBA`, or `wordOrder` and
 * `byteOrder` (values/registers.js explains the letters). Values are `raw × scale + offset`; the
 * deadband is in those engineering units. An integer tag may map raw values to labels (`enum`,
 * tags/enum.js); a numeric tag may take a power-of-ten exponent from an int16 tag of the same list
 * (`scaleFrom`, SunSpec's scale factors): value = raw × scale × 10^exponent + offset.
 *
 * Overlap: two value tags may not share a register or a bit (a typo in an address, almost always);
 * tags of a part of a register (bit, bits, int8, uint8) may sit on a register another tag reads too
 * (a status word and its named bits), but two of them may not share a bit.
 */

const { NinesError } = require('../base/errors');
const { TYPES, ORDERS, BYTES } = require('../values/registers');
const { checkEnum } = require('./enum');
const C = require('../base/constants');
// a device's read limits and their defaults have one owner, used here when no device names its own
const DL = require('../devices/limits');

const DEFAULT_MAX_GAP = DL.MAX_GAP_DEFAULT;
/** Lists built by buildTags (not carried across threads; a worker trusts the spec it is given) */
const BUILT = new WeakMap();
/** Tags built by buildTags, with the limits they were checked under */
const BUILT_TAG = new WeakMap();
/** The most tags one list may hold (a poll reads them all; 10,000 is far beyond one device's map) */
const MAX_TAGS = 10000;
const NAME_RE = new RegExp(`^${C.NOT_RESERVED}[A-Za-z_][A-Za-z0-9_.\\-/]{0,127}$`);
const MAX_UNIT_LENGTH = 32;
const MAX_DESCRIPTION_LENGTH = 256;
const KEYS = Object.freeze(['name', 'table', 'address', 'type', 'bit', 'length', 'order', 'wordOrder', 'byteOrder',
  'scale', 'offset', 'unit', 'deadband', 'readOnly', 'description', 'byte', 'enum', 'scaleFrom']);

/**
 * Tables per protocol: what they hold, which function code reads them, and how they are written.
 * `kind` bits: one bit per address; registers: 16 bits per address; line/counter/analog: ASCII.
 */
const MODBUS_TABLES = Object.freeze({
  coil: { kind: 'bits', fc: 1, writable: true, aliases: ['coils', 'co', '0x'] },
  discrete: { kind: 'bits', fc: 2, writable: false, aliases: ['discrete-input', 'discrete-inputs', 'discreteinput', 'di', '1x', 'input-status'] },
  holding: { kind: 'registers', fc: 3, writable: true, aliases: ['holding-register', 'holding-registers', 'holdingregister', 'hr', '4x'] },
  input: { kind: 'registers', fc: 4, writable: false, aliases: ['input-register', 'input-registers', 'inputregister', 'ir', '3x'] }
});
const ASCII_TABLES = Object.freeze({
  input: { kind: 'line', max: 7, type: 'bool', writable: false, aliases: ['inputs', 'di'] },
  output: { kind: 'line', max: 7, type: 'bool', writable: true, aliases: ['outputs', 'do'] },
  counter: { kind: 'counter', max: 7, type: 'uint32', writable: false, aliases: ['counters'] },
  analog: { kind: 'analog', max: 3, type: 'float64', writable: true, aliases: ['ao', 'analog-output'] }
});

/** IEC 61131-3 elementary types and common spellings → our type names */
const TYPE_ALIASES = Object.freeze({
  boolean: 'bool',
  int: 'int16',
  uint: 'uint16',
  word: 'uint16',
  dint: 'int32',
  udint: 'uint32',
  dword: 'uint32',
  lint: 'int64',
  ulint: 'uint64',
  real: 'float32',
  float: 'float32',
  lreal: 'float64',
  double: 'float64',
  half: 'float16',
  sint: 'int8',
  usint: 'uint8'
});

/** Types a register tag may have */
const REGISTER_TYPES = Object.freeze(['bit', 'int16', 'uint16', 'int32', 'uint32', 'float32', 'int64', 'uint64', 'float64', 'string',
  'bits', 'float16', 'bcd', 'lbcd', 'int8', 'uint8']);
const NUMERIC_TYPES = Object.freeze(['int16', 'uint16', 'int32', 'uint32', 'float32', 'int64', 'uint64', 'float64', 'float16', 'bcd', 'lbcd', 'int8', 'uint8']);
/** Types that read a part of one register: read-only (a write would rewrite the rest), and may share a register with a value tag */
const PART_TYPES = Object.freeze(['bit', 'bits', 'int8', 'uint8']);
/** Types whose raw values an enum may label */
const ENUM_TYPES = Object.freeze(['int16', 'uint16', 'int32', 'uint32', 'bcd', 'lbcd', 'int8', 'uint8', 'bits']);
/** The fields an enum tag takes none of: its labels name raw values */
const NOT_WITH_ENUM = Object.freeze(['scale', 'offset', 'deadband', 'scaleFrom']);
const BIT_RANGE = /^\s*(\d{1,2})\s*-\s*(\d{1,2})\s*$/;

/**
 * @typedef {object} Tag
 * @property {string} name
 * @property {string} table coil|discrete|holding|input (Modbus); input|output|counter|analog (ASCII)
 * @property {number} address 0-based register or bit address; ASCII: the line or channel
 * @property {string} type bool|bit|bits|int16|uint16|int32|uint32|float32|int64|uint64|float64|string|
 *   float16|bcd|lbcd|int8|uint8
 * @property {number|null} bit 0-15 for type bit; the lowest bit of the field for type bits
 * @property {number} [width] type bits: how many bits, 1-16
 * @property {'high'|'low'} [byte] int8 and uint8: which byte of the register
 * @property {Record<string, string>} [enum] raw value (decimal text) → label; the value published is the label
 * @property {string} [scaleFrom] the name of the int16 tag of the same list whose value is this tag's power-of-ten exponent
 * @property {number} span registers (register tables) or bits (bit tables) the tag reads; 1 on ASCII
 * @property {'big'|'little'} wordOrder
 * @property {'big'|'little'} byteOrder
 * @property {number} scale
 * @property {number} offset
 * @property {string|null} unit
 * @property {number|null} deadband engineering units; null: the job's
 * @property {boolean} readOnly never written (always true on read-only tables)
 * @property {string|null} description
 */

/**
 * @typedef {object} TagProblem
 * @property {Array<string|number>} path segments below the list: [3, 'address']
 * @property {*} value
 * @property {string} rule what the value must be
 */

/**
 * @typedef {object} TagContext
 * @property {'ascii'|'modbus+tcp'|'modbus+rtu'|'modbus+rtutcp'} protocol the device's
 * @property {number} [maxRegistersPerRequest=125] the device's largest register read
 * @property {number} [maxBitsPerRequest=2000] the device's largest bit read
 * @property {0|1} [addressBase=0] 1: tag addresses count from 1, as on data sheets that number registers from 1
 * @property {string} [order='ABCD'] the device's word and byte order, for tags that give none
 */

/**
 * Checks a tag list and normalizes it, collecting every problem.
 * @param {unknown} list array of tag objects
 * @param {TagContext} ctx
 * @returns {{tags: Tag[], problems: TagProblem[]}} tags holds the tags that passed
 */
function checkTags (list, ctx) {
  const problems = [];
  const add = (path, value, rule) => problems.push({ path, value, rule });
  if (!Array.isArray(list)) {
    add([], list, 'must be a list of tags such as { name: boiler_temp, table: holding, address: 100, type: float32 }');
    return { tags: [], problems };
  }
  if (list.length === 0) add([], list, 'must hold at least one tag');
  if (list.length > MAX_TAGS) {
    add([], `${list.length} tags`, `must hold at most ${MAX_TAGS} tags`);
    return { tags: [], problems };
  }
  const modbus = ctx.protocol !== 'ascii';
  const limits = {
    registers: ctx.maxRegistersPerRequest === undefined ? DL.MAX_REGISTERS_PER_REQUEST : ctx.maxRegistersPerRequest,
    bits: ctx.maxBitsPerRequest === undefined ? DL.MAX_BITS_PER_REQUEST : ctx.maxBitsPerRequest,
    addressBase: ctx.addressBase === 1 ? 1 : 0,
    // the device's word and byte order, for tags that name none
    order: ctx.order !== undefined && ORDERS[ctx.order] ? ORDERS[ctx.order] : ORDERS.ABCD
  };
  const tags = [];
  const at = [];
  list.forEach((raw, i) => {
    const before = problems.length;
    const tag = checkTag(raw, i, modbus, limits, add);
    if (tag === null || problems.length !== before) return;
    tags.push(tag);
    at.push(i);
  });
  const clashes = tagConflicts(tags).concat(scaleProblems(tags));
  for (const c of clashes) add([at[c.at], c.field], c.value, c.rule);
  const bad = new Set(clashes.map((c) => c.at));
  const passed = tags.filter((_, k) => !bad.has(k));
  const key = contextKey(ctx);
  for (const t of passed) BUILT_TAG.set(t, key);
  return { tags: passed, problems };
}

/**
 * A scaleFrom must name an int16 tag of the same list with nothing of its own applied (its value is
 * the exponent as the register holds it): the list is what one poll reads, so both are read together.
 * @param {Tag[]} tags
 * @returns {Array<{at: number, field: string, value: unknown, rule: string}>}
 */
function scaleProblems (tags) {
  const out = [];
  const byName = new Map(tags.map((t) => [t.name, t]));
  tags.forEach((t, k) => {
    if (t.scaleFrom === undefined) return;
    const s = byName.get(t.scaleFrom);
    let rule = null;
    if (s === undefined) rule = 'names no tag of this list: the scale register must be a tag of the same list (or group), so both are read in the same poll';
    else if (s === t) rule = 'names the tag itself';
    else if (s.type !== 'int16' || s.scale !== 1 || s.offset !== 0 || s.enum !== undefined || s.scaleFrom !== undefined) {
      rule = `names tag "${s.name}", which must be an int16 without scale, offset, enum or scaleFrom (its value is the power-of-ten exponent)`;
    }
    if (rule !== null) out.push({ at: k, field: 'scaleFrom', value: t.scaleFrom, rule });
  });
  return out;
}

/** The limits a tag is checked under, as one string */
function contextKey (ctx) {
  return `${ctx.protocol}/${ctx.maxRegistersPerRequest}/${ctx.maxBitsPerRequest}/${ctx.addressBase}/${ctx.order}`;
}

/**
 * What may not hold between tags of one device map: two tags of one name, two value tags on one
 * register or bit, two bit tags on the same bit of a register. For lists checked one by one and then
 * read together (a device's groups, a job's groups and own tags).
 * @param {Tag[]} tags checked tags
 * @returns {Array<{at: number, field: string, value: unknown, rule: string}>} at: position in tags of
 *   the later tag of each clash
 */
function tagConflicts (tags) {
  const out = [];
  const names = new Map();
  tags.forEach((t, k) => {
    if (names.has(t.name)) out.push({ at: k, field: 'name', value: t.name, rule: 'is the name of an earlier tag too; tag names must be unique' });
    else names.set(t.name, k);
  });
  checkOverlaps(tags, (at, field, value, rule) => out.push({ at, field, value, rule }));
  return out;
}

/**
 * Checks a tag list and normalizes it.
 * @param {unknown} list
 * @param {TagContext} ctx
 * @param {string} [where='tags'] the list's own path, for messages (`jobs[2].tags`)
 * @returns {Tag[]}
 * @throws {NinesError} NINES_ERR_INVALID_ARG listing every problem; details.problems has them all,
 *   details.field the first one's path
 */
function buildTags (list, ctx, where = 'tags') {
  // what this module built for the same device limits is taken as it is: checked once, at the edge.
  // A list joined from such tags (a job reading several groups) is only checked for clashes.
  const key = contextKey(ctx);
  if (BUILT.get(list) === key) return list;
  let tags;
  let problems;
  if (Array.isArray(list) && list.length !== 0 && list.every((t) => BUILT_TAG.get(t) === key)) {
    tags = list.slice();
    problems = tagConflicts(tags).map((c) => ({ path: [c.at, c.field], value: c.value, rule: c.rule }));
  } else {
    ({ tags, problems } = checkTags(list, ctx));
  }
  if (problems.length === 0) {
    BUILT.set(tags, key);
    return tags;
  }
  const lines = problems.map((p) => `${where}${formatPath(p.path)}: ${show(p.value)} ${p.rule}`);
  const first = `${where}${formatPath(problems[0].path)}`;
  throw new NinesError('NINES_ERR_INVALID_ARG',
    problems.length === 1 ? lines[0] : `${problems.length} problems in ${where}:\n  ${lines.join('\n  ')}`,
    { field: first, problems: problems.map((p) => ({ path: `${where}${formatPath(p.path)}`, value: jsonable(p.value), rule: p.rule })) });
}

/** @returns {Tag|null} */
function checkTag (raw, i, modbus, limits, add) {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    add([i], raw, 'must be a mapping such as { name: boiler_temp, table: holding, address: 100, type: float32 }');
    return null;
  }
  for (const key of Object.keys(raw)) {
    if (!KEYS.includes(key) && raw[key] !== undefined) add([i, key], raw[key], `is not a tag field (known: ${KEYS.join(', ')})`);
  }
  const name = raw.name;
  if (typeof name !== 'string' || !NAME_RE.test(name)) {
    add([i, 'name'], name, `must start with a letter or _ and hold 1-128 letters, digits, _ . - or /, and not be ${C.RESERVED_NAME}`);
  }
  const tables = modbus ? MODBUS_TABLES : ASCII_TABLES;
  // a Modicon reference from a data sheet ("40101": holding register 101, protocol address 100)
  const modicon = modbus ? parseModicon(raw.address) : null;
  let table = raw.table === undefined && modicon !== null ? modicon.table : resolveTable(raw.table, tables);
  if (table === null) {
    add([i, 'table'], raw.table, `must be one of ${Object.keys(tables).join(', ')} on ${modbus ? 'a Modbus' : 'an ASCII'} device${modbus ? ' (or left out with a Modicon address such as "40101")' : ''}`);
    return null;
  }
  if (modicon !== null && modicon.table !== table) {
    add([i, 'address'], raw.address, `is a Modicon reference to the ${modicon.table} table, but table says ${table}`);
    table = modicon.table;
  }
  const t = tables[table];
  const tag = {
    name,
    table,
    address: 0,
    type: '',
    bit: null,
    span: 1,
    wordOrder: limits.order.wordOrder,
    byteOrder: limits.order.byteOrder,
    scale: 1,
    offset: 0,
    unit: null,
    deadband: null,
    readOnly: !t.writable,
    description: null
  };
  tag.type = resolveType(raw.type, t, add, i);
  if (tag.type === null) return null;
  const maxAddress = t.kind === 'bits' || t.kind === 'registers' ? 65535 : t.max;
  // numbers count from the device's addressBase (1 for data sheets that start at 1)
  const base = modicon !== null || !(t.kind === 'bits' || t.kind === 'registers') ? 0 : limits.addressBase;
  const address = modicon !== null ? modicon.address : raw.address;
  if (!Number.isInteger(address) || address - base < 0 || address - base > maxAddress) {
    add([i, 'address'], raw.address, t.kind === 'bits' || t.kind === 'registers'
      ? (base === 0 ? 'must be an integer from 0 to 65535 (the 0-based protocol address), or a Modicon reference such as "40101"' : 'must be an integer from 1 to 65536 (the device counts addresses from 1: addressBase 1), or a Modicon reference such as "40101"')
      : `must be an integer from 0 to ${maxAddress} (the ${table === 'analog' ? 'channel' : table === 'counter' ? 'counter' : 'line'})`);
  } else {
    tag.address = address - base;
  }

  const takes = tagFields(t.kind, tag.type);
  if (takes.includes('bit')) {
    checkBit(raw, tag, add, i);
  } else if (raw.bit !== undefined) {
    add([i, 'bit'], raw.bit, 'is only used with type bit (or bits, a range such as 4-6)');
  }
  if (takes.includes('byte')) {
    const byte = typeof raw.byte === 'string' ? raw.byte.trim().toLowerCase() : raw.byte;
    if (!BYTES.includes(byte)) add([i, 'byte'], raw.byte, `must be high or low for type ${tag.type}: which byte of the register holds it (high is the first on the wire)`);
    else tag.byte = byte;
  } else if (raw.byte !== undefined) {
    add([i, 'byte'], raw.byte, 'is only used with type int8 or uint8');
  }
  if (takes.includes('length')) {
    if (!Number.isInteger(raw.length) || raw.length < 1 || raw.length > C.MODBUS_MAX_READ_REGISTERS) {
      add([i, 'length'], raw.length, `must be an integer from 1 to ${C.MODBUS_MAX_READ_REGISTERS} for type string (registers, two characters each)`);
    } else {
      tag.span = raw.length;
    }
  } else if (raw.length !== undefined) {
    add([i, 'length'], raw.length, 'is only used with type string');
  } else if (t.kind === 'registers' && !PART_TYPES.includes(tag.type)) {
    tag.span = TYPES[tag.type].words;
  }
  if (t.kind === 'registers' && tag.span > limits.registers) {
    add([i, tag.type === 'string' ? 'length' : 'type'], tag.type === 'string' ? raw.length : raw.type,
      `needs ${tag.span} registers, more than one request of this device reads (maxRegistersPerRequest ${limits.registers})`);
  }
  if ((t.kind === 'bits' || t.kind === 'registers') && tag.address + tag.span > 65536) {
    add([i, 'address'], raw.address, `leaves no room for ${tag.span} ${t.kind}: address + ${tag.span} must stay within 65536`);
  }

  checkOrder(raw, tag, takes.includes('order'), add, i);
  const numeric = takes.includes('scale');
  for (const key of ['scale', 'offset']) {
    if (raw[key] === undefined) continue;
    if (!numeric) add([i, key], raw[key], `applies to numeric tags only, not ${tag.type}`);
    else if (typeof raw[key] !== 'number' || !Number.isFinite(raw[key]) || (key === 'scale' && raw[key] === 0)) {
      add([i, key], raw[key], key === 'scale' ? 'must be a finite number other than 0' : 'must be a finite number');
    } else tag[key] = raw[key];
  }
  if (raw.deadband !== undefined) {
    if (!numeric) add([i, 'deadband'], raw.deadband, `applies to numeric tags only, not ${tag.type}: any change of a ${tag.type} is published`);
    else if (typeof raw.deadband !== 'number' || !Number.isFinite(raw.deadband) || raw.deadband < 0) add([i, 'deadband'], raw.deadband, 'must be a number ≥ 0 (engineering units)');
    else tag.deadband = raw.deadband;
  }
  checkEnumField(raw, tag, takes.includes('enum'), add, i);
  if (raw.scaleFrom !== undefined) {
    if (!takes.includes('scaleFrom')) add([i, 'scaleFrom'], raw.scaleFrom, `applies to numeric register tags only, not ${tag.type}`);
    else if (typeof raw.scaleFrom !== 'string' || !NAME_RE.test(raw.scaleFrom)) add([i, 'scaleFrom'], raw.scaleFrom, 'must be the name of an int16 tag of the same list');
    else tag.scaleFrom = raw.scaleFrom;
  }
  if (raw.unit !== undefined) {
    if (typeof raw.unit !== 'string' || raw.unit.length > MAX_UNIT_LENGTH) add([i, 'unit'], raw.unit, `must be a string of at most ${MAX_UNIT_LENGTH} characters`);
    else if (raw.unit !== '') tag.unit = raw.unit;
  }
  if (raw.description !== undefined) {
    if (typeof raw.description !== 'string' || raw.description.length > MAX_DESCRIPTION_LENGTH) add([i, 'description'], raw.description, `must be a string of at most ${MAX_DESCRIPTION_LENGTH} characters`);
    else if (raw.description !== '') tag.description = raw.description;
  }
  if (raw.readOnly !== undefined) {
    if (typeof raw.readOnly !== 'boolean') add([i, 'readOnly'], raw.readOnly, 'must be true or false');
    else if (!raw.readOnly && !t.writable) add([i, 'readOnly'], raw.readOnly, `cannot be false: ${table} is a read-only table`);
    else tag.readOnly = raw.readOnly;
  }
  // parts of a register (bit, bits, int8, uint8) are written with FC22 mask write, which changes
  // only their bits in the device (tags/write.js). A scaled-from tag's raw value depends on an
  // exponent read in a poll, which a write would have to read first
  if (tag.scaleFrom !== undefined) tag.readOnly = true;
  return tag;
}

/** `bit` of a bit tag (0-15) or a bits tag (a range "4-6", or one bit) */
function checkBit (raw, tag, add, i) {
  if (tag.type === 'bit') {
    if (!Number.isInteger(raw.bit) || raw.bit < 0 || raw.bit > 15) add([i, 'bit'], raw.bit, 'must be an integer from 0 to 15 for type bit (bit 0 is the least significant)');
    else tag.bit = raw.bit;
    return;
  }
  const m = typeof raw.bit === 'string' ? BIT_RANGE.exec(raw.bit) : null;
  const [lo, hi] = Number.isInteger(raw.bit) ? [raw.bit, raw.bit] : m !== null ? [Number(m[1]), Number(m[2])] : [-1, -1];
  if (lo < 0 || hi > 15 || lo > hi) {
    add([i, 'bit'], raw.bit, 'must be a range of bits such as "4-6" (lowest-highest, 0-15, bit 0 the least significant), or one bit 0-15, for type bits');
    return;
  }
  tag.bit = lo;
  tag.width = hi - lo + 1;
}

/** `enum`: labels of an integer tag's raw values, with none of the fields that change the raw value */
function checkEnumField (raw, tag, takesEnum, add, i) {
  if (raw.enum === undefined) return;
  if (!takesEnum) {
    add([i, 'enum'], raw.enum, `applies to integer register tags only (${ENUM_TYPES.join(', ')}), not ${tag.type}`);
    return;
  }
  const with_ = NOT_WITH_ENUM.filter((k) => raw[k] !== undefined);
  if (with_.length !== 0) add([i, with_[0]], raw[with_[0]], 'cannot be combined with enum: its labels name raw values');
  const [min, max] = tag.type === 'bits' ? [0, 2 ** tag.width - 1] : [TYPES[tag.type].min, TYPES[tag.type].max];
  const labels = checkEnum(raw.enum, min, max, (path, value, rule) => add([i, 'enum', ...path], value, rule));
  if (labels !== null) tag.enum = labels;
}

/** The optional fields of a tag of each kind: what tagFields answers, by its one rule */
const ORDER_FIELDS = Object.freeze(['order', 'wordOrder', 'byteOrder']);
const NUMBER_FIELDS = Object.freeze(['scale', 'offset', 'deadband']);

/**
 * The optional fields a tag takes, by its table's kind and its (canonical) type: an order for a
 * register value, `bit` for type bit, `length` for a string, scale, offset and deadband for a number.
 * checkTag refuses the others, and the editor shows these (tag-admin.js serves them), so the two
 * cannot disagree about which fields a tag keeps.
 * @param {string} kind bits|registers|line|counter|analog
 * @param {string} type a canonical type (bool, bit, int16, …, string)
 * @returns {string[]}
 */
function tagFields (kind, type) {
  const out = [];
  const registers = kind === 'registers';
  if (registers && !PART_TYPES.includes(type)) out.push(...ORDER_FIELDS);
  if (registers && (type === 'bit' || type === 'bits')) out.push('bit');
  if (registers && TYPES[type] !== undefined && TYPES[type].byte) out.push('byte');
  if (registers && type === 'string') out.push('length');
  if (NUMERIC_TYPES.includes(type) || kind === 'counter' || kind === 'analog') out.push(...NUMBER_FIELDS);
  if (registers && ENUM_TYPES.includes(type)) out.push('enum');
  if (registers && NUMERIC_TYPES.includes(type)) out.push('scaleFrom');
  return out;
}

/**
 * How the core reads one raw tag's table and type, aliases, case and Modicon references resolved,
 * whatever else is wrong with it: for the editor, which shows each row the fields its tag takes.
 * @param {unknown} raw a tag as written
 * @param {TagContext} ctx
 * @returns {{table: string, type: string, fields: string[]}|null} null when the table or type is
 *   not one the core knows
 */
function readTag (raw, ctx) {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return null;
  const modbus = ctx.protocol !== 'ascii';
  const tables = modbus ? MODBUS_TABLES : ASCII_TABLES;
  const modicon = modbus ? parseModicon(raw.address) : null;
  const table = modicon !== null ? modicon.table : resolveTable(raw.table, tables);
  if (table === null) return null;
  const type = resolveType(raw.type, tables[table], () => {}, 0);
  if (type === null) return null;
  return { table, type, fields: tagFields(tables[table].kind, type) };
}

/** Modicon reference: first digit → table; the rest counts from 1 (5 digits to 9999, 6 digits to 65536) */
const MODICON_TABLES = Object.freeze({ 0: 'coil', 1: 'discrete', 3: 'input', 4: 'holding' });
const MODICON_RE = /^\s*([0134])(\d{4,5})\s*$/;

/** @returns {{table: string, address: number}|null} a Modicon reference ("40101", "400101") read, or null */
function parseModicon (value) {
  if (typeof value !== 'string') return null;
  const m = MODICON_RE.exec(value);
  if (m === null) return null;
  const n = Number(m[2]);
  // address -1 (reference 0) or past 65536 falls out as an address problem
  return { table: MODICON_TABLES[m[1]], address: n === 0 || n > 65536 ? -1 : n - 1 };
}

/** @returns {string|null} the table's canonical name */
function resolveTable (value, tables) {
  if (typeof value !== 'string') return null;
  const key = value.trim().toLowerCase().replace(/[\s_]+/g, '-');
  if (Object.prototype.hasOwnProperty.call(tables, key)) return key;
  for (const [name, t] of Object.entries(tables)) if (t.aliases.includes(key)) return name;
  return null;
}

/** @returns {string|null} the type, defaulted by table, or null after a problem */
function resolveType (value, t, add, i) {
  if (t.kind === 'bits' || t.kind === 'line') {
    if (value === undefined || (typeof value === 'string' && ['bool', 'boolean'].includes(value.trim().toLowerCase()))) return 'bool';
    add([i, 'type'], value, 'must be bool (or left out) for a coil, a discrete input or a digital line');
    return null;
  }
  if (t.kind === 'counter' || t.kind === 'analog') {
    if (value === undefined || value === t.type) return t.type;
    add([i, 'type'], value, `must be ${t.type} (or left out) for ${t.kind === 'counter' ? 'a counter' : 'an analog channel, in volts'}`);
    return null;
  }
  if (value === undefined) return 'uint16';
  const key = typeof value === 'string' ? value.trim().toLowerCase() : '';
  const type = TYPE_ALIASES[key] || key;
  if (type === 'bool') {
    add([i, 'type'], value, 'is for coils and discrete inputs; one bit of a register is type bit with bit: 0-15');
    return null;
  }
  if (!REGISTER_TYPES.includes(type)) {
    add([i, 'type'], value, `must be one of ${REGISTER_TYPES.join(', ')} for a register`);
    return null;
  }
  return type;
}

function checkOrder (raw, tag, takesOrder, add, i) {
  const given = ['order', 'wordOrder', 'byteOrder'].filter((k) => raw[k] !== undefined);
  if (given.length === 0) return;
  if (!takesOrder) {
    add([i, given[0]], raw[given[0]], 'applies to register values only');
    return;
  }
  if (raw.order !== undefined) {
    if (raw.wordOrder !== undefined || raw.byteOrder !== undefined) add([i, 'order'], raw.order, 'cannot be combined with wordOrder or byteOrder');
    const o = typeof raw.order === 'string' ? ORDERS[raw.order.trim().toUpperCase()] : undefined;
    if (!o) add([i, 'order'], raw.order, `must be one of ${Object.keys(ORDERS).join(', ')}`);
    else { tag.wordOrder = o.wordOrder; tag.byteOrder = o.byteOrder; }
    return;
  }
  for (const key of ['wordOrder', 'byteOrder']) {
    if (raw[key] === undefined) continue;
    if (raw[key] !== 'big' && raw[key] !== 'little') add([i, key], raw[key], 'must be big or little');
    else tag[key] = raw[key];
  }
}

/** Value tags may not share a register or bit; bit tags may not repeat a register's bit. add(at, field, value, rule) */
function checkOverlaps (tags, add) {
  const groups = new Map();
  tags.forEach((t, k) => {
    const key = `${t.table}/${PART_TYPES.includes(t.type) ? 'bit' : 'value'}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(k);
  });
  for (const [key, list] of groups) {
    const bits = key.endsWith('/bit');
    list.sort((a, b) => tags[a].address - tags[b].address || (bits ? partBits(tags[a])[0] - partBits(tags[b])[0] : 0) || a - b);
    let prev = null;
    for (const k of list) {
      const t = tags[k];
      if (prev !== null) {
        const clash = bits ? prev.address === t.address && partBits(t)[0] <= partBits(prev)[1] : t.address < prev.address + prev.span;
        if (clash) {
          const where = bits ? `${partText(t, prev)} of ${t.table} ${t.address}` : `${t.table} ${prev.address}-${prev.address + prev.span - 1}`;
          add(k, 'address', t.address, `overlaps tag "${prev.name}" (${where}); two tags may not read the same ${bits ? 'bit' : 'register or bit'}`);
          continue;
        }
      }
      if (prev === null || (bits ? prev.address !== t.address || partBits(t)[1] > partBits(prev)[1] : t.address + t.span > prev.address + prev.span)) prev = t;
    }
  }
}

/** The bits of its register a part tag reads, [lowest, highest] (bit 0 the least significant) */
function partBits (t) {
  if (t.type === 'bit') return [t.bit, t.bit];
  if (t.type === 'bits') return [t.bit, t.bit + t.width - 1];
  return t.byte === 'high' ? [8, 15] : [0, 7];
}

/** The bits two part tags share, for a message: "bit 4", "bits 4-6" */
function partText (t, prev) {
  const lo = Math.max(partBits(t)[0], partBits(prev)[0]);
  const hi = Math.min(partBits(t)[1], partBits(prev)[1]);
  return lo === hi ? `bit ${lo}` : `bits ${lo}-${hi}`;
}

/** `[3].address` from [3, 'address'] */
function formatPath (segs) {
  return segs.map((s) => (typeof s === 'number' ? `[${s}]` : `.${s}`)).join('');
}

function show (v) {
  if (v === undefined) return 'nothing';
  try {
    const text = JSON.stringify(v);
    if (text === undefined) return String(v);
    return text.length > 60 ? text.slice(0, 59) + '…' : text;
  } catch {
    return String(v);
  }
}

function jsonable (v) {
  if (v === undefined || typeof v === 'bigint' || typeof v === 'function' || typeof v === 'symbol') return v === undefined ? null : String(v);
  if (v !== null && typeof v === 'object') return show(v);
  return v;
}

/**
 * The context tags of a device are checked and planned in (one mapping for every caller, so a list
 * built once is recognized as built).
 * @param {{protocol: string, address?: string}} target the device's parsed target
 * @param {{maxGap?: number, maxRegistersPerRequest?: number, maxBitsPerRequest?: number, addressBase?: 0|1, order?: string}} [device]
 *   the device's spec or config (absent fields: the protocol's limits, maxGap 16, addresses from 0, ABCD)
 * @returns {TagContext & import('./plan').PlanContext}
 */
function tagContext (target, device = {}) {
  return {
    protocol: target.protocol,
    maxGap: device.maxGap === undefined ? DEFAULT_MAX_GAP : device.maxGap,
    maxRegistersPerRequest: device.maxRegistersPerRequest === undefined ? DL.MAX_REGISTERS_PER_REQUEST : device.maxRegistersPerRequest,
    maxBitsPerRequest: device.maxBitsPerRequest === undefined ? DL.MAX_BITS_PER_REQUEST : device.maxBitsPerRequest,
    addressBase: device.addressBase === 1 ? 1 : 0,
    order: device.order === undefined ? 'ABCD' : device.order,
    address: target.address
  };
}

/**
 * @param {string} protocol
 * @param {string} table canonical name
 * @returns {{kind: string, fc?: number, writable: boolean}}
 */
function tableInfo (protocol, table) {
  return (protocol === 'ascii' ? ASCII_TABLES : MODBUS_TABLES)[table];
}

module.exports = { checkTags, tagConflicts, buildTags, tagContext, tableInfo, tagFields, readTag, DEFAULT_MAX_GAP, formatPath, MODBUS_TABLES, ASCII_TABLES, NUMERIC_TYPES, REGISTER_TYPES, PART_TYPES, MAX_TAGS, KEYS };
