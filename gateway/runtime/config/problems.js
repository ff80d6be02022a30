'use strict';

const { NinesError } = require('../../base/errors');

/**
 * Collects config problems as `{path, value, rule}` and turns them into one NinesError
 * (NINES_ERR_CONFIG) whose message lists every problem, one per line:
 *   jobs[1].rate: "fast" is not a rate; use "max" or e.g. "1000/s"
 * Paths are kept as segment arrays (['jobs', 1, 'rate']) until formatted, so the loader can map
 * them back to a line and column of the source file.
 */

/** @typedef {Array<string|number>} Segments */

/**
 * @typedef {object} ConfigProblem
 * @property {string} path field path such as `jobs[1].rate` ('' for the whole document)
 * @property {*} value the offending value (undefined when the field is missing; passwords redacted)
 * @property {string} rule what the value must be, phrased to follow the value
 * @property {number} [line] 1-based line in the source file, when known
 * @property {number} [column] 1-based column in the source file, when known
 */

const SECRET_KEYS = new Set(['password']);
const VALUE_TEXT_MAX_CHARS = 60;

/**
 * Formats path segments as `jobs[1].values.mode` or `devices["my.dev"].target`.
 * @param {Segments} segs
 * @returns {string}
 */
function formatPath (segs) {
  let out = '';
  for (const s of segs) {
    if (typeof s === 'number') out += `[${s}]`;
    else if (/^[A-Za-z0-9_-]+$/.test(s)) out += out ? `.${s}` : s;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out;
}

/**
 * Renders a value for a message: JSON, shortened; secrets never appear.
 * @param {*} value
 * @returns {string}
 */
function formatValue (value) {
  if (value === undefined) return 'undefined';
  let text;
  try {
    text = JSON.stringify(value);
  } catch {
    text = String(value);
  }
  if (text === undefined) text = String(value);
  return text.length > VALUE_TEXT_MAX_CHARS ? text.slice(0, VALUE_TEXT_MAX_CHARS - 1) + '…' : text;
}

/**
 * Levenshtein distance, for "did you mean" hints on misspelt keys (small strings only).
 * @param {string} a
 * @param {string} b
 * @returns {number}
 */
function distance (a, b) {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0];
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j];
      prev[j] = Math.min(prev[j] + 1, prev[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length];
}

/**
 * The closest known key to a misspelt one, if any is close enough to be a likely typo.
 * @param {string} key
 * @param {string[]} known
 * @returns {string|undefined}
 */
function suggestKey (key, known) {
  const lower = String(key).toLowerCase().replace(/[_-]/g, '');
  let best;
  let bestD = Infinity;
  for (const k of known) {
    // the same word in another case or spelling style, or a clipped form ("dead" for "deadband")
    const same = k.toLowerCase() === lower || (lower.length >= 3 && k.toLowerCase().startsWith(lower));
    const d = same ? 0 : distance(String(key), k);
    if (d < bestD) { best = k; bestD = d; }
  }
  return bestD <= Math.max(1, Math.min(2, Math.floor(String(key).length / 3))) ? best : undefined;
}

/** The problems found in one config, in the order found; at most one per field path. */
class Problems {
  constructor () {
    /** @type {Array<{segs: Segments, value: *, rule: string}>} */
    this.list = [];
    /** @type {Set<string>} */
    this._paths = new Set();
  }

  /**
   * Records a problem. The first problem reported for a path wins, so a schema error and the
   * semantic check behind it never both appear.
   * @param {Segments} segs
   * @param {*} value
   * @param {string} rule
   */
  add (segs, value, rule) {
    const key = formatPath(segs);
    if (this._paths.has(key)) return;
    this._paths.add(key);
    const last = segs[segs.length - 1];
    const shown = SECRET_KEYS.has(String(last)) && value !== undefined ? '***' : value;
    this.list.push({ segs: segs.slice(), value: shown, rule });
  }

  /**
   * @param {Segments} segs
   * @returns {boolean} whether a problem is already recorded at this path or inside it
   */
  has (segs) {
    const key = formatPath(segs);
    for (const p of this._paths) {
      if (p === key || p.startsWith(key + '.') || p.startsWith(key + '[')) return true;
    }
    return false;
  }

  /** @returns {number} */
  get size () {
    return this.list.length;
  }

  /**
   * Builds the NINES_ERR_CONFIG error listing every problem.
   * @param {object} [opts]
   * @param {string} [opts.source] file name shown in the message
   * @param {(segs: Segments) => ({line: number, column: number}|undefined)} [opts.locate]
   * @returns {NinesError}
   */
  toError ({ source, locate } = {}) {
    /** @type {ConfigProblem[]} */
    const errors = this.list.map(({ segs, value, rule }) => {
      /** @type {ConfigProblem} */
      const e = { path: formatPath(segs), value, rule };
      const pos = locate ? locate(segs) : undefined;
      if (pos) { e.line = pos.line; e.column = pos.column; }
      return e;
    });
    // In file order when positions are known: the list then reads like the file
    if (locate) errors.sort((a, b) => (a.line || Infinity) - (b.line || Infinity) || (a.column || 0) - (b.column || 0));
    const lines = errors.map((e) => {
      const where = e.line ? `${source || ''}:${e.line}:${e.column}: ` : '';
      const subject = e.path || '(config)';
      return `  ${where}${subject}: ${e.value === undefined ? '' : formatValue(e.value) + ' '}${e.rule}`;
    });
    const head = `invalid gateway config${source ? ` ${source}` : ''} (${errors.length} problem${errors.length === 1 ? '' : 's'}):`;
    return new NinesError('NINES_ERR_CONFIG', `${head}\n${lines.join('\n')}`, { source, errors });
  }
}

module.exports = { Problems, formatPath, formatValue, suggestKey };
