'use strict';

const Long = require('long');

/**
 * How nines values become Sparkplug B metrics: datatypes from tag types, values on the wire, and
 * quality as a metric property. Pure, tested alone.
 *
 * Sparkplug B has no quality of its own. We follow the convention Ignition's MQTT Engine reads:
 * a `Quality` property (Int32) with the OPC DA quality codes, 192 for good and below 64 for bad,
 * and `is_null` for a value that could not be read (never a stale or made-up value). The nines
 * code of a bad value goes beside it in a `nines.error` property (String), so a host that is not
 * Ignition still learns why.
 */

/** Tag type → Sparkplug datatype (names as sparkplug-payload takes them) */
const TAG_DATATYPES = Object.freeze({
  bool: 'Boolean',
  bit: 'Boolean',
  int16: 'Int16',
  uint16: 'UInt16',
  int32: 'Int32',
  uint32: 'UInt32',
  int64: 'Int64',
  uint64: 'UInt64',
  float32: 'Float',
  float64: 'Double',
  string: 'String',
  bits: 'UInt16',
  float16: 'Float',
  bcd: 'UInt16',
  lbcd: 'UInt32',
  int8: 'Int8',
  uint8: 'UInt8'
});

const INTEGER_TYPES = new Set(['int16', 'uint16', 'int32', 'uint32', 'int64', 'uint64', 'bcd', 'lbcd', 'int8', 'uint8']);

/** OPC DA quality codes (the "legacy" Ignition qualities the `Quality` property carries) */
const QUALITY = Object.freeze({
  GOOD: 192,
  BAD: 0,
  CONFIG_ERROR: 4,
  NOT_CONNECTED: 8,
  COMM_FAILURE: 24,
  WAITING_FOR_INITIAL_DATA: 32
});

/** nines code → OPC DA quality: why the value is missing, as a SCADA operator reads it */
const QUALITY_OF_CODE = Object.freeze({
  NINES_ERR_NOT_CONNECTED: QUALITY.NOT_CONNECTED,
  NINES_ERR_CONNECT_FAILED: QUALITY.NOT_CONNECTED,
  NINES_ERR_CONNECT_TIMEOUT: QUALITY.NOT_CONNECTED,
  NINES_ERR_CONNECTION_CLOSED: QUALITY.NOT_CONNECTED,
  NINES_ERR_CLOSED: QUALITY.NOT_CONNECTED,
  NINES_ERR_REPLY_TIMEOUT: QUALITY.COMM_FAILURE,
  NINES_ERR_BAD_CHECKSUM: QUALITY.COMM_FAILURE,
  NINES_ERR_BAD_REPLY: QUALITY.COMM_FAILURE,
  NINES_ERR_FRAME_TOO_LONG: QUALITY.COMM_FAILURE,
  // an address or channel the device does not have: the tag map is wrong, not the line
  NINES_ERR_MODBUS_EXCEPTION: QUALITY.CONFIG_ERROR,
  NINES_ERR_DEVICE_INVALID: QUALITY.CONFIG_ERROR,
  // the register was read, and holds no value: the device says it has none (or the map names a
  // wrong type), which OPC DA calls bad without a finer reason; a missing scale register is the map's
  NINES_ERR_NO_VALUE: QUALITY.BAD,
  NINES_ERR_BAD_BCD: QUALITY.BAD,
  NINES_ERR_UNKNOWN_ENUM: QUALITY.BAD,
  NINES_ERR_SCALE_FACTOR: QUALITY.CONFIG_ERROR
});

/**
 * The Sparkplug datatype of a tag's engineering value. An integer tag with a scale or an offset
 * yields fractions (raw × 0.1), so it is a Double; so is a scaled float32 or float16, whose product
 * is computed in double precision and would be rounded again as a Float, and a tag scaled from
 * another register (scaleFrom), whatever its exponent. An enum tag's value is its label, a String.
 * @param {{type: string, scale?: number, offset?: number, enum?: object, scaleFrom?: string}} tag a checked tag (tags/spec.js)
 * @returns {string}
 */
function tagDatatype (tag) {
  if (tag.enum !== undefined) return 'String';
  if (tag.scaleFrom !== undefined) return 'Double';
  const scaled = (tag.scale !== undefined && tag.scale !== 1) || (tag.offset !== undefined && tag.offset !== 0);
  if (scaled && (INTEGER_TYPES.has(tag.type) || tag.type === 'float32' || tag.type === 'float16')) return 'Double';
  const dt = TAG_DATATYPES[tag.type];
  if (dt === undefined) throw new TypeError(`no Sparkplug datatype for tag type ${tag.type}`);
  return dt;
}

