// Where a subscription may send: an http(s) URL without credentials, and (unless the operator allows it) not an address of the hub's own network.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { hubError } from '../../core/errors.js';

export const MAX_DESTINATION_LENGTH = 2000;

/** Loopback, private, link-local, shared (CGNAT), multicast and reserved ranges (API.md 12). */
const PRIVATE = new BlockList();
for (const [network, prefix] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4]] as const) PRIVATE.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) PRIVATE.addSubnet(network, prefix, 'ipv6');

/** An IPv4 address mapped into IPv6 (`::ffff:127.0.0.1`) is judged as the IPv4 address it is. */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return PRIVATE.check(mapped[1], 'ipv4');
  const family = isIP(address);
  return family === 0 || PRIVATE.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

const refuse = (problem: string): never => { throw hubError('invalidSubscription', { problem }); };

/** The destination as a URL, or a 400 naming what is wrong with it. */
export function destinationUrl(given: unknown): URL {
  if (typeof given !== 'string' || given === '') return refuse('destination must be an http or https URL');
  if (given.length > MAX_DESTINATION_LENGTH) return refuse(`destination has ${given.length} characters; at most ${MAX_DESTINATION_LENGTH} are allowed`);
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    return refuse('destination is not a URL; give an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') refuse(`destination must be an http or https URL, not ${url.protocol.slice(0, 20)}`);
  // They would be answered back to whoever reads the subscription; receivers check the signature instead.
  if (url.username !== '' || url.password !== '') refuse('destination must not carry a user name or password; receivers verify the X-Hub-Signature-256 header instead');
  if (url.hash !== '') refuse('destination must not have a fragment (#…)');
  return url;
}

/** The host of a URL as an address when it is one (`[::1]` without its brackets). */
const literalAddress = (url: URL): string | undefined => {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(host) === 0 ? undefined : host;
};

const resolveAll = (host: string) => new Promise<LookupAddress[]>((resolve) => {
  dnsLookup(host, { all: true }, (error, addresses) => resolve(error ? [] : addresses));
});

/**
 * Refuses (400) a destination on a private address, by its literal address or by what its name resolves to now. A name
 * that does not resolve yet is accepted: each delivery checks the address it connects to again (guardedLookup).
 */
export async function checkReachable(url: URL, allowPrivate: boolean): Promise<void> {
  if (allowPrivate) return;
  const literal = literalAddress(url);
  const addresses = literal ? [literal] : (await resolveAll(url.hostname)).map((entry) => entry.address);
  if (addresses.some(isPrivateAddress)) {
    refuse('destination is on a loopback, private or link-local address, which the hub does not send to (the operator may allow it with HUB_ALLOW_PRIVATE_WEBHOOKS=true)');
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * The DNS lookup of a delivery's connection: the addresses it connects to are the ones checked, so a name that
 * resolves to a private address at delivery time (DNS rebinding) is refused like one that did at creation.
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '');
      if (!allowPrivate && addresses.some((entry) => isPrivateAddress(entry.address))) {
        return callback(Object.assign(new Error('the destination resolves to a private address'), { code: 'EPRIVATEADDRESS' }), '');
      }
      if (options.all) return callback(null, addresses);
      const [first] = addresses;
      return first ? callback(null, first.address, first.family) : callback(Object.assign(new Error('no address'), { code: 'ENOTFOUND' }), '');
    });
  };
}
