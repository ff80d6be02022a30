'use strict';

/**
 * The shared worker pool's settings, from Node-RED's settings.js:
 *
 *     nines: { workers: 2 }   // threads of the pool; default: cores − 1 (at least 1)
 *
 * One pool serves every nines device and poll node of the runtime (gateway/workers/shared.js); the
 * first user starts it with these settings and the last one out stops it.
 */

/** The `gateway` field of the summaries that nodes publish */
const GATEWAY = 'node-red';

/**
 * @param {object} RED
 * @param {(text: string) => void} [warn] told when the setting is not usable (the default is used)
 * @returns {{workers: number|'auto', gateway: string}}
 */
function poolSettings (RED, warn = () => {}) {
  let nines;
  try {
    nines = RED.settings && RED.settings.nines;
  } catch (err) {
    nines = undefined; // a settings object that throws on unknown keys
  }
  const workers = nines && typeof nines === 'object' ? nines.workers : undefined;
  if (workers === undefined || workers === 'auto') return { workers: 'auto', gateway: GATEWAY };
  if (Number.isInteger(workers) && workers >= 1 && workers <= 256) return { workers, gateway: GATEWAY };
  warn(`settings.js nines.workers must be "auto" or a whole number from 1 to 256; got ${JSON.stringify(workers)}: using cores − 1`);
  return { workers: 'auto', gateway: GATEWAY };
}

module.exports = { poolSettings, GATEWAY };
