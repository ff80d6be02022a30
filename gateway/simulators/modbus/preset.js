'use strict';

/**
 * Initial values of a simulator's model: zeros unless asked (predictable tests), a self-describing 'pattern', or
 * explicit values per bank and start address.
 */

const { invalid, objectOption, noUnknownKeys } = require('./validate');

const BIT_BANKS = Object.freeze(['coils', 'discreteInputs']);
const BANKS = Object.freeze([...BIT_BANKS, 'holdingRegisters', 'inputRegisters']);

/**
 * Fills the banks from a preset: 'pattern' (holding register i = i, input register i = 1000 + i, coil i = i odd,
 * discrete input i = i multiple of 3: every value tells its own address, so an off-by-one shows at once) or
 * 'signature' (each unit's values derived from its id and the address: model.js signatureValue), or
 * `{bank: {startAddress: values[]}}`.
 * @param {import('./model').ModbusModel} model
 * @param {unknown} preset
 */
function applyPreset (model, preset) {
  if (preset === undefined) return;
  if (preset === 'signature') {
    // every unit answers values derived from its id and the address (model.js signatureValue)
    model.useSignature();
    return;
  }
  if (preset === 'pattern') {
    const { coils, discreteInputs, holdingRegisters, inputRegisters } = model.banks;
    for (let i = 0; i < holdingRegisters.length; i++) holdingRegisters[i] = i & 0xFFFF;
    for (let i = 0; i < inputRegisters.length; i++) inputRegisters[i] = (1000 + i) & 0xFFFF;
    for (let i = 0; i < coils.length; i++) coils[i] = i & 1;
    for (let i = 0; i < discreteInputs.length; i++) discreteInputs[i] = i % 3 === 0 ? 1 : 0;
    return;
  }
  if (preset === null || typeof preset !== 'object' || Array.isArray(preset)) {
    invalid('preset', preset, "'pattern', 'signature' or an object like {holdingRegisters: {0: [1, 2, 3]}}");
  }
  const p = /** @type {Record<string, any>} */ (preset);
  noUnknownKeys(p, 'preset', BANKS);
  for (const bank of BANKS) {
    const starts = objectOption(p[bank], `preset.${bank}`);
    for (const key of Object.keys(starts)) {
      if (!/^\d+$/.test(key)) invalid(`preset.${bank}`, key, 'keyed by decimal start addresses');
      const values = starts[key];
      if (!Array.isArray(values)) invalid(`preset.${bank}.${key}`, values, 'an array of values');
      if (BIT_BANKS.includes(bank)) model.setBits(bank, Number(key), values);
      else model.setRegisters(bank, Number(key), values);
    }
  }
}

module.exports = { applyPreset };
