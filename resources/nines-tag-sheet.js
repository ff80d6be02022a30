/**
 * A CSV tag sheet into the tag list of a nines-poll, nines-modbus-read or nines-modbus-write dialog
 * (resources/nines-tags.js calls it; it defines window.NinesTagSheet once). The runtime parses the
 * sheet (POST nines-tags/sheet): a sheet that does not parse changes nothing and says its line and
 * column; one that does has its problems listed by line and column. Into an empty list its rows go at
 * once; a list that holds tags asks first: replace it, append the sheet's rows (refused while a name
 * of the sheet is in the list already: the runtime refuses two tags of one name), or cancel.
 */
(function () {
    'use strict';
    if (window.NinesTagSheet) { return; }

    /**
     * @typedef {object} SheetTarget what the sheet goes into
     * @property {jQuery} area where the sheet's outcome and the question show
     * @property {function(string, object=): string} t the list's catalog
     * @property {string} protocol modbus|ascii
     * @property {string} [device] the device config node's id
     * @property {function(): object[]} tags the list's tags as they are
     * @property {function(object[], boolean): void} put adds the sheet's tags (true: after the list's; false: instead of them)
     */

    /**
     * Reads a sheet into a list: parsed by the runtime, then put in, after asking when the list holds tags.
     * @param {SheetTarget} target
     * @param {string} text the file's text
     * @param {string} fileName
     */
    function read(target, text, fileName) {
        var t = target.t;
        var area = target.area;
        $.ajax({
            url: 'nines-tags/sheet',
            method: 'POST',
            contentType: 'application/json',
            dataType: 'json',
            data: JSON.stringify({ protocol: target.protocol, device: target.device || undefined, text: text })
        }).done(function (r) {
            area.empty().show();
            if (r.error) {
                // a sheet that does not parse changes nothing
                area.addClass('nines-tags-sheet-error').text(t('sheetError', { file: fileName, message: r.error.message }));
                return;
            }
            area.removeClass('nines-tags-sheet-error');
            var held = target.tags().length;
            if (held === 0) { take(target, r, fileName, false); } else { ask(target, r, fileName, held); }
        }).fail(function (xhr) {
            var e = xhr.responseJSON && xhr.responseJSON.error;
            area.show().addClass('nines-tags-sheet-error').text(t('sheetError', { file: fileName, message: e ? e.message : xhr.statusText }));
        });
    }

    /** Asks what a sheet does to a list that holds tags: replace it, be appended to it, or nothing. */
    function ask(target, r, fileName, held) {
        var t = target.t;
        var area = target.area;
        area.empty().append($('<div></div>').text(t('ask', { file: fileName, count: r.tags.length, held: held })));
        var bar = $('<div style="margin-top: 4px;"></div>').appendTo(area);
        var note = $('<div id="nines-tags-sheet-note" style="margin-top: 4px; color: var(--red-ui-text-color-error, #d6615f);"></div>').appendTo(area);
        var button = function (id, key, fn) {
            $('<button type="button" class="red-ui-button red-ui-button-small" style="margin-right: 6px;"></button>')
                .attr('id', id).text(t(key)).on('click', fn).appendTo(bar);
        };
        button('nines-tags-sheet-replace', 'replace', function () { take(target, r, fileName, false); });
        button('nines-tags-sheet-append', 'append', function () {
            var repeated = window.NinesTagRows.repeatedNames(target.tags(), r.tags);
            if (repeated.length === 0) { take(target, r, fileName, true); return; }
            // nothing is appended: the list would hold two tags of one name
            note.text(t('appendRefused', { file: fileName, count: repeated.length, names: repeated.join(', ') }));
        });
        button('nines-tags-sheet-cancel', 'cancelImport', function () { area.empty().hide(); });
    }

    /** A parsed sheet's rows replace the list, or go after its rows; the sheet's problems are listed. */
    function take(target, r, fileName, append) {
        var area = target.area;
        area.empty().show().text(target.t(append ? 'appended' : 'imported', { file: fileName, count: r.tags.length }));
        if (r.problems.length) {
            var ul = $('<ul style="margin: 4px 0 0 18px;"></ul>').appendTo(area);
            r.problems.forEach(function (p) { $('<li></li>').text(p.text).appendTo(ul); });
        }
        target.put(r.tags, append);
    }

    window.NinesTagSheet = { read: read };
})();
