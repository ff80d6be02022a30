'use strict';

/**
 * The name rule: what a gateway id, a device, a job, a unit of a line or a profile may be called.
 * Each becomes one MQTT topic level (`<prefix>/<gateway>/<job>/latency`, a unit in statuses and
 * Sparkplug ids), so `/ + #` and spaces are out, and each keys an object, so JavaScript's prototype
 * key is out too. The config's schema, its checks, the job and unit builders, the MQTT topics and
 * the HTTP plot route all use this one rule.
 */

const { RESERVED_NAME, NOT_RESERVED } = require('./constants');

/** Longest name, in characters */
const NAME_MAX_LENGTH = 64;
/** The characters of a name, as a regex character class body */
const NAME_CHARS = 'A-Za-z0-9_.-';
/** A name anywhere in a larger pattern (a topic prefix's levels, a URL path): no anchors, no reserved check */
const NAME_LEVEL = `[${NAME_CHARS}]{1,${NAME_MAX_LENGTH}}`;
/** The rule as a JSON Schema pattern (runtime/config/schema.js) */
const NAME_PATTERN = `^${NOT_RESERVED}${NAME_LEVEL}$`;
const NAME_RE = new RegExp(NAME_PATTERN);
/** What a refusal of a name says */
const NAME_RULE = `must be 1 to ${NAME_MAX_LENGTH} letters, digits, _ . or - and not ${RESERVED_NAME} (it becomes an MQTT topic level: no / + # or spaces)`;
/** A character a name may not hold */
const NOT_NAME_CHAR = new RegExp(`[^${NAME_CHARS}]`, 'g');

/**
 * @param {unknown} name
 * @returns {boolean} whether it is a valid name
 */
function isName (name) {
  return typeof name === 'string' && NAME_RE.test(name);
}

/**
 * A name made from any text (a Node-RED node id, the host name): characters a name may not hold
 * become `fill`, and it is cut to the longest name. The result is a valid name unless the text was
 * empty (or is the reserved key).
 * @param {string} text
 * @param {string} [fill='_'] one character a name may hold
 * @returns {string}
 */
function toName (text, fill = '_') {
  return String(text).replace(NOT_NAME_CHAR, fill).slice(0, NAME_MAX_LENGTH);
}

module.exports = { isName, toName, NAME_RULE, NAME_PATTERN, NAME_LEVEL, NAME_MAX_LENGTH };
