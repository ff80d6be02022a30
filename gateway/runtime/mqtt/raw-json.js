'use strict';

/**
 * The raw text of a value in a JSON payload, as it was sent: JSON.parse turns 1e309 into Infinity and
 * 1.0 into 1, so a refusal that showed the parsed value would not show what the client sent. Node 20
 * has no JSON.parse source access, so the text is found with the yaml package (a YAML 1.2 parser, and
 * JSON is YAML), which keeps each node's source range; only when a refusal asks for it.
 */

/**
 * @param {string} text a payload that JSON.parse accepted
 * @param {string[]} prefix the path of the object whose members are asked for, e.g. ['values']
 * @returns {(key: string) => string|undefined} the raw text of prefix.key; undefined when not found
 */
function rawTextOf (text, prefix) {
  let doc = null;
  return (key) => {
    try {
      if (doc === null) doc = require('yaml').parseDocument(text);
      const node = doc.getIn([...prefix, key], true);
      return node && node.range ? text.slice(node.range[0], node.range[1]) : undefined;
    } catch {
      return undefined;
    }
  };
}

module.exports = { rawTextOf };
