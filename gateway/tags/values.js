'use strict';

/**
 * What "changed" means for a poll of tags: a tag's quality changed, or its value moved by more than
 * its deadband (in engineering units; the job's deadband for tags without their own). The value
 * gate (values/gate.js) compares each poll with what it last emitted, so slow drift is published
 * once it adds up to the deadband, never lost in per-poll steps. "More than" is decided as
 * rounding.js exceedsDeadband says: a step of exactly the deadband (70.1 → 70.2 at 0.1) is not more.
 */

const { exceedsDeadband } = require('../values/rounding');

/**
 * @param {import('./spec').Tag[]} tags
 * @param {number} [jobDeadband=0] for tags with no deadband of their own
 * @returns {{compare: (ref: object, next: object) => boolean, changedNames: (ref: object|undefined, next: object) => string[]}}
 *   both take poll results ({values, quality} by tag name)
 */
function tagComparer (tags, jobDeadband = 0) {
  const names = tags.map((t) => t.name);
  const bands = tags.map((t) => (t.deadband === null ? jobDeadband : t.deadband));
  const differs = (ref, next, i) => {
    const name = names[i];
    if (ref.quality[name] !== next.quality[name]) return true;
    const a = ref.values[name];
    const b = next.values[name];
    if (typeof a === 'number' && typeof b === 'number') return exceedsDeadband(a, b, bands[i]) || Number.isNaN(a) !== Number.isNaN(b);
    return a !== b;
  };
  return {
    compare (ref, next) {
      for (let i = 0; i < names.length; i++) if (differs(ref, next, i)) return true;
      return false;
    },
    changedNames (ref, next) {
      if (ref === undefined) return names.slice();
      const out = [];
      for (let i = 0; i < names.length; i++) if (differs(ref, next, i)) out.push(names[i]);
      return out;
    }
  };
}

module.exports = { tagComparer };
