'use strict';

/**
 * Parsing, validation and canonical formatting of fault specs (text and object forms). The
 * grammar is documented in faults.js and in FAULTS_HELP; this file only turns a spec into a
 * normalised config and back.
 *
 * Normalised config (all durations in ms, zero/empty items left out of the output forms):
 *   { latencyMinMs, latencyMaxMs, spikes: [{p, ms}], drop, garbage, close, refuse,
 *     stalls: [{ms, atMs, everyMs}], seed: number|null }
 */

const { NinesError } = require('../base/errors');
const { parseDuration } = require('../base/quantities');
const { SEED_MAX } = require('./prng');

const OBJECT_KEYS = ['latency', 'spikes', 'drop', 'garbage', 'close', 'refuse', 'stalls', 'seed'];
const TEXT_KEYS = ['latency', 'spike', 'drop', 'garbage', 'close', 'refuse', 'stall', 'seed'];
const PROBABILITY_RE = /^\s*(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?\s*$/i;
const FRACTION_RE = /^\s*(\d+(?:\.\d*)?|\.\d+)\s*\/\s*(\d+(?:\.\d*)?|\.\d+)\s*$/;
const ON_WORDS = new Set(['on', 'true', 'yes', '1']);
const OFF_WORDS = new Set(['off', 'false', 'no', '0']);

/** @returns {object} a config with no fault at all */
function emptyConfig () {
  return { latencyMinMs: 0, latencyMaxMs: 0, spikes: [], drop: 0, garbage: 0, close: 0, refuse: false, stalls: [], seed: null };
}

/**
 * Throws the validation error for one item.
 * @param {string} field e.g. "faults.drop"
 * @param {unknown} value the offending value
 * @param {string} rule what a valid value looks like
 * @param {string} [item] the spec item text, when parsing text
 * @returns {never}
 */
function fail (field, value, rule, item) {
  const where = item === undefined ? field : `${field} (item "${item}")`;
  throw new NinesError('NINES_ERR_INVALID_ARG', `${where} must be ${rule}; got ${JSON.stringify(value)}`,
    item === undefined ? { field, value } : { field, value, item });
}

/**
 * Parses a probability: a number or a string "0.001", "1e-4" or a fraction "1/10000".
 * @param {unknown} v
 * @param {string} field
 * @param {string} [item]
 * @returns {number} in [0, 1]
 */
function parseProbability (v, field, item) {
  let p = NaN;
  if (typeof v === 'number') p = v;
  else if (typeof v === 'string') {
    const f = FRACTION_RE.exec(v);
    if (f) p = Number(f[2]) === 0 ? NaN : Number(f[1]) / Number(f[2]);
    else if (PROBABILITY_RE.test(v)) p = Number(v);
  }
  if (!Number.isFinite(p) || p < 0 || p > 1) {
    fail(field, v, 'a probability in [0,1], a decimal like 0.001 or a fraction like 1/10000', item);
  }
  return p;
}

/**
 * Parses a duration through quantities.parseDuration, re-throwing with the spec's field and item.
 * @param {unknown} v
 * @param {string} field
 * @param {string} [item]
 * @returns {number} ms
 */
function duration (v, field, item) {
  if (typeof v === 'string' && v.trim() === '') fail(field, v, 'a duration like "2ms", "1.5s" or a number of ms', item);
  try {
    return parseDuration(/** @type {any} */ (v), field);
  } catch (err) {
    return fail(field, v, 'a duration like "2ms", "1.5s" or a number of ms', item);
  }
}

/** @returns {boolean} */
function parseSwitch (v, field, item) {
  if (v === true || v === false) return v;
  const w = typeof v === 'string' ? v.trim().toLowerCase() : v;
  if (ON_WORDS.has(/** @type {any} */ (w))) return true;
  if (OFF_WORDS.has(/** @type {any} */ (w))) return false;
  return fail(field, v, 'on or off (true/false)', item);
}

/** @returns {number} */
function parseSeed (v, field, item) {
  const n = typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : v;
  if (!Number.isInteger(n) || /** @type {number} */ (n) < 0 || /** @type {number} */ (n) > SEED_MAX) {
    fail(field, v, `an integer from 0 to ${SEED_MAX}`, item);
  }
  return /** @type {number} */ (n);
}

/** Latency: "2ms", "1ms-5ms", a number, or {min, max}. @returns {[number, number]} */
function parseLatency (v, field, item) {
  let min, max;
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    for (const k of Object.keys(v)) if (k !== 'min' && k !== 'max') fail(`${field}.${k}`, v[k], 'absent (latency takes only min and max)', item);
    min = duration(v.min, `${field}.min`, item);
    max = duration(v.max === undefined ? v.min : v.max, `${field}.max`, item);
  } else if (typeof v === 'string' && v.includes('-')) {
    const parts = v.split('-');
    if (parts.length !== 2) fail(field, v, 'a duration or a range like "1ms-5ms"', item);
    min = duration(parts[0], field, item);
    max = duration(parts[1], field, item);
  } else {
    min = max = duration(v, field, item);
  }
  if (min > max) fail(field, v, 'a range whose minimum is not above its maximum', item);
  return [min, max];
}

