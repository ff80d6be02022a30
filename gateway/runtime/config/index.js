'use strict';

/**
 * The gateway config: load (YAML or JSON, from a file or text), validate against the schema plus
 * semantic rules, normalize (defaults, ms, per second, parsed targets). One NINES_ERR_CONFIG
 * error lists every problem with its field path, value and rule.
 */

const { loadConfig } = require('./load');
const { validateConfig, redactConfig } = require('./validate');
const { schema } = require('./schema');
const D = require('./defaults');

module.exports = { loadConfig, validateConfig, redactConfig, schema, defaults: D };
