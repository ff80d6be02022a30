'use strict';

/**
 * ED-588 outputs as data instead of hex: msg.payload `{outputs: [true, false, …]}` sets all eight
 * at once (`@AADD`, output 0 in bit 0), `{line: 3, value: true}` sets one (`#AAA3 01`), built by the
 * driver's command builders (gateway/drivers/ascii/command.js) with the device's address. Checked
 * strictly before anything is sent: these move real outputs, so a payload with a key that is
 * neither (an `@AA` reply passed on, `{outputs, inputs, value}`) is refused, not half-used.
 */

const { setAllOutputs, setOutput } = require('../../gateway/drivers/ascii/command');
const { MODELS, DIGITAL_OUTPUTS } = require('../../gateway/drivers/ascii/models');
const { invalidArg } = require('./errors');
// an output takes the values a coil does
const { onOff } = require('./modbus-msg');

/** Outputs `@AADD` sets: one byte [HW-indirect] */
const OUTPUT_COUNT = 8;
/** Lines `#AAAcDD` / `#AABcDD` reach (16-output models; an ED-588 has 0-7 and answers `?` past them) */
const MAX_LINE = 15;
const KEYS = ['outputs', 'line', 'value'];

/**
 * @param {unknown} payload msg.payload
 * @returns {boolean} true when the payload asks to set outputs (it has outputs, line or value)
 */
function isOutputsPayload (payload) {
  return payload !== null && typeof payload === 'object' && !Array.isArray(payload) && !Buffer.isBuffer(payload) &&
    KEYS.some((k) => Object.prototype.hasOwnProperty.call(payload, k));
}

/**
 * The command that sets the outputs a payload asks for.
 * @param {object} payload `{outputs: boolean[8]}` or `{line: 0-15, value: boolean}`
 * @param {string} address the module's address, two hex digits
 * @returns {string} `@AADD` or `#AAAcDD`
 * @throws {NinesError} NINES_ERR_INVALID_ARG (shape: a missing, extra or mixed key, a bad line) or
 *   NINES_ERR_INVALID_VALUE (an output value that is not on or off), naming the msg property
 */
function outputsCommand (payload, address) {
  for (const k of Object.keys(payload)) {
    if (!KEYS.includes(k)) throw invalidArg(`msg.payload.${k}`, `msg.payload.${k} is not used to set outputs; send { outputs: [8 booleans] } or { line: 3, value: true } alone`);
  }
  if (payload.outputs !== undefined) {
    if (payload.line !== undefined || payload.value !== undefined) {
      throw invalidArg('msg.payload', 'msg.payload gives both outputs and line/value; send { outputs: [8 booleans] } or { line: 3, value: true }');
    }
    const list = payload.outputs;
    if (!Array.isArray(list) || list.length !== OUTPUT_COUNT) {
      throw invalidArg('msg.payload.outputs', `msg.payload.outputs must be an array of ${OUTPUT_COUNT} booleans, output 0 first; got ${describe(list)}`);
    }
    let byte = 0;
    list.forEach((v, i) => { if (onOff(v, `msg.payload.outputs[${i}]`)) byte |= 1 << i; });
    return setAllOutputs(address, byte);
  }
  const line = payload.line;
  if (!Number.isInteger(line) || line < 0 || line > MAX_LINE) {
    throw invalidArg('msg.payload.line', `msg.payload.line must be an integer from 0 to ${MAX_LINE} (an ED-588 has outputs 0-7); got ${describe(line)}`);
  }
  if (payload.value === undefined) throw invalidArg('msg.payload.value', 'msg.payload.value is missing: true sets the line on, false off');
  return setOutput(address, line, onOff(payload.value, 'msg.payload.value'));
}

/**
 * Checks a payload that outputsCommand() accepted against the outputs the module has, once its
 * model is known (its `$AAM` name): `{line: 9}` to an ED-588 is refused here, not by the device
 * after it was sent (issue 21). A model not in the table, or not checked there, passes.
 * @param {object} payload
 * @param {string|null} model the module's `$AAM` name, or null when unknown
 * @throws {NinesError} NINES_ERR_INVALID_ARG naming msg.payload.line or msg.payload.outputs
 */
function checkOutputsOf (payload, model) {
  if (model === null || !Object.hasOwn(DIGITAL_OUTPUTS, model) || DIGITAL_OUTPUTS[model] === null) return;
  const n = DIGITAL_OUTPUTS[model];
  if (n === 0) {
    throw invalidArg(payload.outputs !== undefined ? 'msg.payload.outputs' : 'msg.payload.line', `this module is an ${model} (${MODELS[model]}): it has no digital outputs to set`);
  }
  if (payload.line !== undefined && payload.line >= n) {
    throw invalidArg('msg.payload.line', `msg.payload.line ${payload.line} is past the outputs of this ${model}: it has lines 0-${n - 1}`);
  }
  if (payload.outputs !== undefined && n < OUTPUT_COUNT) {
    const beyond = payload.outputs.findIndex((v, i) => i >= n && onOff(v, `msg.payload.outputs[${i}]`));
    if (beyond >= 0) throw invalidArg(`msg.payload.outputs[${beyond}]`, `msg.payload.outputs[${beyond}] is on, but this ${model} has outputs 0-${n - 1} only`);
  }
}

function describe (v) {
  if (Array.isArray(v)) return `an array of ${v.length}`;
  return v === undefined ? 'nothing' : JSON.stringify(v);
}

module.exports = { isOutputsPayload, outputsCommand, checkOutputsOf, OUTPUT_COUNT };
