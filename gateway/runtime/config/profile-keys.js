'use strict';

/**
 * What a profile (profiles.js) may hold of a device entry, and what of it a unit of a line takes.
 * One list each, read by the schema and by the profile resolver.
 */

/** Quirks: how a device (or a unit of a line) shapes requests and reads its tags; a unit may set its own */
const QUIRKS = Object.freeze(['maxGap', 'maxRegistersPerRequest', 'maxBitsPerRequest', 'addressBase', 'order', 'unsupportedFunctionCodes']);
/**
 * A device's timing and connections: a profile may give them, but they belong to a whole device (on
 * a line, to the line: one timing for every unit), so a profile named by a unit may not
 */
const DEVICE_ONLY = Object.freeze(['timeout', 'connectTimeout', 'queue', 'maxConnections', 'maxInflight', 'interFrameDelay', 'delayAfterConnect']);
/** Every field of a profile that a device entry has too (tags and scan merge by group and class) */
const PROFILE_FIELDS = Object.freeze([...QUIRKS, ...DEVICE_ONLY]);

module.exports = { QUIRKS, DEVICE_ONLY, PROFILE_FIELDS };
