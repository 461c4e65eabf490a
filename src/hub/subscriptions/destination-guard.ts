// Where a subscription may send: an http(s) URL without credentials, and (unless the operator allows it) not an address of the hub's own network.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { hubError } from '../../core/errors.js';

export const MAX_DESTINATION_LENGTH = 2000;

/** Loopback, private, link-local, shared (CGNAT), multicast and reserved ranges (API.md 12). */
const PRIVATE = new BlockList();
for (const [network, prefix] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4]] as const) PRIVATE.addSubnet(network, prefix, 'ipv4');
// Site-local (deprecated, still routable inside some networks) and the local-use NAT64 prefix (RFC 8215), whose
// embedded IPv4 address sits where its prefix length says: all of it is the operator's own network.
for (const [network, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['64:ff9b:1::', 48]] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv6');
}

/** The eight 16-bit groups of an IPv6 address (a dotted IPv4 tail counts as two). */
function groupsOf(address: string): number[] {
  const dotted = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  const text = dotted ? `${dotted[1]}${((Number(dotted[2]) << 8) | Number(dotted[3])).toString(16)}:${((Number(dotted[4]) << 8) | Number(dotted[5])).toString(16)}` : address;
  const [head, tail] = text.split('::');
  const parse = (part: string | undefined) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  const front = parse(head);
  const back = parse(tail);
  return tail === undefined ? front : [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

/**
 * The IPv4 address an IPv6 address carries to where a network may deliver it: IPv4-mapped (::ffff:0:0/96) and
 * IPv4-compatible (::/96) addresses, NAT64's well-known prefix (64:ff9b::/96, RFC 6052: on an IPv6-only network with
 * NAT64, `http://[64:ff9b::a9fe:a9fe]/` reaches 169.254.169.254) and 6to4 (2002::/16).
 */
function embeddedIpv4(address: string): string | undefined {
  const groups = groupsOf(address);
  const ipv4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  const zeros = (from: number, to: number) => groups.slice(from, to).every((group) => group === 0);
  if (zeros(0, 5) && (groups[5] === 0 || groups[5] === 0xffff)) return ipv4(groups[6], groups[7]);
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6)) return ipv4(groups[6], groups[7]);
  if (groups[0] === 0x2002) return ipv4(groups[1], groups[2]);
  return undefined;
}

/** An IPv6 address carrying an IPv4 address (`::ffff:127.0.0.1`, `64:ff9b::7f00:1`) is judged as the IPv4 address too. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  if (family === 4) return PRIVATE.check(address, 'ipv4');
  const carried = embeddedIpv4(address);
  return PRIVATE.check(address, 'ipv6') || (carried !== undefined && PRIVATE.check(carried, 'ipv4'));
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
