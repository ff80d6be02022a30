'use strict';

const net = require('node:net');
const D = require('./defaults');
const C = require('../../base/constants');
const { isMap, durationField } = require('./fields');
const { exposureProblem } = require('../loopback');

/**
 * @typedef {object} EndpointConfig where gateway.metrics or gateway.http listens
 * @property {string} host
 * @property {number} port 0 picks a free one
 * @property {number} maxConnections open connections at most; more are closed at accept
 * @property {{username: string, password: string, passwordSource: 'file'|'env'}|null} login
 *   HTTP Basic login every request needs (null: none, allowed on loopback only: ../loopback.js)
 * @property {number} [windowIntervals] status page only: intervals merged for its percentiles
 * @property {number[]} [bucketsNs] metrics endpoint only: the classic histogram buckets' upper bounds, ns, ascending
 */

const LISTEN_RE = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]\s]+)):(\d{1,5})$/;

/**
 * Parses `host:port`, `[v6]:port` or a bare port (loopback).
 * @param {string|number} listen
 * @param {string} defaultHost
 * @returns {{host: string, port: number}|{rule: string}}
 */
function parseListen (listen, defaultHost) {
  if (typeof listen === 'number') {
    return Number.isInteger(listen) && listen >= 0 && listen <= 65535 ? { host: defaultHost, port: listen } : { rule: 'must be a port from 0 to 65535' };
  }
  const m = LISTEN_RE.exec(listen);
  if (!m) return { rule: 'must be "host:port" such as "127.0.0.1:9464" or "[::1]:9464", or a port number (then on 127.0.0.1)' };
  const host = m[1] !== undefined ? m[1] : m[2];
  if (m[1] !== undefined && net.isIPv6(host) === false) return { rule: `has "${host}" in brackets, which is not an IPv6 address` };
  const port = Number(m[3]);
  if (port > 65535) return { rule: `has port ${port}; a port is from 0 to 65535` };
  return { host, port };
}

/**
 * Semantic checks of gateway.metrics or gateway.http (the schema checked the types).
 * @param {import('./problems').Problems} problems
 * @param {'metrics'|'http'} key
 * @param {*} raw the section as written; undefined when omitted (off)
 * @param {Record<string, string|undefined>} env for the password variable
 * @returns {EndpointConfig|null} null when off
 */
function checkEndpoint (problems, key, raw, env) {
  if (raw === undefined) return null;
  if (!isMap(raw)) return null; // reported by the schema
  const at = (field) => ['gateway', key, field];
  const defHost = key === 'metrics' ? D.METRICS_LISTEN_HOST : D.HTTP_LISTEN_HOST;
  const defPort = key === 'metrics' ? D.METRICS_LISTEN_PORT : D.HTTP_LISTEN_PORT;
  const envName = key === 'metrics' ? D.METRICS_PASSWORD_ENV : D.HTTP_PASSWORD_ENV;
  let host = defHost;
  let port = defPort;
  if (typeof raw.listen === 'string' || typeof raw.listen === 'number') {
    const got = parseListen(raw.listen, defHost);
    if ('rule' in got) problems.add(at('listen'), raw.listen, got.rule);
    else ({ host, port } = got);
  }
  const username = typeof raw.username === 'string' && raw.username !== '' ? raw.username : null;
  if (username !== null && username.includes(':')) {
    // RFC 7617: the user-id cannot contain a colon; a client sends "user:password" and the server
    // splits at the first colon, so this login could never match
    problems.add(at('username'), raw.username, 'must not contain ":" (HTTP Basic splits the user name from the password at the first colon, so this login could never match)');
  }
  let password = typeof raw.password === 'string' && raw.password !== '' ? raw.password : null;
  let passwordSource = password !== null ? 'file' : null;
  const envPassword = env ? env[envName] : undefined;
  if (password === null && raw.password === undefined && typeof envPassword === 'string' && envPassword !== '') {
    password = envPassword;
    passwordSource = 'env';
  }
  if (username !== null && password === null && raw.password === undefined) {
    problems.add(at('password'), undefined, `is required with gateway.${key}.username (or set ${envName})`);
  } else if (password !== null && username === null && raw.username === undefined) {
    problems.add(at('username'), undefined, passwordSource === 'env' ? `is required: the password comes from ${envName}` : `is required with gateway.${key}.password`);
  } else if (!problems.has(at('listen'))) {
    // the same rule as the embedded broker's: the page shows job and device names, targets and
    // health, the metrics the same names and rates; beyond this machine, only with a login
    const exposed = exposureProblem(host, username !== null && password !== null);
    if (exposed !== null) problems.add(at('listen'), raw.listen, `${exposed} (${host}); set gateway.${key}.username and gateway.${key}.password (or ${envName}) so that it asks for a login, or listen on 127.0.0.1`);
  }
  const out = {
    host,
    port,
    maxConnections: Number.isInteger(raw.maxConnections) ? raw.maxConnections : D.HTTP_MAX_CONNECTIONS,
    login: username !== null && password !== null ? { username, password, passwordSource } : null
  };
  if (key === 'http') out.windowIntervals = Number.isInteger(raw.window) ? raw.window : D.HTTP_WINDOW_INTERVALS;
  if (key === 'metrics') out.bucketsNs = checkBuckets(problems, at('buckets'), raw.buckets);
  return out;
}

/**
 * gateway.metrics.buckets: the classic histogram buckets' upper bounds, durations in ascending
 * order, each a whole number of ns within the HDR histograms' range (the counts come from them).
 * @param {import('./problems').Problems} problems
 * @param {Array<string|number>} segs
 * @param {*} raw as written; undefined for the default
 * @returns {number[]} ns, ascending; the default when omitted or wrong
 */
function checkBuckets (problems, segs, raw) {
  // omitted, or reported by the schema (not a list, or too long)
  if (!Array.isArray(raw) || raw.length > D.METRICS_MAX_BUCKETS) return D.METRICS_BUCKETS_NS;
  const out = [];
  for (const [i, v] of raw.entries()) {
    const ms = durationField(problems, [...segs, i], v, { def: null });
    if (ms === null) return D.METRICS_BUCKETS_NS;
    const ns = Math.round(ms * 1e6);
    if (ns < C.HIST_LOWEST_NS || ns > C.HIST_HIGHEST_NS) {
      problems.add([...segs, i], v, 'must be from 1ns to 1h (the range of the latency histograms the buckets are counted from)');
      return D.METRICS_BUCKETS_NS;
    }
    if (out.length > 0 && ns <= out[out.length - 1]) {
      problems.add([...segs, i], v, `must be longer than the bucket before it (${JSON.stringify(raw[i - 1])}): buckets go in ascending order, each once`);
      return D.METRICS_BUCKETS_NS;
    }
    out.push(ns);
  }
  return out;
}

module.exports = { checkEndpoint, parseListen };