/** Spike: "1/10000:35ms" or {p, ms}. @returns {{p: number, ms: number}} */
function parseSpike (v, field, item) {
  if (typeof v === 'string') {
    const i = v.lastIndexOf(':');
    if (i < 0) fail(field, v, 'of the form PROBABILITY:DURATION, like "1/10000:35ms"', item);
    return { p: parseProbability(v.slice(0, i), `${field}.p`, item), ms: duration(v.slice(i + 1), `${field}.ms`, item) };
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) fail(field, v, 'an object {p, ms} or a string like "1/10000:35ms"', item);
  for (const k of Object.keys(v)) if (k !== 'p' && k !== 'ms') fail(`${field}.${k}`, v[k], 'absent (a spike takes only p and ms)', item);
  return { p: parseProbability(v.p, `${field}.p`, item), ms: duration(v.ms, `${field}.ms`, item) };
}

/** Stall: "2s@5s", "2s@5s/20s" or {ms, atMs, everyMs}. @returns {{ms: number, atMs: number, everyMs: number}} */
function parseStall (v, field, item) {
  let ms, atMs, everyMs = 0;
  if (typeof v === 'string') {
    const m = /^([^@/]+)@([^@/]+)(?:\/([^@/]+))?$/.exec(v.trim());
    if (!m) fail(field, v, 'of the form DURATION@START or DURATION@START/PERIOD, like "2s@5s/20s"', item);
    ms = duration(m[1], `${field}.ms`, item);
    atMs = duration(m[2], `${field}.atMs`, item);
    if (m[3] !== undefined) everyMs = duration(m[3], `${field}.everyMs`, item);
  } else {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) fail(field, v, 'an object {ms, atMs, everyMs} or a string like "2s@5s/20s"', item);
    for (const k of Object.keys(v)) if (!['ms', 'atMs', 'everyMs'].includes(k)) fail(`${field}.${k}`, v[k], 'absent (a stall takes only ms, atMs, everyMs)', item);
    ms = duration(v.ms, `${field}.ms`, item);
    atMs = v.atMs === undefined ? 0 : duration(v.atMs, `${field}.atMs`, item);
    if (v.everyMs !== undefined) everyMs = duration(v.everyMs, `${field}.everyMs`, item);
  }
  if (ms <= 0) fail(`${field}.ms`, ms, 'a duration above zero', item);
  // A period not longer than the stall would freeze the device for good: almost surely a typo.
  if (everyMs !== 0 && everyMs <= ms) fail(`${field}.everyMs`, everyMs, `a period longer than the stall (${ms} ms)`, item);
  return { ms, atMs, everyMs };
}

/**
 * Parses the text form: comma-separated items `key=value` (or bare `refuse`).
 * @param {string} text
 * @returns {object} normalised config
 */
function parseText (text) {
  const cfg = emptyConfig();
  const seen = new Set();
  for (const raw of text.split(',')) {
    const item = raw.trim();
    if (item === '') continue;
    const eq = item.indexOf('=');
    const key = (eq < 0 ? item : item.slice(0, eq)).trim();
    const value = eq < 0 ? undefined : item.slice(eq + 1).trim();
    const field = `faults.${key}`;
    if (!TEXT_KEYS.includes(key)) fail('faults', item, `a list of items ${TEXT_KEYS.join(', ')} (see --help)`, item);
    if (key !== 'spike' && key !== 'stall') {
      if (seen.has(key)) fail(field, item, 'given once (only spike= and stall= may repeat)', item);
      seen.add(key);
    }
    if (value === undefined && key !== 'refuse') fail(field, item, `written ${key}=VALUE`, item);
    applyItem(cfg, key, value, field, item);
  }
  return finish(cfg);
}

/** Applies one parsed text item to cfg. */
function applyItem (cfg, key, value, field, item) {
  switch (key) {
    case 'latency': [cfg.latencyMinMs, cfg.latencyMaxMs] = parseLatency(value, field, item); break;
    case 'spike': cfg.spikes.push(parseSpike(value, field, item)); break;
    case 'stall': cfg.stalls.push(parseStall(value, field, item)); break;
    case 'refuse': cfg.refuse = value === undefined ? true : parseSwitch(value, field, item); break;
    case 'seed': cfg.seed = parseSeed(value, field, item); break;
    default: cfg[key] = parseProbability(value, field, item);
  }
}

/**
 * Parses the object form.
 * @param {object} obj
 * @returns {object} normalised config
 */