/**
 * A value as sparkplug-payload encodes it for a datatype: 64-bit integers as Long (every digit
 * kept, also beyond 2^53), null for a value that could not be read (sent as is_null).
 * @param {string} datatype
 * @param {unknown} value
 * @returns {number|boolean|string|Long|null}
 */
function wireValue (datatype, value) {
  if (value === null || value === undefined) return null;
  if (datatype === 'Int64' || datatype === 'UInt64') {
    const unsigned = datatype === 'UInt64';
    if (typeof value === 'bigint') return Long.fromString(value.toString(), unsigned);
    if (typeof value === 'number' && Number.isInteger(value)) return Long.fromNumber(value, unsigned);
    if (typeof value === 'string' && /^-?\d+$/.test(value)) return Long.fromString(value, unsigned);
    return null;
  }
  if (datatype === 'Boolean') return typeof value === 'boolean' ? value : null;
  if (datatype === 'String') return typeof value === 'string' ? value : null;
  if (typeof value === 'bigint') return Number(value);
  return typeof value === 'number' ? value : null;
}

/**
 * The `Quality` property (and `nines.error` for a bad value) of a tag's quality.
 * @param {string} quality 'ok', 'initial' (not read yet since its device came up) or a NINES_ERR_* code
 * @returns {Record<string, {type: string, value: number|string}>}
 */
function qualityProperties (quality) {
  if (quality === 'ok') return { Quality: { type: 'Int32', value: QUALITY.GOOD } };
  if (quality === 'initial') return { Quality: { type: 'Int32', value: QUALITY.WAITING_FOR_INITIAL_DATA } };
  const code = QUALITY_OF_CODE[quality];
  return {
    Quality: { type: 'Int32', value: code === undefined ? QUALITY.BAD : code },
    'nines.error': { type: 'String', value: String(quality) }
  };
}

/**
 * One tag metric.
 * @param {{name: string, datatype: string, unit: string|null}} def
 * @param {{value: unknown, quality: string, ts: number}} state the tag's latest read
 * @param {boolean} birth a birth carries the unit too (it does not change between births)
 * @returns {object} a metric for sparkplug-payload
 */
function tagMetric (def, state, birth) {
  const value = state.quality === 'ok' ? wireValue(def.datatype, state.value) : null;
  const properties = qualityProperties(value === null && state.quality === 'ok' ? 'NINES_ERR_BAD_REPLY' : state.quality);
  if (birth && def.unit) properties.engUnit = { type: 'String', value: def.unit };
  return { name: def.name, type: def.datatype, value, timestamp: state.ts, properties };
}

/** Node metrics per job, from its latency summary (design.md): name suffix, summary field, datatype */
const LATENCY_FIELDS = Object.freeze([
  ['p50', 'p50', 'Double'],
  ['p90', 'p90', 'Double'],
  ['p99', 'p99', 'Double'],
  ['p99_9', 'p99_9', 'Double'],
  ['max', 'max', 'Double'],
  ['count', 'count', 'Int64'],
  ['errors', 'errors', 'Int64'],
  ['timeouts', 'timeouts', 'Int64'],
  ['skipped', 'skipped', 'Int64']
]);

/**
 * A job's latency metrics: `Latency/<job>/p99` in ms and the interval's counts, each stamped with
 * the end of the interval it describes.
 * @param {string} job
 * @param {object|null} summary the job's latest summary, or null before its first interval (is_null)
 * @param {boolean} birth a birth carries the unit (engUnit "ms") too
 * @returns {object[]} metrics for sparkplug-payload
 */
function latencyMetrics (job, summary, birth) {
  const ts = summary && typeof summary.end === 'string' ? Date.parse(summary.end) : undefined;
  return LATENCY_FIELDS.map(([suffix, field, type]) => {
    const raw = summary ? summary[field] : null;
    const value = typeof raw === 'number' && Number.isFinite(raw) ? wireValue(type, type === 'Int64' ? Math.round(raw) : raw) : null;
    const m = { name: `Latency/${job}/${suffix}`, type, value };
    if (ts !== undefined && Number.isFinite(ts)) m.timestamp = ts;
    if (birth && type === 'Double') m.properties = { engUnit: { type: 'String', value: 'ms' } };
    return m;
  });
}

module.exports = { TAG_DATATYPES, QUALITY, QUALITY_OF_CODE, LATENCY_FIELDS, tagDatatype, wireValue, qualityProperties, tagMetric, latencyMetrics };
