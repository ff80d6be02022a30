'use strict';

/**
 * Enums: a map of an integer tag's raw values to labels, `{ 0: off, 1: heat, 2: cool }`, so a
 * drive's state word is published as "heat", not 1. Written as a mapping (YAML, JSON), or as text
 * `0=off|1=heat|2=cool` (pairs separated by |, comma or semicolon), the form a tag sheet's cell
 * holds. Checked once here; a checked enum is a plain object keyed by the canonical decimal text of
 * each value (it crosses to worker threads as it is).
 *
 * Labels are unique as well as values: a write by tag takes a label, and a label that named two
 * values would leave the write to guess.
 */

/** The most values one enum maps (a state word with more labels than this is no enum) */
const MAX_ENUM_VALUES = 1024;
/** The longest label, in characters */
const MAX_LABEL_LENGTH = 64;
const INTEGER_TEXT = /^[+-]?\d+$/;
const PAIR_SEPARATORS = /[|,;]/;

/**
 * The pairs of an enum as written: a mapping's entries, or text's `value=label` pairs.
 * @param {unknown} raw
 * @returns {Array<[string, unknown]>|null} null when raw is neither
 */
function pairsOf (raw) {
  if (typeof raw === 'string') {
    return raw.split(PAIR_SEPARATORS).filter((p) => p.trim() !== '').map((p) => {
      const at = p.indexOf('=');
      return at < 0 ? [p.trim(), undefined] : [p.slice(0, at).trim(), p.slice(at + 1).trim()];
    });
  }
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) return Object.entries(raw);
  return null;
}

/**
 * Checks an enum against the raw range of its tag.
 * @param {unknown} raw as written
 * @param {number} min the tag's smallest raw value
 * @param {number} max the tag's largest raw value
 * @param {(path: string[], value: unknown, rule: string) => void} add a problem below the enum's own path
 * @returns {Record<string, string>|null} value text → label; null after a problem
 */
function checkEnum (raw, min, max, add) {
  const pairs = pairsOf(raw);
  if (pairs === null) {
    add([], raw, 'must map raw values to labels, such as { 0: off, 1: heat, 2: cool } or "0=off|1=heat|2=cool"');
    return null;
  }
  if (pairs.length === 0) { add([], raw, 'must name at least one value'); return null; }
  if (pairs.length > MAX_ENUM_VALUES) { add([], `${pairs.length} values`, `may name at most ${MAX_ENUM_VALUES} values`); return null; }
  const out = {};
  const byValue = new Map();
  const byLabel = new Map();
  let ok = true;
  const bad = (key, value, rule) => { ok = false; add([key], value, rule); };
  for (const [key, label] of pairs) {
    if (!INTEGER_TEXT.test(key)) { bad(key, key, 'is not a whole number: an enum maps the raw integer values of its tag to labels'); continue; }
    const n = Number(key);
    if (n < min || n > max) bad(key, n, `is outside the tag's raw values, ${min} to ${max}`);
    if (typeof label !== 'string' || label.trim() === '' || label.length > MAX_LABEL_LENGTH) {
      bad(key, label === undefined ? null : label, `must be a label of 1-${MAX_LABEL_LENGTH} characters${typeof raw === 'string' ? ' (written value=label)' : ''}`);
      continue;
    }
    if (byValue.has(n)) { bad(key, key, `is the value ${n} again (written "${byValue.get(n)}" before): each value has one label`); continue; }
    if (byLabel.has(label)) { bad(key, label, `is the label of ${byLabel.get(label)} too: labels must be unique, so a write by label names one value`); continue; }
    byValue.set(n, key);
    byLabel.set(label, n);
    out[String(n)] = label;
  }
  return ok ? out : null;
}

/**
 * The label of a raw value.
 * @param {Record<string, string>} labels a checked enum
 * @param {number} raw
 * @returns {string|undefined} undefined when the enum names no such value
 */
function labelOf (labels, raw) {
  // raw is a number: read as an index, with no string made per value; no prototype has numeric keys
  return labels[raw];
}

/**
 * The raw value of a label, for a write by tag; a raw value the enum names is taken as it is.
 * @param {Record<string, string>} labels a checked enum
 * @param {unknown} value what was sent
 * @returns {number|undefined} undefined when value is neither a label nor a value of the enum
 */
function valueOf (labels, value) {
  for (const [key, label] of Object.entries(labels)) {
    if (value === label || (typeof value === 'number' && String(value) === key)) return Number(key);
  }
  return undefined;
}

module.exports = { checkEnum, labelOf, valueOf, MAX_ENUM_VALUES, MAX_LABEL_LENGTH };
