/**
 * The "Units on this line" field of the nines-modbus-device dialog ("1-10, 12"), read the same way
 * in the browser and at runtime: Node-RED serves this file to the editor at
 * resources/node-red-contrib-nines/nines-units.js (window.NinesUnits), and nodes/lib/device-config.js
 * requires it. One reading, so the dialog cannot accept a list the runtime refuses, and its tooltip
 * says what the deploy would say. The runtime then builds the device spec, which checks every unit
 * id again (gateway/devices/spec.js stays the authority on them).
 *
 * Plain ES5 and no dependencies: it runs in the editor as it is.
 */
(function (root, factory) {
    'use strict';
    var api = factory();
    if (typeof module === 'object' && module.exports) { module.exports = api; } else { root.NinesUnits = api; }
}(this, function () {
    'use strict';

    /** Units one line may hold (gateway/devices/spec.js MAX_UNITS) */
    var MAX_UNITS = 247;
    /** Longest text read: 247 ids written one by one, with separators, fit well within it */
    var MAX_TEXT = 2000;
    /** A unit id, or a range of them: "12", "1-10" (an en dash, as documents print it, reads as "-") */
    var ITEM = /^(\d{1,3})(?:[-\u2013](\d{1,3}))?$/;

    /**
     * Whether a unit id may be on a line of this transport: 1-247 on a serial line, here or behind a
     * serial server (0 is broadcast, which nobody answers; 248-255 are reserved); 0-247 or 255
     * behind a Modbus TCP gateway (0 and 255 address the gateway itself).
     * @param {number} id
     * @param {string} transport 'tcp', 'rtu' or 'rtutcp'
     * @returns {boolean}
     */
    function allowed(id, transport) {
        return transport === 'tcp' ? (id >= 0 && id <= 247) || id === 255 : id >= 1 && id <= 247;
    }

    /** @returns {string} the rule for unit ids of this transport, as messages state it */
    function rule(transport) {
        return transport === 'tcp' ? '0-247 or 255 on Modbus TCP' : '1-247 on a serial line (0 is broadcast, which nobody answers)';
    }

    /**
     * Reads a list of unit ids and ranges, separated by commas or spaces: "1-10, 12".
     * @param {unknown} text the field's value; empty: the device is one unit, not a line
     * @param {string} transport 'tcp', 'rtu' or 'rtutcp'
     * @returns {{ids: number[]|null, error: string|null}} ids in the order given (null for an empty
     *   field), or the first problem, stated with the value and the rule
     */
    function parse(text, transport) {
        if (text === undefined || text === null) { return { ids: null, error: null }; }
        if (typeof text !== 'string') { return { ids: null, error: 'must be text such as "1-10, 12"' }; }
        if (text.trim() === '') { return { ids: null, error: null }; }
        if (text.length > MAX_TEXT) { return { ids: null, error: 'is longer than ' + MAX_TEXT + ' characters' }; }
        // "1 - 10" is a range, "1 10" two ids
        var items = text.trim().replace(/\s*([-\u2013])\s*/g, '$1').split(/\s*,\s*|\s+/);
        var ids = [];
        var seen = {};
        for (var i = 0; i < items.length; i++) {
            var item = items[i].trim();
            if (item === '') { return { ids: null, error: 'has an empty item: give unit ids or ranges separated by commas, such as "1-10, 12"' }; }
            var m = ITEM.exec(item);
            if (!m) { return { ids: null, error: 'has "' + item + '", which is neither a unit id nor a range such as 1-10' }; }
            var lo = Number(m[1]);
            var hi = m[2] === undefined ? lo : Number(m[2]);
            if (hi < lo) { return { ids: null, error: 'has the range ' + item + ', which runs backwards' }; }
            for (var id = lo; id <= hi; id++) {
                if (!allowed(id, transport)) { return { ids: null, error: 'has unit id ' + id + ': unit ids are ' + rule(transport) }; }
                if (seen[id]) { return { ids: null, error: 'has unit id ' + id + ' twice' }; }
                seen[id] = true;
                ids.push(id);
                if (ids.length > MAX_UNITS) { return { ids: null, error: 'has more than ' + MAX_UNITS + ' units, the most one line may hold' }; }
            }
        }
        return { ids: ids, error: null };
    }

    /**
     * A list of unit ids written short, for messages: [1, 2, 3, 5] → "1-3, 5".
     * @param {number[]} ids
     * @returns {string}
     */
    function format(ids) {
        var sorted = ids.slice().sort(function (a, b) { return a - b; });
        var out = [];
        for (var i = 0; i < sorted.length; i++) {
            var j = i;
            while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) { j++; }
            out.push(j > i ? sorted[i] + '-' + sorted[j] : String(sorted[i]));
            i = j;
        }
        return out.join(', ');
    }

    /**
     * The name a unit of a line gets from its id: it names the unit in the device's health
     * (nines-device-status's payload.units).
     * @param {number} id
     * @returns {string}
     */
    function unitName(id) {
        return 'unit-' + id;
    }

    return { parse: parse, format: format, unitName: unitName, allowed: allowed, MAX_UNITS: MAX_UNITS };
}));
