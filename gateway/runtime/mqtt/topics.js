'use strict';

const { NinesError } = require('../../base/errors');
const D = require('./defaults');
const { isName, NAME_RULE } = require('../../base/names');

/**
 * Topic layout (design.md, MQTT):
 *   <prefix>/<gateway>/status          retained online/offline, also the last will
 *   <prefix>/<gateway>/<job>/latency   one summary per interval
 *   <prefix>/<gateway>/<job>/value     polled values, rate-limited
 *   <prefix>/<gateway>/<job>/error     error events, rate-limited, with counts
 * Gateway and job names are single topic levels, checked so that no `/ + #` can change the
 * layout or turn a publish into an invalid topic.
 */

const PREFIX_RE = new RegExp(D.PREFIX_PATTERN);

/**
 * @param {*} name
 * @param {string} field option or argument name, for the message
 * @returns {string}
 * @throws {NinesError} NINES_ERR_INVALID_ARG
 */
function checkName (name, field) {
  if (!isName(name)) {
    // "field: value rule", as the publisher's other option errors read
    throw new NinesError('NINES_ERR_INVALID_ARG', `${field}: ${JSON.stringify(name)} ${NAME_RULE}`, { field, value: name, rule: NAME_RULE });
  }
  return name;
}

/**
 * @param {*} prefix
 * @returns {string}
 * @throws {NinesError} NINES_ERR_INVALID_ARG
 */
function checkPrefix (prefix) {
  if (typeof prefix !== 'string' || !PREFIX_RE.test(prefix)) {
    throw new NinesError('NINES_ERR_INVALID_ARG',
      `prefix: ${JSON.stringify(prefix)} must be topic levels of letters, digits, _ . - separated by / (no + # or empty levels)`,
      { field: 'prefix', value: prefix });
  }
  return prefix;
}

/**
 * Topic builders for one gateway.
 * @param {string} prefix
 * @param {string} gatewayId
 * @returns {{status: string, job: (job: string, kind: 'latency'|'value'|'error') => string}}
 */
function topicsFor (prefix, gatewayId) {
  const base = `${checkPrefix(prefix)}/${checkName(gatewayId, 'gatewayId')}`;
  return {
    status: `${base}/status`,
    job: (job, kind) => `${base}/${checkName(job, 'job')}/${kind}`
  };
}

/**
 * @param {string} filter an MQTT topic filter: `+` one level, `#` the rest (also none: `a/#` matches `a`)
 * @param {string} topic
 * @returns {boolean} whether the filter matches the topic
 */
function filterMatches (filter, topic) {
  const f = filter.split('/');
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length || (f[i] !== '+' && f[i] !== t[i])) return false;
  }
  return f.length === t.length;
}

module.exports = { topicsFor, checkName, checkPrefix, filterMatches };
