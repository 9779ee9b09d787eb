import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { testTempDir } from '@latchkey/db/testing';

/** A certificate and its private key, PEM, with the files they are written to. */
export interface Issued {
  cert: string;
  key: string;
  certFile: string;
  keyFile: string;
  /** SHA-256 fingerprint as node reports it (AB:CD:...) */
  fingerprint256: string;
}

/**
 * Test certificates made with the openssl CLI in a temporary directory: authorities, and certificates they
 * issue (P-256 keys, valid for two days).
 */
export class TestPki {
  /** under the test run's directory, which is removed when the run ends */
  readonly dir = testTempDir('pki');
  private serial = 1;

  /** Removes the directory and everything issued into it. */
  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  private openssl(args: string[]): void {
    execFileSync('openssl', args, { cwd: this.dir, stdio: ['ignore', 'ignore', 'pipe'] });
  }

  private read(name: string, keyName: string): Issued {
    const certFile = path.join(this.dir, name);
    const keyFile = path.join(this.dir, keyName);
    const cert = readFileSync(certFile, 'utf8');
    return { cert, key: readFileSync(keyFile, 'utf8'), certFile, keyFile, fingerprint256: new X509Certificate(cert).fingerprint256 };
  }

  /** A self-signed authority. */
  authority(name: string, subject: string): Issued {
    this.openssl([
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '2',
      '-subj',
      subject,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.pem`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ]);
    return this.read(`${name}.pem`, `${name}.key`);
  }

  /** A certificate issued by `issuer`: for a TLS server (`serverNames`) or a TLS client. */
  issue(name: string, issuer: Issued, subject: string, serverNames?: string[]): Issued {
    this.openssl([
      'req',
      '-new',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-subj',
      subject,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
    ]);
    const extensions = serverNames
      ? `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=${serverNames.join(',')}\n`
      : 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n';
    writeFileSync(path.join(this.dir, `${name}.ext`), extensions);
    this.openssl([
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      issuer.certFile,
      '-CAkey',
      issuer.keyFile,
      '-set_serial',
      String(this.serial++),
      '-days',
      '2',
      '-sha256',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.pem`,
    ]);
    return this.read(`${name}.pem`, `${name}.key`);
  }

  /** Writes a file into the directory; returns its path. */
  file(name: string, text: string): string {
    const file = path.join(this.dir, name);
    writeFileSync(file, text);
    return file;
  }
}
