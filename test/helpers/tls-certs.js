'use strict';

/**
 * Throwaway certificates for the Modbus/TCP Security tests, made with the openssl CLI at test time
 * into a temp dir (once per process, removed at exit): nothing secret is checked in, nothing expires
 * in the repository.
 *
 *   ca            the CA the simulator and the client trust
 *   server        the device: CN localhost, subjectAltName IP:127.0.0.1 and DNS:localhost, signed by ca
 *   client        nines: signed by ca, extendedKeyUsage clientAuth, and the Modbus/TCP Security role
 *                 extension (OID 1.3.6.1.4.1.50316.802.1, an ASN.1 UTF8String) saying "Operator"
 *   expired       the device's key in a certificate signed by ca whose notAfter is a day before its
 *                 notBefore (`-days -1`, which OpenSSL 3.0's x509 takes): expired from the start
 *   selfSigned    a device certificate signed by its own key (CN localhost, the same subjectAltName)
 *   otherCa       a second CA nobody trusts, and otherServer / otherClient signed by it
 *
 * Each entry has the PEM text (`.pem`, keys `.key`) and the file path (`.file`, `.keyFile`).
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { assertTools } = require('./system-tools');

/** The role extension of the Modbus/TCP Security spec, as an openssl extension line */
const ROLE_OID = '1.3.6.1.4.1.50316.802.1';
const ROLE = 'Operator';

let made = null;

/** @param {string} dir @param {string[]} args */
function openssl (dir, args) {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/**
 * A key pair (EC P-256: fast to make) and a certificate signed by `ca`, or self-signed when ca is null.
 * @returns {{file: string, keyFile: string, pem: string, key: string}}
 */
function issue (dir, name, subject, ca, ext, days = '30') {
  const keyFile = path.join(dir, `${name}.key`);
  const file = path.join(dir, `${name}.crt`);
  if (ca === null) {
    // a CA, unless extensions say otherwise (a self-signed leaf)
    const exts = ext.length !== 0 ? ext : ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,keyCertSign,cRLSign'];
    openssl(dir, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', keyFile, '-out', file,
      '-days', days, '-subj', subject, ...exts.flatMap((e) => ['-addext', e])]);
  } else {
    const csr = path.join(dir, `${name}.csr`);
    const extFile = path.join(dir, `${name}.ext`);
    fs.writeFileSync(extFile, ext.join('\n') + '\n');
    openssl(dir, ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', keyFile, '-out', csr, '-subj', subject]);
    openssl(dir, ['x509', '-req', '-in', csr, '-CA', ca.file, '-CAkey', ca.keyFile, '-set_serial', String(Date.now() % 1e9 + name.length),
      '-days', days, '-extfile', extFile, '-out', file]);
  }
  return { file, keyFile, pem: fs.readFileSync(file, 'utf8'), key: fs.readFileSync(keyFile, 'utf8') };
}

/**
 * Reuses a key for a second certificate (the expired one): signs a new CSR of that key.
 * @returns {{file: string, keyFile: string, pem: string, key: string}}
 */
function reissue (dir, name, from, ca, ext, days) {
  const file = path.join(dir, `${name}.crt`);
  const csr = path.join(dir, `${name}.csr`);
  const extFile = path.join(dir, `${name}.ext`);
  fs.writeFileSync(extFile, ext.join('\n') + '\n');
  openssl(dir, ['req', '-new', '-key', from.keyFile, '-out', csr, '-subj', '/CN=localhost']);
  openssl(dir, ['x509', '-req', '-in', csr, '-CA', ca.file, '-CAkey', ca.keyFile, '-set_serial', '7', '-days', days, '-extfile', extFile, '-out', file]);
  return { file, keyFile: from.keyFile, pem: fs.readFileSync(file, 'utf8'), key: from.key };
}

/**
 * @returns {{dir: string, ca: any, server: any, client: any, expired: any, selfSigned: any, otherCa: any, otherServer: any, otherClient: any, role: string, roleOid: string}}
 */
function makeCerts () {
  if (made !== null) return made;
  assertTools(['openssl']);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-tls-'));
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  const serverExt = ['subjectAltName=IP:127.0.0.1,DNS:localhost', 'extendedKeyUsage=serverAuth', 'basicConstraints=CA:FALSE'];
  const clientExt = ['extendedKeyUsage=clientAuth', 'basicConstraints=CA:FALSE', `${ROLE_OID}=ASN1:UTF8String:${ROLE}`];
  const ca = issue(dir, 'ca', '/CN=nines test CA', null, []);
  const server = issue(dir, 'server', '/CN=localhost', ca, serverExt);
  const client = issue(dir, 'client', '/CN=nines gateway', ca, clientExt);
  const expired = reissue(dir, 'expired', server, ca, serverExt, '-1');
  const selfSigned = issue(dir, 'self-signed', '/CN=localhost', null, serverExt);
  const otherCa = issue(dir, 'other-ca', '/CN=someone else CA', null, []);
  const otherServer = issue(dir, 'other-server', '/CN=localhost', otherCa, serverExt);
  const otherClient = issue(dir, 'other-client', '/CN=stranger', otherCa, clientExt);
  made = { dir, ca, server, client, expired, selfSigned, otherCa, otherServer, otherClient, role: ROLE, roleOid: ROLE_OID };
  return made;
}

/**
 * Both ends' TLS options for a test over Modbus/TCP Security: the server's, which require a client
 * certificate signed by the test CA, and the client's, which present one and trust that CA.
 * @returns {{server: {cert: string, key: string, ca: string}, client: {ca: string, cert: string, key: string}}}
 */
function tlsPair () {
  const c = makeCerts();
  return { server: { cert: c.server.pem, key: c.server.key, ca: c.ca.pem }, client: { ca: c.ca.pem, cert: c.client.pem, key: c.client.key } };
}

module.exports = { makeCerts, tlsPair, ROLE_OID };
