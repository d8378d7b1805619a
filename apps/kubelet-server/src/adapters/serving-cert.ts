/**
 * The kubelet API server's serving certificate, as the kubelet's
 * (cmd/kubelet/app/server.go InitializeTLS): the files given
 * (--tls-cert-file, --tls-private-key-file), else a self-signed pair
 * `kubelet.crt` / `kubelet.key` in the cert directory (--cert-dir), made
 * once with openssl for the node's name and IP and kept for the next boots.
 * The key is written mode 0600.
 *
 * Two instances of status-manager may make it at once: each writes its pair
 * beside the final names and links them into place; the one that loses the
 * race reads the winner's.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';

export interface ServingCertificate {
  cert: Buffer;
  key: Buffer;
  /** Where they were read from. */
  certFile: string;
  keyFile: string;
  /** Whether they were made now. */
  generated: boolean;
}

export function loadServingCertificate(opts: { certFile?: string; keyFile?: string; certDir: string; nodeName: string; nodeIP: string }): ServingCertificate {
  if (opts.certFile && opts.keyFile) return { cert: readFileSync(opts.certFile), key: readFileSync(opts.keyFile), certFile: opts.certFile, keyFile: opts.keyFile, generated: false };
  const certFile = join(opts.certDir, 'kubelet.crt');
  const keyFile = join(opts.certDir, 'kubelet.key');
  let generated = false;
  if (!existsSync(certFile) || !existsSync(keyFile)) generated = generate(opts.certDir, certFile, keyFile, opts.nodeName, opts.nodeIP);
  return { cert: readFileSync(certFile), key: readFileSync(keyFile), certFile, keyFile, generated };
}

/** A self-signed P-256 certificate for the node, valid a year; false when another instance made it first. */
function generate(dir: string, certFile: string, keyFile: string, nodeName: string, nodeIP: string): boolean {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = mkdtempSync(join(dir, '.kubelet-'));
  try {
    const sans = [`DNS:${nodeName}`, ...(isIP(nodeIP) ? [`IP:${nodeIP}`] : []), ...(nodeIP !== '127.0.0.1' ? ['IP:127.0.0.1'] : []), 'DNS:localhost'];
    const [crt, key] = [join(tmp, 'kubelet.crt'), join(tmp, 'kubelet.key')];
    try {
      execFileSync(
        'openssl',
        ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', crt, '-days', '365', '-subj', `/CN=${nodeName}@${Math.floor(Date.now() / 1000)}`, '-addext', `subjectAltName=${sans.join(',')}`, '-addext', 'extendedKeyUsage=serverAuth', '-addext', 'keyUsage=critical,digitalSignature,keyEncipherment'],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
    } catch (err) {
      const e = err as { stderr?: Buffer; message: string };
      throw new Error(`making the kubelet's self-signed serving certificate with openssl failed: ${e.stderr?.toString().trim() ?? e.message}`);
    }
    chmodSync(key, 0o600);
    // The key first: whoever links the certificate finds the key there already.
    try {
      linkSync(key, keyFile);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      waitFor(certFile);
      return false;
    }
    linkSync(crt, certFile);
    return true;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** The other instance links its certificate just after its key. */
function waitFor(file: string): void {
  for (let i = 0; i < 200 && !existsSync(file); i++) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
  if (!existsSync(file)) throw new Error(`${file}: its key was made by another instance, the certificate never came`);
}
