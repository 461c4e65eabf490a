// Which chunks a killed import had in flight did the hub commit: one read of each chunk's last feature, so that a resumed import does not send them again.
import { createHash } from 'node:crypto';
import { NS } from '../core/namespace-key.js';
import type { SentChunk } from './checkpoint.js';
import type { HubClient } from './hub-client.js';

/** A digest of a feature's properties without the hub's namespace: what the file says, compared with what the hub holds. */
export function propertiesDigest(properties: Record<string, unknown> | null | undefined): string {
  const own = { ...(properties ?? {}) };
  delete own[NS];
  return createHash('sha256').update(JSON.stringify(own)).digest('hex').slice(0, 24);
}

/**
 * Whether the hub holds the chunk's last feature as the chunk wrote it. A chunk applies whole or not at all, so its
 * last feature tells for all of it. Its properties must be those sent, and it must have been written after the chunk
 * was sent (by the hub's clock): a feature that held the same properties before the import does not count. Any doubt
 * (no answer, no such feature, no clock) counts as not committed: the chunk is sent again, which is always safe, its
 * ids replacing themselves; skipping one the hub did not commit would lose it.
 */
async function committed(client: HubClient, space: string, chunk: SentChunk): Promise<boolean> {
  if (chunk.acknowledged) return true;
  if (chunk.lastId === undefined || chunk.lastDigest === undefined || chunk.sentAfter === undefined) return false;
  try {
    const answer = await client.request('GET', `/hub/spaces/${encodeURIComponent(space)}/features/${encodeURIComponent(chunk.lastId)}`, undefined, { accept: 'application/geo+json' });
    const feature = JSON.parse(answer.text) as { properties?: Record<string, unknown> | null };
    const updatedAt = (feature.properties?.[NS] as { updatedAt?: unknown } | undefined)?.updatedAt;
    return typeof updatedAt === 'number' && updatedAt >= chunk.sentAfter && propertiesDigest(feature.properties) === chunk.lastDigest;
  } catch {
    return false;
  }
}

/** The chunks of `sent` the hub committed, asked for all at once. */
export async function committedChunks(client: HubClient, space: string, sent: readonly SentChunk[]): Promise<SentChunk[]> {
  const answers = await Promise.all(sent.map((chunk) => committed(client, space, chunk)));
  return sent.filter((_, index) => answers[index]);
}
