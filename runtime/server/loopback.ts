/**
 * Addresses only this machine can reach: `localhost`, the whole 127.0.0.0/8 block and `::1` (bracketed or not).
 * @example isLoopbackHost('127.0.0.2') // true
 */
export function isLoopbackHost(host: string): boolean {
  const name = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (name === 'localhost' || name === '::1' || name === '0:0:0:0:0:0:0:1') return true;
  const octets = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(name);
  return octets !== null && octets.slice(1).every((o) => Number(o) <= 255);
}