function parseObject (obj) {
  const cfg = emptyConfig();
  for (const key of Object.keys(obj)) {
    const v = obj[key];
    const field = `faults.${key}`;
    if (!OBJECT_KEYS.includes(key)) fail(field, v, `absent: unknown key (known: ${OBJECT_KEYS.join(', ')})`);
    if (v === undefined || v === null) continue;
    if (key === 'spikes' || key === 'stalls') {
      if (!Array.isArray(v)) fail(field, v, 'an array');
      v.forEach((x, i) => (key === 'spikes' ? cfg.spikes.push(parseSpike(x, `${field}[${i}]`)) : cfg.stalls.push(parseStall(x, `${field}[${i}]`))));
    } else if (key === 'latency') {
      [cfg.latencyMinMs, cfg.latencyMaxMs] = parseLatency(v, field);
    } else if (key === 'refuse') {
      cfg.refuse = parseSwitch(v, field);
    } else if (key === 'seed') {
      cfg.seed = parseSeed(v, field);
    } else {
      cfg[key] = parseProbability(v, field);
    }
  }
  return finish(cfg);
}

/** Cross-item checks and removal of no-op items. */
function finish (cfg) {
  const sum = cfg.drop + cfg.garbage + cfg.close;
  // One draw decides the action, so the three outcomes must fit in one unit interval.
  if (sum > 1 + 1e-12) fail('faults', { drop: cfg.drop, garbage: cfg.garbage, close: cfg.close }, 'probabilities whose sum drop+garbage+close is at most 1');
  cfg.spikes = cfg.spikes.filter((s) => s.p > 0 && s.ms > 0);
  return cfg;
}

/**
 * Parses a spec into a normalised config.
 * @param {string|object|undefined|null} spec
 * @returns {object}
 */
function parseFaultSpec (spec) {
  if (spec === undefined || spec === null) return emptyConfig();
  if (typeof spec === 'string') return parseText(spec);
  if (typeof spec === 'object' && !Array.isArray(spec)) return parseObject(spec);
  return fail('faults', spec, 'a string like "latency=2ms,drop=0.001", an object, or undefined');
}

/** Formats ms so parseDuration reads back the same number. */
function formatMs (ms) {
  if (ms >= 1000 && ms % 1000 === 0) return `${ms / 1000}s`;
  const s = String(ms);
  return s.includes('e') ? `${Math.round(ms * 1e6)}ns` : `${s}ms`;
}

/** Formats a probability, as 1/N when that is exact. */
function formatP (p) {
  const n = 1 / p;
  if (p > 0 && p < 1 && Number.isInteger(n) && 1 / n === p) return `1/${n}`;
  return String(p);
}

/**
 * Canonical text of a config: parseFaultSpec(formatFaultSpec(c)) gives c back.
 * @param {object} cfg normalised config
 * @returns {string} '' when nothing is configured
 */
function formatFaultSpec (cfg) {
  const out = [];
  if (cfg.latencyMaxMs > 0) {
    out.push(cfg.latencyMinMs === cfg.latencyMaxMs ? `latency=${formatMs(cfg.latencyMinMs)}` : `latency=${formatMs(cfg.latencyMinMs)}-${formatMs(cfg.latencyMaxMs)}`);
  }
  for (const s of cfg.spikes) out.push(`spike=${formatP(s.p)}:${formatMs(s.ms)}`);
  for (const k of ['drop', 'garbage', 'close']) if (cfg[k] > 0) out.push(`${k}=${formatP(cfg[k])}`);
  if (cfg.refuse) out.push('refuse');
  for (const s of cfg.stalls) out.push(`stall=${formatMs(s.ms)}@${formatMs(s.atMs)}${s.everyMs ? `/${formatMs(s.everyMs)}` : ''}`);
  if (cfg.seed !== null) out.push(`seed=${cfg.seed}`);
  return out.join(',');
}

/**
 * Object form of a config, accepted back by parseFaultSpec; only configured items appear.
 * @param {object} cfg normalised config
 * @returns {object}
 */
function faultSpecToObject (cfg) {
  const out = {};
  if (cfg.latencyMaxMs > 0) out.latency = { min: cfg.latencyMinMs, max: cfg.latencyMaxMs };
  if (cfg.spikes.length) out.spikes = cfg.spikes.map((s) => ({ p: s.p, ms: s.ms }));
  for (const k of ['drop', 'garbage', 'close']) if (cfg[k] > 0) out[k] = cfg[k];
  if (cfg.refuse) out.refuse = true;
  if (cfg.stalls.length) out.stalls = cfg.stalls.map((s) => ({ ms: s.ms, atMs: s.atMs, everyMs: s.everyMs }));
  if (cfg.seed !== null) out.seed = cfg.seed;
  return out;
}

module.exports = { parseFaultSpec, formatFaultSpec, faultSpecToObject, emptyConfig, parseProbability };
