// The checkpoint of an import: which input it belongs to, how far the hub has acknowledged it, and the chunks sent past that point, written atomically when a chunk is sent and when one is acknowledged.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { ResumePoint } from './transfer-feature.js';

/**
 * A chunk sent after `next`. A `kill -9` loses the answers of the chunks in flight, not always their writes: the hub
 * may have committed them (or still be committing them). A resumed import asks the hub about each one with a read of
 * its last feature, and sends again only those it cannot show were committed.
 */
export interface SentChunk {
  /** Item indexes [start, end) of the input, skipped records included. */
  start: number;
  end: number;
  /** Where the input stands after item `end - 1`, when its reader says (GeoJSONSeq). */
  at?: ResumePoint;
  /** Features in the chunk, and bad records `--on-error skip` passed over. */
  features: number;
  failed: number;
  /** The hub answered it (behind a chunk that is still unanswered, or `next` would have moved over it). */
  acknowledged: boolean;
  /** The id of its last feature, and a digest of that feature's properties as sent (see committedMarker). */
  lastId?: string;
  lastDigest?: string;
  /** The hub's clock before the chunk was sent (its last `Date` header, ms): the chunk's writes carry a later `updatedAt`. */
  sentAfter?: number;
}

export interface Checkpoint {
  /** The input's fingerprint (size and hash of its start) and the space: a checkpoint of other input is not used. */
  input: string;
  space: string;
  /** Every item (feature or skipped record) before this index is acknowledged. */
  next: number;
  /** Where item `next` starts in the input, when its reader says (GeoJSONSeq: a resumed read starts there instead of counting lines up to it). */
  at?: ResumePoint;
  written: number;
  failed: number;
  /** The chunks after `next` sent and not yet moved over, in input order. */
  sent?: SentChunk[];
}

export function readCheckpoint(path: string): Checkpoint | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  return JSON.parse(text) as Checkpoint;
}

export function writeCheckpoint(path: string, checkpoint: Checkpoint): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(checkpoint) + '\n');
  renameSync(temporary, path);
}
