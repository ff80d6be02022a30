'use strict';

const { schema } = require('./schema');
const { suggestKey } = require('./problems');

/**
 * Runs the JSON schema over a parsed config and reports every failure (ajv `allErrors`) into a
 * Problems list, in our wording: the field path, the value and the rule.
 */

let validate = null;

/** Compiles the schema once, on first use: ajv's compile costs a few milliseconds. */
function compiled () {
  if (!validate) {
    const Ajv = require('ajv');
    const ajv = new Ajv({ allErrors: true, verbose: true, allowUnionTypes: true, strict: true });
    // Annotation keywords that carry our error wording; ajv only has to accept them
    ajv.addKeyword('rule');
    ajv.addKeyword('hint');
    validate = ajv.compile(schema);
  }
  return validate;
}

/**
 * Turns an ajv instancePath (JSON pointer) into path segments; array indexes become numbers.
 * @param {string} pointer
 * @param {*} root the document, to tell array indexes from keys that look like numbers
 * @returns {Array<string|number>}
 */
function toSegments (pointer, root) {
  if (!pointer) return [];
  const segs = [];
  let node = root;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    const seg = Array.isArray(node) && /^\d+$/.test(key) ? Number(key) : key;
    segs.push(seg);
    node = node != null ? node[seg] : undefined;
  }
  return segs;
}

function article (type) {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function typeName (t) {
  return t === 'object' ? 'mapping' : t === 'array' ? 'list' : t;
}

/**
 * Our wording for one ajv error.
 * @param {import('ajv').ErrorObject} e
 * @returns {string}
 */
function ruleFor (e) {
  const ps = /** @type {any} */ (e.parentSchema) || {};
  switch (e.keyword) {
    case 'type':
      if (e.data === null && ps.rule && /quote/.test(ps.rule)) {
        return 'is empty: in YAML a bare # starts a comment and @ cannot start a plain value; quote commands, e.g. command: "@01"';
      }
      if (ps.rule) return ps.rule;
      return `must be ${[].concat(e.params.type).map((t) => article(typeName(t))).join(' or ')}`;
    case 'enum':
      return ps.rule || `must be one of ${e.params.allowedValues.join(', ')}`;
    case 'const':
      return ps.rule || `must be ${JSON.stringify(e.params.allowedValue)}`;
    case 'minItems':
    case 'minProperties':
      return ps.rule || `must have at least ${e.params.limit} entries`;
    case 'minLength':
      return ps.rule ? `is empty; ${ps.rule.replace(/^must be /, 'expected ')}` : 'must not be empty';
    default:
      return ps.rule || e.message || `fails ${e.keyword}`;
  }
}

/**
 * Checks `doc` against the schema and adds each failure to `problems`.
 * @param {*} doc the parsed config
 * @param {import('./problems').Problems} problems
 * @returns {boolean} true when the document passed the schema
 */
function checkSchema (doc, problems) {
  const v = compiled();
  if (v(doc)) return true;
  for (const e of v.errors || []) {
    // if/then/else adds a summary error beside the branch's own error: keep only the latter
    if (e.keyword === 'if') continue;
    const segs = toSegments(e.instancePath, doc);
    if (e.keyword === 'required') {
      const key = e.params.missingProperty;
      const prop = /** @type {any} */ (e.parentSchema).properties?.[key] || {};
      problems.add(segs.concat(key), undefined, prop.hint ? `is required; ${prop.hint}` : 'is required');
    } else if (e.keyword === 'additionalProperties') {
      const key = e.params.additionalProperty;
      const known = Object.keys(/** @type {any} */ (e.parentSchema).properties || {});
      const guess = suggestKey(key, known);
      problems.add(segs.concat(key), e.data[key],
        `is not a known key${guess ? ` (did you mean "${guess}"?)` : ''}; known keys: ${known.join(', ')}`);
    } else {
      problems.add(segs, e.data, ruleFor(e));
    }
  }
  return false;
}

module.exports = { checkSchema };
