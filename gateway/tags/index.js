'use strict';

/**
 * Tags: named, typed values of a device (spec.js), read with the fewest requests (plan.js), decoded
 * where they are read (decode.js, reader.js), gated per tag (values.js), written by name (write.js),
 * and kept in CSV tag sheets (csv.js).
 */

module.exports = {
  ...require('./spec'),
  ...require('./plan'),
  ...require('./reader'),
  ...require('./values'),
  ...require('./write'),
  ...require('./csv')
};
