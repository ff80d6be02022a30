/**
 * "Scan line" in the nines-modbus-device dialog (window.NinesScan): asks the runtime to scan the
 * line the dialog holds (nodes/lib/scan-admin.js, the same scan as `nines scan`), shows its bound
 * before it runs, the units as they are found, then each unit's identity and readable ranges. The
 * user may put the units found into the dialog's unit list, and save a starter CSV tag sheet per
 * unit, which the tag lists of nines-poll, -read and -write import. The runtime checks everything;
 * this file only shows what it says. Plain ES5, no dependencies.
 */
(function () {
    'use strict';
    if (window.NinesScan) { return; }

    var NS = 'node-red-contrib-nines/nines-modbus-device:nines-modbus-device.scan.';
    /** How often the dialog asks how the scan is going (ms) */
    var POLL_MS = 400;
    var LINE_FIELDS = ['transport', 'host', 'port', 'path', 'baudRate', 'parity', 'dataBits', 'stopBits'];
    var TABLES = ['coil', 'discrete', 'input', 'holding'];

    function t(key, opts) { return RED._(NS + key, opts); }
    function seconds(ms) { return (ms / 1000).toFixed(1); }
    function text(s) { return $('<span>').text(s); }

    /** "0-99,200" for a table's readable ranges */
    function ranges(m) {
        if (!m) { return ''; }
        var out = m.ranges.map(function (r) { return r[0] === r[1] ? String(r[0]) : r[0] + '-' + r[1]; }).join(',') || '-';
        return m.complete ? out : out + ' (' + t('cutShort') + ')';
    }

    /** Offers a text as a file download, as the browser saves one */
    function download(name, body) {
        var url = URL.createObjectURL(new Blob([body], { type: 'text/csv' }));
        var a = $('<a>').attr({ href: url, download: name }).appendTo(document.body);
        a[0].click();
        a.remove();
        setTimeout(function () { URL.revokeObjectURL(url); }, 1000);
    }

    /**
     * Wires the scan part of an open device dialog.
     * @param {{button: jQuery, units: jQuery, timeout: jQuery, out: jQuery}} ui
     */
    function attach(ui) {
        var timer = null;
        var stop = function () { if (timer !== null) { clearTimeout(timer); timer = null; } };

        function busy(on) { ui.button.prop('disabled', on).toggleClass('disabled', on); }

        function failed(err) {
            busy(false);
            ui.out.empty().append($('<div class="nines-scan-error" style="color: var(--red-ui-text-color-error, #d00);">')
                .text((err.code ? err.code + ': ' : '') + err.message));
        }

        function show(s) {
            ui.out.empty();
            ui.out.append($('<div class="nines-scan-bound">').text(t('bound', {
                units: s.units, line: s.line, timeout: s.timeoutMs, bound: seconds(s.boundMs), max: seconds(s.maxDurationMs)
            })));
            if (s.state === 'running') {
                ui.out.append($('<div class="nines-scan-progress">').text(t('running', { found: s.found.length ? s.found.join(', ') : '-' })));
                return;
            }
            if (s.state === 'failed') { failed(s.error); return; }
            var report = s.report;
            ui.out.append($('<div class="nines-scan-summary">').text(t('done', { count: report.units.length, seconds: seconds(report.elapsedMs), requests: report.requests })));
            if (report.units.length === 0) { return; }
            var table = $('<table class="nines-scan-units" style="width: 100%; margin-top: 4px;">').appendTo(ui.out);
            var head = $('<tr>').appendTo(table);
            [t('unit'), t('identity')].concat(TABLES).concat(['']).forEach(function (h) { $('<th style="text-align: left;">').text(h).appendTo(head); });
            report.units.forEach(function (u) {
                var id = u.identity;
                var who = id.supported ? [id.vendorName, id.productCode, id.revision].filter(Boolean).join(' ') + (id.productName ? ' (' + id.productName + ')' : '') : t('noIdentity');
                var row = $('<tr class="nines-scan-unit">').attr('data-unit', u.unitId).appendTo(table);
                $('<td>').text(u.unitId).appendTo(row);
                $('<td class="nines-scan-identity">').text(who).appendTo(row);
                TABLES.forEach(function (tb) { $('<td>').text(u.map ? ranges(u.map[tb]) : '').appendTo(row); });
                var cell = $('<td>').appendTo(row);
                if (s.sheets && s.sheets[u.unitId]) {
                    $('<button type="button" class="red-ui-button red-ui-button-small nines-scan-sheet">').text(t('sheet')).appendTo(cell)
                        .on('click', function () { download('unit' + u.unitId + '.csv', s.sheets[u.unitId]); });
                }
            });
            var use = $('<button type="button" class="red-ui-button nines-scan-use" style="margin-top: 6px;">').text(t('useUnits', { units: s.unitList })).appendTo(ui.out);
            use.on('click', function () {
                var ids = report.units.map(function (u) { return u.unitId; });
                var unitId = $('#node-config-input-unitId');
                if (ids.indexOf(Number(unitId.val())) < 0) { unitId.val(ids[0]).trigger('change'); }
                $('#node-config-input-units').val(ids.length > 1 ? s.unitList : '').trigger('change');
            });
            ui.out.append($('<div class="form-tips" style="margin-top: 6px;">').append(text(t('sheetTip'))));
        }

        function poll(id) {
            timer = setTimeout(function () {
                timer = null;
                // the dialog was closed: stop asking
                if (!$.contains(document.documentElement, ui.out[0])) { return; }
                $.ajax({ url: 'nines-scan/' + encodeURIComponent(id), dataType: 'json' }).done(function (s) {
                    show(s);
                    if (s.state === 'running') { poll(id); } else { busy(false); }
                }).fail(function (xhr) { failed(errorOf(xhr)); });
            }, POLL_MS);
        }

        ui.button.on('click', function () {
            stop();
            var body = { units: ui.units.val(), timeout: ui.timeout.val() };
            LINE_FIELDS.forEach(function (f) {
                var el = $('#node-config-input-' + f);
                if (el.length) { body[f] = el.val(); }
            });
            busy(true);
            ui.out.empty().append($('<div>').text(t('starting')));
            $.ajax({ url: 'nines-scan', method: 'POST', contentType: 'application/json', dataType: 'json', data: JSON.stringify(body) })
                .done(function (s) { show(s); poll(s.id); })
                .fail(function (xhr) { failed(errorOf(xhr)); });
        });
        return { stop: stop };
    }

    function errorOf(xhr) {
        var r = xhr.responseJSON;
        if (r && r.error) { return r.error; }
        return { code: '', message: t('httpFailed', { status: xhr.status }) };
    }

    window.NinesScan = { attach: attach };
}());
