/**
 * Go's net.JoinHostPort, which the kubelet uses wherever it prints or dials
 * an address (probe URLs and dials, kubectl's port columns): a host with a
 * colon, an IPv6 address, goes in brackets.
 */

/** JoinHostPort: `host:port`, `[host]:port` when the host has a colon. */
export function joinHostPort(host: string, port: string | number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
