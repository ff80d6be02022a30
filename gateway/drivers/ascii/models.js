'use strict';

/**
 * The ED models whose `$AAM` name we recognise, with what they have (ascii-protocol-notes §2.1).
 * A device answering another name (renamed with `~AAO`, or another maker's) is not checked.
 */
const MODELS = Object.freeze({
  'ED-588': '8 digital inputs, 8 digital outputs',
  'ED-516': '16 digital inputs',
  'ED-527': '16 digital outputs',
  'ED-538': '8 digital inputs, 4 relays',
  'ED-549': '8 analog inputs',
  'ED-560': '4 analog outputs',
  'ED-582': '4 RTD inputs',
  'ED-593': '8 thermocouple inputs'
});

/**
 * Digital outputs of each model above, lines 0 to n - 1 (ascii-protocol-notes §2.1): what
 * `#AAAcDD` and `@AADD` may set. A line past them is answered `?AA` [HW: ED-588, line 8 and up],
 * so a write to one is refused before it is sent. null: not checked (the ED-538's relays sit at
 * bits 8-11 of its status [LIB], and how `#AA` addresses them is unverified).
 */
const DIGITAL_OUTPUTS = Object.freeze({
  'ED-588': 8,
  'ED-516': 0,
  'ED-527': 16,
  'ED-538': null,
  'ED-549': 0,
  'ED-560': 0,
  'ED-582': 0,
  'ED-593': 0
});

module.exports = { MODELS, DIGITAL_OUTPUTS };
